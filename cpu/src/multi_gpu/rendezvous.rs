//! The rendezvous of a job of one process per GPU, the way past one machine: every rank needs
//! the same NCCL unique id (`ncclGetUniqueId`, 128 bytes) before `ncclCommInitRank`, and rank 0
//! makes it. The ranks find rank 0 at `MASTER_ADDR:MASTER_PORT` and learn their place from
//! `RANK`, `WORLD_SIZE` and `LOCAL_RANK`, as torchrun sets them ([`RankEnv`]); so the same
//! program runs under `torchrun --nproc-per-node N --no-python`, on one machine or several.
//!
//! The protocol, over TCP: rank 0 listens on the first free port of `master_port ..
//! master_port + PORTS` ([`PORTS`]; under torchrun `MASTER_PORT` itself is its agent's store);
//! every other rank tries those ports in turn (retrying while rank 0 is not yet listening),
//! announces its rank and the job's size, and knows the rendezvous by its answer (the greeting
//! echoed); when every rank has arrived,
//! rank 0 checks that each announced the job's size and a rank of its own, and sends each the
//! id. A rank that never arrives, or announces another job, ends the rendezvous for every rank
//! with [`Error::Rendezvous`] within the timeout: rank 0 gives up at its deadline and closes
//! the connections it holds, so the waiting ranks see it at once, never a hang.
//!
//! No GPU is needed: the unique id is bytes here, and the tests run the ranks as threads.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Bytes of NCCL's unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const UNIQUE_ID_BYTES: usize = 128;

/// The variable torchrun sets when its agent's store holds `MASTER_PORT`.
pub const AGENT_STORE_ENV: &str = "TORCHELASTIC_USE_AGENT_STORE";

/// The rendezvous's greeting: "NCRV", protocol version 1.
const MAGIC: u32 = u32::from_le_bytes(*b"NCRV");
const VERSION: u32 = 2;
/// Ports rank 0 may listen on: the first free one of `master_port .. master_port + PORTS`
/// (a port of the range may be held by another service, torchrun's store among them); the
/// other ranks try each in turn and know the rendezvous by its answer to their greeting.
pub const PORTS: u16 = 16;
/// Rank 0's answer before the id: accepted, or refused (the rendezvous failed).
const ACCEPTED: u32 = 0;
const REFUSED: u32 = 1;

/// One rank's place in a job of one process per GPU, as torchrun describes it in the
/// environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankEnv {
    /// `RANK`: this process's rank, `0..world_size`.
    pub rank: usize,
    /// `WORLD_SIZE`: the number of ranks, at least 1.
    pub world_size: usize,
    /// `LOCAL_RANK`: this process's rank on its machine, the GPU it takes (0 when unset, as
    /// for a job started by hand on one GPU each).
    pub local_rank: usize,
    /// `MASTER_ADDR`: the host rank 0 listens on (a name or an address).
    pub master_addr: String,
    /// The TCP port rank 0 listens on: `MASTER_PORT`, or `MASTER_PORT + 1` under torchrun,
    /// whose agent holds a store of its own on `MASTER_PORT` (it sets
    /// `TORCHELASTIC_USE_AGENT_STORE=True` for its workers).
    pub master_port: u16,
}

impl RankEnv {
    /// This process's place, from torchrun's variables in the process environment.
    ///
    /// # Errors
    /// As [`from_lookup`](Self::from_lookup).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The place `lookup` describes (`lookup(name)`: the variable's value, `None` if unset).
    ///
    /// # Errors
    /// [`Error::RankEnvironment`] naming the first variable that is unset (all but
    /// `LOCAL_RANK`), not a number, or out of range (`RANK >= WORLD_SIZE`, `WORLD_SIZE` 0,
    /// `MASTER_PORT` 0 or past 65535, `MASTER_ADDR` empty).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let number = |variable: &'static str, required: bool| -> Result<Option<usize>> {
            match lookup(variable) {
                None if !required => Ok(None),
                None => Err(Error::RankEnvironment {
                    variable,
                    value: None,
                    requirement: "must be set (torchrun sets it for every rank)",
                }),
                Some(value) => match value.trim().parse::<usize>() {
                    Ok(n) => Ok(Some(n)),
                    Err(_) => Err(Error::RankEnvironment {
                        variable,
                        value: Some(value),
                        requirement: "must be a non-negative integer",
                    }),
                },
            }
        };
        let world_size = number("WORLD_SIZE", true)?.unwrap_or(0);
        if world_size == 0 {
            return Err(Error::RankEnvironment {
                variable: "WORLD_SIZE",
                value: Some(world_size.to_string()),
                requirement: "must be at least 1",
            });
        }
        let rank = number("RANK", true)?.unwrap_or(0);
        if rank >= world_size {
            return Err(Error::RankEnvironment {
                variable: "RANK",
                value: Some(rank.to_string()),
                requirement: "must be below WORLD_SIZE",
            });
        }
        let local_rank = number("LOCAL_RANK", false)?.unwrap_or(0);
        let port = number("MASTER_PORT", true)?.unwrap_or(0);
        let master_port = u16::try_from(port)
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| Error::RankEnvironment {
                variable: "MASTER_PORT",
                value: Some(port.to_string()),
                requirement: "must be a TCP port, 1 to 65535",
            })?;
        // torchrun's agent holds its own store on MASTER_PORT and says so to its workers
        // (TORCHELASTIC_USE_AGENT_STORE=True): the rendezvous then takes the next port.
        let agent_store =
            lookup(AGENT_STORE_ENV).is_some_and(|v| matches!(v.trim(), "True" | "true" | "1"));
        let master_port = if agent_store {
            master_port
                .checked_add(1)
                .ok_or_else(|| Error::RankEnvironment {
                    variable: "MASTER_PORT",
                    value: Some(port.to_string()),
                    requirement: "must be below 65535 under torchrun (its agent's store holds \
                                  MASTER_PORT; the rendezvous takes MASTER_PORT + 1)",
                })?
        } else {
            master_port
        };
        let master_addr = lookup("MASTER_ADDR").unwrap_or_default();
        if master_addr.trim().is_empty() {
            return Err(Error::RankEnvironment {
                variable: "MASTER_ADDR",
                value: lookup("MASTER_ADDR"),
                requirement: "must name the host of rank 0",
            });
        }
        Ok(Self {
            rank,
            world_size,
            local_rank,
            master_addr: master_addr.trim().to_string(),
            master_port,
        })
    }

    /// `MASTER_ADDR:MASTER_PORT`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.master_addr, self.master_port)
    }

    /// Every rank's copy of the job's unique id: rank 0 listens on `MASTER_PORT` (every
    /// interface) and serves `make_id()`, made once every rank has arrived; the others fetch
    /// it. See the [module docs](self).
    ///
    /// # Errors
    /// [`Error::Rendezvous`] if a rank does not arrive or rank 0 does not answer within
    /// `timeout`, a peer announces another job, or a socket fails; `make_id`'s error.
    pub fn exchange_unique_id(
        &self,
        timeout: Duration,
        make_id: impl FnOnce() -> Result<[u8; UNIQUE_ID_BYTES]>,
    ) -> Result<[u8; UNIQUE_ID_BYTES]> {
        if self.world_size == 1 {
            return make_id();
        }
        if self.rank == 0 {
            let listener = self.bind()?;
            serve_unique_id(&listener, self, timeout, make_id)
        } else {
            fetch_unique_id(self, timeout)
        }
    }

    /// Rank 0's listener: the first port of [`PORTS`] from `master_port` that is free.
    fn bind(&self) -> Result<TcpListener> {
        let mut last = None;
        for port in self.ports() {
            match TcpListener::bind(("0.0.0.0", port)) {
                Ok(listener) => return Ok(listener),
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
                Err(e) => return Err(self.failed(io_failure(&e))),
            }
        }
        let e = last.unwrap_or_else(|| std::io::ErrorKind::AddrInUse.into());
        Err(self.failed(io_failure(&e)))
    }

    /// The ports rank 0 may listen on, in order.
    fn ports(&self) -> impl Iterator<Item = u16> {
        let first = self.master_port;
        (0..PORTS).filter_map(move |k| first.checked_add(k))
    }

    fn failed(&self, failure: RendezvousFailure) -> Error {
        Error::Rendezvous {
            rank: self.rank,
            world_size: self.world_size,
            address: self.address(),
            failure,
        }
    }
}

fn io_failure(e: &std::io::Error) -> RendezvousFailure {
    RendezvousFailure::Io {
        kind: e.kind(),
        message: e.to_string(),
    }
}

/// Rank 0's side on `listener`: waits until the `env.world_size - 1` other ranks have
/// connected and announced themselves (until `timeout`), then sends each `make_id()`. On any
/// failure every connection is refused (or closed) before the error returns.
///
/// # Errors
/// As [`RankEnv::exchange_unique_id`].
pub fn serve_unique_id(
    listener: &TcpListener,
    env: &RankEnv,
    timeout: Duration,
    make_id: impl FnOnce() -> Result<[u8; UNIQUE_ID_BYTES]>,
) -> Result<[u8; UNIQUE_ID_BYTES]> {
    let deadline = Instant::now() + timeout;
    let mut peers: Vec<(usize, TcpStream)> = Vec::with_capacity(env.world_size - 1);
    let refuse_all = |peers: &mut Vec<(usize, TcpStream)>| {
        for (_, stream) in peers.iter_mut() {
            let _ = stream.write_all(&REFUSED.to_le_bytes());
        }
    };
    listener
        .set_nonblocking(true)
        .map_err(|e| env.failed(io_failure(&e)))?;
    while peers.len() + 1 < env.world_size {
        let now = Instant::now();
        if now >= deadline {
            refuse_all(&mut peers);
            return Err(env.failed(RendezvousFailure::Timeout {
                waited: timeout,
                arrived: peers.len() + 1,
            }));
        }
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(e) => {
                refuse_all(&mut peers);
                return Err(env.failed(io_failure(&e)));
            }
        };
        let hello = stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_read_timeout(Some(deadline - now)))
            .and_then(|()| read_words::<4>(&mut stream));
        let [magic, version, peer_rank, peer_world_size] = match hello {
            Ok(words) => words.map(|w| w as usize),
            Err(_) => continue, // not a rank of this job (a port probe): ignore it
        };
        if magic != MAGIC as usize || version != VERSION as usize {
            let _ = stream.write_all(&REFUSED.to_le_bytes());
            continue;
        }
        // The greeting's answer: this port is the rendezvous (the rank stops searching).
        if stream.write_all(&MAGIC.to_le_bytes()).is_err() {
            continue;
        }
        let failure =
            if peer_world_size != env.world_size || peer_rank == 0 || peer_rank >= env.world_size {
                Some(RendezvousFailure::Mismatch {
                    peer_rank,
                    peer_world_size,
                })
            } else if peers.iter().any(|(r, _)| *r == peer_rank) {
                Some(RendezvousFailure::DuplicateRank { peer_rank })
            } else {
                None
            };
        if let Some(failure) = failure {
            let _ = stream.write_all(&REFUSED.to_le_bytes());
            refuse_all(&mut peers);
            return Err(env.failed(failure));
        }
        peers.push((peer_rank, stream));
    }
    let id = match make_id() {
        Ok(id) => id,
        Err(e) => {
            refuse_all(&mut peers);
            return Err(e);
        }
    };
    for (_, stream) in &mut peers {
        stream
            .write_all(&ACCEPTED.to_le_bytes())
            .and_then(|()| stream.write_all(&id))
            .map_err(|e| env.failed(io_failure(&e)))?;
    }
    Ok(id)
}

/// A rank's side: connects to rank 0 (retrying until `timeout` while nothing listens),
/// announces `env.rank` and `env.world_size`, and waits for the id.
///
/// # Errors
/// As [`RankEnv::exchange_unique_id`].
pub fn fetch_unique_id(env: &RankEnv, timeout: Duration) -> Result<[u8; UNIQUE_ID_BYTES]> {
    let deadline = Instant::now() + timeout;
    let timed_out = || {
        env.failed(RendezvousFailure::Timeout {
            waited: timeout,
            arrived: 0,
        })
    };
    let hello = [MAGIC, VERSION, env.rank as u32, env.world_size as u32];
    let bytes: Vec<u8> = hello.iter().flat_map(|w| w.to_le_bytes()).collect();
    // Each port of the range in turn, until one answers the greeting as the rendezvous does.
    let greet = |port: u16, remaining: Duration| -> Option<TcpStream> {
        let addresses = (env.master_addr.as_str(), port).to_socket_addrs().ok()?;
        let wait = remaining.min(Duration::from_millis(500));
        addresses.into_iter().find_map(|a| {
            let mut stream = TcpStream::connect_timeout(&a, wait).ok()?;
            stream.write_all(&bytes).ok()?;
            stream
                .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
                .ok()?;
            let answer = read_words::<1>(&mut stream).ok()?;
            (answer[0] == MAGIC).then_some(stream)
        })
    };
    let mut stream = 'search: loop {
        for port in env.ports() {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(timed_out());
            }
            if let Some(stream) = greet(port, remaining) {
                break 'search stream;
            }
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(Duration::from_millis(20).min(remaining));
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    stream
        .set_read_timeout(Some(remaining.max(Duration::from_millis(1))))
        .map_err(|e| env.failed(io_failure(&e)))?;
    let answer = read_words::<1>(&mut stream).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
            env.failed(RendezvousFailure::Refused)
        }
        _ => env.failed(io_failure(&e)),
    })?;
    if answer[0] != ACCEPTED {
        return Err(env.failed(RendezvousFailure::Refused));
    }
    let mut id = [0u8; UNIQUE_ID_BYTES];
    stream.read_exact(&mut id).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
        _ => env.failed(RendezvousFailure::Refused),
    })?;
    Ok(id)
}

/// `N` little-endian `u32`s from `stream`.
fn read_words<const N: usize>(stream: &mut TcpStream) -> std::io::Result<[u32; N]> {
    let mut words = [0u32; N];
    for w in &mut words {
        let mut b = [0u8; 4];
        stream.read_exact(&mut b)?;
        *w = u32::from_le_bytes(b);
    }
    Ok(words)
}

/// Why a rendezvous failed ([`Error::Rendezvous`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RendezvousFailure {
    /// Not every rank arrived (rank 0), or rank 0 did not answer (the others), within the
    /// timeout.
    Timeout {
        /// The timeout.
        waited: std::time::Duration,
        /// Ranks that had arrived, rank 0 included (rank 0's count; 0 where unknown).
        arrived: usize,
    },
    /// A peer announced a job of another size, or a rank outside it.
    Mismatch {
        /// The rank the peer announced.
        peer_rank: usize,
        /// The number of ranks the peer announced.
        peer_world_size: usize,
    },
    /// Two peers announced the same rank.
    DuplicateRank {
        /// The rank announced twice.
        peer_rank: usize,
    },
    /// Rank 0 closed the connection or refused this rank (another rank failed the rendezvous).
    Refused,
    /// A peer that does not speak the rendezvous's protocol.
    Protocol,
    /// A socket operation failed.
    Io {
        /// The kind of I/O error.
        kind: std::io::ErrorKind,
        /// Its text.
        message: String,
    },
}

impl std::fmt::Display for RendezvousFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Timeout { waited, arrived } if *arrived > 0 => write!(
                f,
                "only {arrived} ranks arrived within {:.1} s",
                waited.as_secs_f64()
            ),
            Self::Timeout { waited, .. } => {
                write!(
                    f,
                    "rank 0 did not answer within {:.1} s",
                    waited.as_secs_f64()
                )
            }
            Self::Mismatch {
                peer_rank,
                peer_world_size,
            } => write!(
                f,
                "a peer announced rank {peer_rank} of a job of {peer_world_size} ranks"
            ),
            Self::DuplicateRank { peer_rank } => write!(f, "rank {peer_rank} arrived twice"),
            Self::Refused => write!(f, "rank 0 ended the rendezvous (another rank failed it)"),
            Self::Protocol => write!(f, "a peer that does not speak this rendezvous's protocol"),
            Self::Io { kind, message } => write!(f, "{message} ({kind:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    const FULL: &[(&str, &str)] = &[
        ("RANK", "2"),
        ("WORLD_SIZE", "4"),
        ("LOCAL_RANK", "2"),
        ("MASTER_ADDR", "127.0.0.1"),
        ("MASTER_PORT", "29500"),
    ];

    #[test]
    fn torchrun_variables_give_the_rank() {
        let env = RankEnv::from_lookup(lookup(FULL)).unwrap();
        assert_eq!(
            env,
            RankEnv {
                rank: 2,
                world_size: 4,
                local_rank: 2,
                master_addr: "127.0.0.1".into(),
                master_port: 29500,
            }
        );
        assert_eq!(env.address(), "127.0.0.1:29500");
    }

    #[test]
    fn under_torchrun_s_agent_store_the_next_port() {
        let mut vars = FULL.to_vec();
        vars.push((AGENT_STORE_ENV, "True"));
        let env = RankEnv::from_lookup(lookup(&vars)).unwrap();
        assert_eq!(env.master_port, 29501);
        vars[4] = ("MASTER_PORT", "65535");
        let e = RankEnv::from_lookup(lookup(&vars)).unwrap_err();
        assert!(
            matches!(&e, Error::RankEnvironment { variable: "MASTER_PORT", value: Some(v), .. } if v == "65535"),
            "{e}"
        );
    }

    #[test]
    fn each_bad_variable_is_named_with_its_value() {
        let with = |name: &str, value: Option<&str>| {
            let mut vars: Vec<(&str, &str)> =
                FULL.iter().filter(|(k, _)| *k != name).copied().collect();
            if let Some(v) = value {
                vars.push((name, v));
            }
            RankEnv::from_lookup(lookup(&vars))
        };
        let cases: &[(&str, Option<&str>)] = &[
            ("RANK", None),
            ("RANK", Some("two")),
            ("RANK", Some("4")),
            ("WORLD_SIZE", None),
            ("WORLD_SIZE", Some("0")),
            ("WORLD_SIZE", Some("-1")),
            ("MASTER_PORT", None),
            ("MASTER_PORT", Some("0")),
            ("MASTER_PORT", Some("70000")),
            ("MASTER_ADDR", None),
            ("MASTER_ADDR", Some(" ")),
            ("LOCAL_RANK", Some("x")),
        ];
        for &(name, value) in cases {
            match with(name, value) {
                Err(Error::RankEnvironment { variable, .. }) => {
                    assert_eq!(variable, name, "{value:?}")
                }
                other => panic!("{name}={value:?}: {other:?}"),
            }
        }
        // LOCAL_RANK may be unset.
        assert_eq!(with("LOCAL_RANK", None).unwrap().local_rank, 0);
    }

    /// `world` ranks as threads: rank 0 on an ephemeral port, the others fetching from it
    /// (`present` says which ranks take part; `world_of` the size each announces).
    fn run_job(
        world: usize,
        present: impl Fn(usize) -> bool,
        world_of: impl Fn(usize) -> usize,
        timeout: Duration,
    ) -> Vec<Option<Result<[u8; UNIQUE_ID_BYTES]>>> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let env = |rank: usize, world_size: usize| RankEnv {
            rank,
            world_size,
            local_rank: rank,
            master_addr: "127.0.0.1".into(),
            master_port: port,
        };
        let id: [u8; UNIQUE_ID_BYTES] = std::array::from_fn(|i| (i * 7 + 3) as u8);
        std::thread::scope(|s| {
            let server = s.spawn(|| serve_unique_id(&listener, &env(0, world), timeout, || Ok(id)));
            let clients: Vec<_> = (1..world)
                .map(|rank| {
                    let e = env(rank, world_of(rank));
                    let here = present(rank);
                    s.spawn(move || here.then(|| fetch_unique_id(&e, timeout)))
                })
                .collect();
            let mut out = vec![Some(server.join().unwrap())];
            out.extend(clients.into_iter().map(|c| c.join().unwrap()));
            out
        })
    }

    #[test]
    fn every_rank_gets_rank_0s_id() {
        for world in [2, 3, 8] {
            let results = run_job(world, |_| true, |_| world, Duration::from_secs(20));
            let id = results[0].as_ref().unwrap().as_ref().unwrap();
            for (rank, r) in results.iter().enumerate() {
                assert_eq!(
                    r.as_ref().unwrap().as_ref().unwrap(),
                    id,
                    "rank {rank} of {world}"
                );
            }
        }
    }

    #[test]
    fn a_busy_master_port_moves_the_rendezvous_to_the_next() {
        // A service on MASTER_PORT that accepts and never answers (as torchrun's store would
        // not answer the greeting): rank 0 takes a later port of the range, the others find it.
        let busy = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = busy.local_addr().unwrap().port();
        let env = |rank: usize| RankEnv {
            rank,
            world_size: 3,
            local_rank: rank,
            master_addr: "127.0.0.1".into(),
            master_port: port,
        };
        let id: [u8; UNIQUE_ID_BYTES] = std::array::from_fn(|i| i as u8 ^ 0x5a);
        let timeout = Duration::from_secs(20);
        let got: Vec<_> = std::thread::scope(|s| {
            let ranks: Vec<_> = (0..3)
                .map(|r| {
                    let e = env(r);
                    s.spawn(move || e.exchange_unique_id(timeout, || Ok(id)))
                })
                .collect();
            ranks.into_iter().map(|h| h.join().unwrap()).collect()
        });
        drop(busy);
        for (rank, r) in got.iter().enumerate() {
            assert_eq!(r.as_ref().unwrap(), &id, "rank {rank}");
        }
    }

    #[test]
    fn a_rank_that_never_arrives_ends_every_rank_within_the_timeout() {
        let timeout = Duration::from_millis(600);
        let start = Instant::now();
        let results = run_job(4, |rank| rank != 2, |_| 4, timeout);
        assert!(start.elapsed() < timeout * 4, "took {:?}", start.elapsed());
        match &results[0] {
            Some(Err(Error::Rendezvous {
                failure: RendezvousFailure::Timeout { arrived: 3, .. },
                ..
            })) => {}
            other => panic!("rank 0: {other:?}"),
        }
        for rank in [1, 3] {
            match &results[rank] {
                Some(Err(Error::Rendezvous {
                    rank: r, failure, ..
                })) => {
                    assert_eq!(*r, rank);
                    assert!(
                        matches!(
                            failure,
                            RendezvousFailure::Refused | RendezvousFailure::Timeout { .. }
                        ),
                        "{failure:?}"
                    );
                }
                other => panic!("rank {rank}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_rank_of_another_job_fails_the_rendezvous() {
        let results = run_job(
            3,
            |_| true,
            |rank| if rank == 2 { 5 } else { 3 },
            Duration::from_secs(2),
        );
        match &results[0] {
            Some(Err(Error::Rendezvous {
                failure:
                    RendezvousFailure::Mismatch {
                        peer_rank: 2,
                        peer_world_size: 5,
                    },
                ..
            })) => {}
            other => panic!("rank 0: {other:?}"),
        }
        assert!(
            results[1..]
                .iter()
                .all(|r| matches!(r, Some(Err(Error::Rendezvous { .. })))),
            "{results:?}"
        );
    }

    #[test]
    fn no_rank_0_is_a_timeout_not_a_hang() {
        let port = {
            let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
            l.local_addr().unwrap().port()
        };
        let env = RankEnv {
            rank: 1,
            world_size: 2,
            local_rank: 1,
            master_addr: "127.0.0.1".into(),
            master_port: port,
        };
        let timeout = Duration::from_millis(300);
        let start = Instant::now();
        let r = fetch_unique_id(&env, timeout);
        assert!(start.elapsed() < Duration::from_secs(3));
        assert!(
            matches!(
                r,
                Err(Error::Rendezvous {
                    failure: RendezvousFailure::Timeout { .. },
                    ..
                })
            ),
            "{r:?}"
        );
    }

    #[test]
    fn one_rank_makes_its_own_id() {
        let env = RankEnv {
            rank: 0,
            world_size: 1,
            local_rank: 0,
            master_addr: "localhost".into(),
            master_port: 1,
        };
        let id = env.exchange_unique_id(Duration::from_millis(10), || Ok([9; UNIQUE_ID_BYTES]));
        assert_eq!(id.unwrap(), [9; UNIQUE_ID_BYTES]);
    }
}
