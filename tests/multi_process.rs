//! Multi-process NCCL (`cpu::multi_gpu::rank`): each trial runs a job of N ranks, each a
//! process of this executable on its own GPU (`LOCAL_RANK`), found through the rendezvous at
//! `MASTER_ADDR:MASTER_PORT` as torchrun would start them, and passes when every rank exits as
//! expected.
//!
//! - `ranks_N::collectives`: the five collectives over several types and operators at odd
//!   counts (1, 7, 4097, 1000003), poisoned outputs, each against the CPU's result of every
//!   rank's input; the argument checks; a split communicator; `agree` catching ranks that
//!   disagree; the all-reduce over peer memory (`PeerAllReduce`) over 300 calls queued back to
//!   back, every result bit-exact against the rank-order sum.
//! - `ranks_N::a_rank_exits_early`: the last rank exits after making the communicator; every
//!   other rank's all-reduce must end in an error (the watchdog's timeout, or NCCL's own) within
//!   the 10 s timeout, the whole job within 60 s, and later calls must be refused; then the
//!   all-reduce over peer memory (on a communicator split before the exit) must end in
//!   `CollectiveTimeout` within the timeout, its value NaN.
//!
//! Trials of N ranks are listed where at least N GPUs are visible (a line says which were
//! left out); with no GPU (or no NCCL) they are listed as ignored. One trial runs at a time: each
//! takes N GPUs.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cpu::Error;
use cpu::Gpu;
use cpu::multi_gpu::rank::{PeerAllReduce, RankCommunicator, ReduceOp};
use cpu::multi_gpu::rendezvous::RankEnv;
use libtest_mimic::{Arguments, Failed, Trial};

/// The variable that makes this executable one rank of a trial's job (the case's name).
const CASE_ENV: &str = "LAB_MULTI_PROCESS_CASE";
/// The exit status of the rank that leaves early.
const EARLY_EXIT: i32 = 17;
/// The longest a job may take before the parent kills it and fails.
const JOB_DEADLINE: Duration = Duration::from_secs(60);
/// What every output holds before a collective.
const POISON: u32 = 0x7fc0_5a5a;

fn main() {
    // SAFETY: the first statement of main: no other thread exists yet to touch the environment.
    unsafe { cpu::multi_gpu::keep_nvls_off() };
    if let Ok(case) = std::env::var(CASE_ENV) {
        std::process::exit(worker(&case));
    }
    let args = Arguments::from_args();
    let gpus = Gpu::device_count().unwrap_or(0);
    let runnable = gpus > 0 && cpu::multi_gpu::nccl_available();
    let mut trials = Vec::new();
    for ranks in [2usize, 4] {
        if runnable && gpus < ranks {
            eprintln!("multi_process: {gpus} GPU(s) visible: the {ranks}-rank trials need {ranks}");
            continue;
        }
        for case in ["collectives", "a_rank_exits_early"] {
            trials.push(
                Trial::test(format!("ranks_{ranks}::{case}"), move || {
                    run_job(ranks, case)
                })
                .with_ignored_flag(!runnable),
            );
        }
    }
    if !runnable {
        eprintln!(
            "multi_process: no CUDA device or no NCCL: the multi-process trials are reported as ignored"
        );
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Starts `ranks` processes of this executable as ranks of one job running `case`, waits for
/// them (at most [`JOB_DEADLINE`]) and checks each one's exit status.
fn run_job(ranks: usize, case: &'static str) -> Result<(), Failed> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let logs: Vec<PathBuf> = (0..ranks)
        .map(|r| {
            std::env::temp_dir().join(format!(
                "multi_process_{}_{port}_{r}.log",
                std::process::id()
            ))
        })
        .collect();
    let mut children: Vec<Child> = Vec::with_capacity(ranks);
    for (rank, log) in logs.iter().enumerate() {
        let file = std::fs::File::create(log).map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&exe)
            .env(CASE_ENV, case)
            .env("RANK", rank.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("WORLD_SIZE", ranks.to_string())
            .env("LOCAL_WORLD_SIZE", ranks.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string())
            .env("GPU_LAB_SEED", lab_tests::base_seed().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err))
            .spawn()
            .map_err(|e| format!("cannot start rank {rank}: {e}"))?;
        children.push(child);
    }
    let started = Instant::now();
    let mut status = vec![None; ranks];
    while status.iter().any(Option::is_none) && started.elapsed() < JOB_DEADLINE {
        for (s, c) in status.iter_mut().zip(children.iter_mut()) {
            if s.is_none() {
                *s = c.try_wait().map_err(|e| e.to_string())?;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = started.elapsed();
    for (s, c) in status.iter().zip(children.iter_mut()) {
        if s.is_none() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    let mut problems = Vec::new();
    for (rank, (s, log)) in status.iter().zip(&logs).enumerate() {
        let expected = if case == "a_rank_exits_early" && rank == ranks - 1 {
            EARLY_EXIT
        } else {
            0
        };
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let _ = std::fs::remove_file(log);
        match s.and_then(|s| s.code()) {
            Some(code) if code == expected => {}
            other => problems.push(format!(
                "rank {rank}: exit status {other:?} (expected {expected}) after {elapsed:.1?}; its \
                 output:\n{}",
                text.trim_end()
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// One rank's side of `case`: 0 if every check held, else 1 with the reason on stderr.
fn worker(case: &str) -> i32 {
    let result = match case {
        "collectives" => collectives(),
        "a_rank_exits_early" => a_rank_exits_early(),
        other => Err(format!("unknown case {other}")),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{case}: {e}");
            1
        }
    }
}

type Check = Result<(), String>;

fn err(e: Error) -> String {
    e.to_string()
}

/// Rank `rank`'s input element `i` of collective `salt`: a small integer in -8..=8 from a hash,
/// so that sums, maxima and products of a few ranks are exact in every type.
fn value(salt: u64, rank: usize, i: usize) -> i64 {
    let mut h = salt ^ 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(rank as u64 + 1) ^ (i as u64);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h % 17) as i64 - 8
}

/// The element types the trials run, with their conversion from the small integers.
trait Elem: cpu::multi_gpu::rank::NcclType + PartialEq + std::fmt::Debug + Default {
    fn of(v: i64) -> Self;
    fn poison() -> Self;
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
    fn avg(sum: Self, n: usize) -> Self;
}

macro_rules! elem_int {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn of(v: i64) -> Self { v as $t }
            fn poison() -> Self { POISON as $t }
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => a.wrapping_add(b),
                    ReduceOp::Prod => a.wrapping_mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
            fn avg(sum: Self, n: usize) -> Self { sum / n as $t }
        }
    )*};
}
elem_int!(i8, u8, i32, u32, i64, u64);

macro_rules! elem_float {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn of(v: i64) -> Self { v as $t }
            fn poison() -> Self { <$t>::from_bits(POISON as _) }
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => a + b,
                    ReduceOp::Prod => a * b,
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
            fn avg(sum: Self, n: usize) -> Self { sum / n as $t }
        }
    )*};
}
elem_float!(f32, f64);

/// Every rank's input of collective `salt`, `n` elements each.
fn inputs<T: Elem>(salt: u64, world: usize, n: usize) -> Vec<Vec<T>> {
    (0..world)
        .map(|r| (0..n).map(|i| T::of(value(salt, r, i))).collect())
        .collect()
}

/// The elementwise `op` of every rank's input, in rank order.
fn reduced<T: Elem>(all: &[Vec<T>], op: ReduceOp) -> Vec<T> {
    let mut out = all[0].clone();
    for x in &all[1..] {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = T::combine(op, *o, v);
        }
    }
    if op == ReduceOp::Avg {
        out.iter_mut().for_each(|o| *o = T::avg(*o, all.len()));
    }
    out
}

fn same<T: Elem>(what: &str, got: &[T], want: &[T]) -> Check {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None if got.len() == want.len() => Ok(()),
        None => Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            want.len()
        )),
        Some(i) => Err(format!(
            "{what}: element {i} is {:?}, expected {:?}",
            got[i], want[i]
        )),
    }
}

fn all_reduce_case<T: Elem>(comm: &RankCommunicator, salt: u64, n: usize, op: ReduceOp) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let all = inputs::<T>(salt, w, n);
    let want = reduced(&all, op);
    let what = format!("all-reduce {op:?} of {n} {}", std::any::type_name::<T>());
    let input = gpu.upload(&all[r]).map_err(err)?;
    let mut output = gpu.upload(&vec![T::poison(); n]).map_err(err)?;
    comm.all_reduce(&input, &mut output, op).map_err(err)?;
    let mut in_place = gpu.upload(&all[r]).map_err(err)?;
    comm.all_reduce_in_place(&mut in_place, op).map_err(err)?;
    comm.synchronize(&what).map_err(err)?;
    same(&what, &gpu.download(&output, &what).map_err(err)?, &want)?;
    same(
        &format!("{what} (in place)"),
        &gpu.download(&in_place, &what).map_err(err)?,
        &want,
    )
}

fn reduce_case<T: Elem>(comm: &RankCommunicator, salt: u64, n: usize, root: usize) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let all = inputs::<T>(salt, w, n);
    let what = format!("reduce (sum) of {n} to rank {root}");
    let input = gpu.upload(&all[r]).map_err(err)?;
    let mut output = gpu.upload(&vec![T::poison(); n]).map_err(err)?;
    comm.reduce(&input, &mut output, ReduceOp::Sum, root)
        .map_err(err)?;
    comm.synchronize(&what).map_err(err)?;
    let want = if r == root {
        reduced(&all, ReduceOp::Sum)
    } else {
        vec![T::poison(); n]
    };
    same(&what, &gpu.download(&output, &what).map_err(err)?, &want)
}

fn broadcast_case<T: Elem>(comm: &RankCommunicator, salt: u64, n: usize, root: usize) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let all = inputs::<T>(salt, w, n);
    let what = format!("broadcast of {n} from rank {root}");
    let mut buffer = gpu.upload(&all[r]).map_err(err)?;
    comm.broadcast(&mut buffer, root).map_err(err)?;
    comm.synchronize(&what).map_err(err)?;
    same(
        &what,
        &gpu.download(&buffer, &what).map_err(err)?,
        &all[root],
    )
}

fn reduce_scatter_case<T: Elem>(
    comm: &RankCommunicator,
    salt: u64,
    n: usize,
    op: ReduceOp,
) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let all = inputs::<T>(salt, w, n * w);
    let what = format!("reduce-scatter {op:?} of {n} per rank");
    let input = gpu.upload(&all[r]).map_err(err)?;
    let mut output = gpu.upload(&vec![T::poison(); n]).map_err(err)?;
    comm.reduce_scatter(&input, &mut output, op).map_err(err)?;
    comm.synchronize(&what).map_err(err)?;
    let want = reduced(&all, op)[r * n..(r + 1) * n].to_vec();
    same(&what, &gpu.download(&output, &what).map_err(err)?, &want)
}

fn all_gather_case<T: Elem>(comm: &RankCommunicator, salt: u64, n: usize) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let all = inputs::<T>(salt, w, n);
    let what = format!("all-gather of {n} per rank");
    let input = gpu.upload(&all[r]).map_err(err)?;
    let mut output = gpu.upload(&vec![T::poison(); n * w]).map_err(err)?;
    comm.all_gather(&input, &mut output).map_err(err)?;
    comm.synchronize(&what).map_err(err)?;
    same(
        &what,
        &gpu.download(&output, &what).map_err(err)?,
        &all.concat(),
    )
}

fn collectives() -> Check {
    let comm = RankCommunicator::from_env().map_err(err)?;
    let w = comm.world_size();
    let seed = lab_tests::base_seed();
    for (k, &n) in [1usize, 7, 4097, 1_000_003].iter().enumerate() {
        let salt = seed ^ ((k as u64) << 56);
        all_reduce_case::<f32>(&comm, salt ^ 1, n, ReduceOp::Sum)?;
        all_reduce_case::<f64>(&comm, salt ^ 2, n, ReduceOp::Min)?;
        all_reduce_case::<i32>(&comm, salt ^ 3, n, ReduceOp::Max)?;
        all_reduce_case::<u32>(&comm, salt ^ 4, n, ReduceOp::Prod)?;
        all_reduce_case::<i64>(&comm, salt ^ 5, n, ReduceOp::Sum)?;
        all_reduce_case::<u8>(&comm, salt ^ 6, n, ReduceOp::Max)?;
        all_reduce_case::<i8>(&comm, salt ^ 7, n, ReduceOp::Min)?;
        all_reduce_case::<f32>(&comm, salt ^ 8, n, ReduceOp::Avg)?;
        reduce_case::<f64>(&comm, salt ^ 9, n, w - 1)?;
        reduce_case::<i32>(&comm, salt ^ 10, n, 0)?;
        broadcast_case::<u64>(&comm, salt ^ 11, n, 1 % w)?;
        broadcast_case::<f32>(&comm, salt ^ 12, n, 0)?;
        reduce_scatter_case::<f32>(&comm, salt ^ 13, n, ReduceOp::Sum)?;
        reduce_scatter_case::<i64>(&comm, salt ^ 14, n, ReduceOp::Max)?;
        all_gather_case::<f64>(&comm, salt ^ 15, n)?;
        all_gather_case::<u8>(&comm, salt ^ 16, n)?;
    }
    argument_checks(&comm)?;
    // agree: every rank passes its rank, so every rank must see the whole range.
    match comm.agree("the rank (a value that differs)", comm.rank() as u64) {
        Err(Error::RanksDisagree { min: 0, max, .. }) if max == w as u64 - 1 => {}
        other => return Err(format!("agree on differing values: {other:?}")),
    }
    comm.agree("the world size", w as u64).map_err(err)?;
    let gathered = comm.gather_host(&[comm.rank() as f64 + 0.5]).map_err(err)?;
    let want: Vec<Vec<f64>> = (0..w).map(|r| vec![r as f64 + 0.5]).collect();
    if gathered != want {
        return Err(format!("gather_host: {gathered:?}, expected {want:?}"));
    }
    split_case(&comm)?;
    peer_all_reduce_case(&comm)
}

/// Whether every pair of devices `0..n` has peer access (where the all-reduce over peer memory
/// must be offered).
fn peer_access_everywhere(n: usize) -> bool {
    let device = |i: usize| {
        let mut d = 0;
        // SAFETY: writes one handle through the valid pointer; the driver is initialised (a
        // communicator exists).
        unsafe { cudarc::driver::sys::cuDeviceGet(&mut d, i as i32) };
        d
    };
    (0..n).all(|a| {
        (0..n).filter(|&b| b != a).all(|b| {
            let mut can = 0;
            // SAFETY: writes one int through the valid pointer; both devices exist.
            unsafe { cudarc::driver::sys::cuDeviceCanAccessPeer(&mut can, device(a), device(b)) };
            can == 1
        })
    })
}

/// `PeerAllReduce`: 300 calls queued back to back (the mailboxes' two slots reused 150 times
/// each), rank r's value for call i a seeded random f64; every result must equal the sum in
/// rank order, bit for bit, on every rank.
fn peer_all_reduce_case(comm: &RankCommunicator) -> Check {
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let Some(mut peer) = PeerAllReduce::new(comm).map_err(err)? else {
        if peer_access_everywhere(w) {
            return Err("PeerAllReduce::new gave None on one machine with peer access".into());
        }
        eprintln!("rank {r}: no peer access between every pair of GPUs: PeerAllReduce not offered");
        return Ok(());
    };
    const CALLS: usize = 300;
    // Uniform in [-1, 1) times 10^(i % 7): sums whose rounding depends on the order.
    let values: Vec<Vec<f64>> = (0..w)
        .map(|q| {
            (0..CALLS)
                .map(|i| {
                    let mut z = lab_tests::base_seed() ^ ((q as u64) << 32 | i as u64);
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    z ^= z >> 31;
                    ((z >> 11) as f64 / (1u64 << 52) as f64 - 1.0) * 10f64.powi((i % 7) as i32)
                })
                .collect()
        })
        .collect();
    let mut slots: Vec<_> = (0..CALLS)
        .map(|i| gpu.upload(&[values[r][i]]))
        .collect::<Result<_, _>>()
        .map_err(err)?;
    for slot in &mut slots {
        peer.all_reduce_in_place(slot).map_err(err)?;
    }
    peer.wait().map_err(err)?;
    for (i, slot) in slots.iter().enumerate() {
        let got = gpu.download(slot, "a peer all-reduce").map_err(err)?[0];
        let want = (0..w).fold(0.0f64, |acc, q| acc + values[q][i]);
        if got.to_bits() != want.to_bits() {
            return Err(format!(
                "peer all-reduce call {i}: {got:e}, expected {want:e}"
            ));
        }
    }
    // A buffer of two elements is refused.
    let mut two = gpu.zeros::<f64>(2).map_err(err)?;
    match peer.all_reduce_in_place(&mut two) {
        Err(Error::LengthMismatch { actual: 2, .. }) => {}
        other => return Err(format!("peer all-reduce of two elements: {other:?}")),
    }
    peer_sum_case(comm, &mut peer)
}

/// `PeerAllReduce::sum_f32_into`, the sharded sum in one launch: shards of different odd
/// lengths per rank (one empty), each sum queued 20 times between scalar all-reduces (the
/// epochs of both kinds of call interleaved), into poisoned results; every result within the
/// rounding bound of the CPU's f64 sum of every shard, and the same bits on every rank.
fn peer_sum_case(comm: &RankCommunicator, peer: &mut PeerAllReduce<'_>) -> Check {
    use cpu::reduce::reference;
    let (gpu, r, w) = (comm.gpu(), comm.rank(), comm.world_size());
    let lengths: Vec<usize> = (0..w)
        .map(|q| if q == 1 { 0 } else { 1_000_003 + 4097 * q })
        .collect();
    let shards: Vec<Vec<f32>> = lengths
        .iter()
        .enumerate()
        .map(|(q, &n)| {
            (0..n)
                .map(|i| (value(lab_tests::base_seed() ^ 0x51ed, q, i) as f32 - 3.0) * 0.37)
                .collect()
        })
        .collect();
    let (sum, sum_abs) = shards
        .iter()
        .map(|x| reference::reference_f32(x))
        .fold((0.0, 0.0), |(s, a), (x, y)| (s + x, a + y));
    let shard = gpu.upload(&shards[r]).map_err(err)?;
    let mut scalar = gpu.upload(&[1.0f64]).map_err(err)?;
    let mut results: Vec<_> = (0..20)
        .map(|_| gpu.upload(&[f64::from_bits(0x7ff8_dead_beef_0000)]))
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut cfg = None;
    for result in &mut results {
        cfg = Some(peer.sum_f32_into(&shard, result).map_err(err)?);
        peer.all_reduce_in_place(&mut scalar).map_err(err)?;
    }
    peer.wait().map_err(err)?;
    let depth = cfg.map_or(0, |c| reference::reduce_sum_depth(shard.len(), &c));
    let depth = comm.gather_host(&[depth]).map_err(err)?;
    let depth = depth.iter().map(|d| d[0]).max().unwrap_or(0) + w as u64 - 1;
    let total: usize = lengths.iter().sum();
    let bound = reference::sum_error_bound(total, depth, f64::EPSILON, sum_abs);
    let mut bits = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let got = gpu.download(result, "a sharded sum").map_err(err)?[0];
        reference::check_sum(got, sum, bound)
            .map_err(|m| format!("sharded sum over peer memory, call {i}: {m:?}"))?;
        bits.push(got.to_bits());
    }
    let every = comm.gather_host(&bits).map_err(err)?;
    if every.iter().any(|b| *b != bits) {
        return Err("the sharded sums over peer memory differ between ranks".into());
    }
    // 20 in-place all-reduces of a scalar that starts at 1.0 leave w^20 (exact in f64).
    let s = gpu.download(&scalar, "the scalar").map_err(err)?[0];
    if s != (w as f64).powi(20) {
        return Err(format!("20 peer all-reduces of 1.0 over {w} ranks: {s}"));
    }
    Ok(())
}

/// Arguments refused before NCCL sees them, with the values in the error.
fn argument_checks(comm: &RankCommunicator) -> Check {
    let (gpu, w) = (comm.gpu(), comm.world_size());
    let input = gpu.zeros::<f32>(10).map_err(err)?;
    let mut short = gpu.zeros::<f32>(9).map_err(err)?;
    match comm.all_reduce(&input, &mut short, ReduceOp::Sum) {
        Err(Error::LengthMismatch {
            expected: 10,
            actual: 9,
            ..
        }) => {}
        other => return Err(format!("all-reduce into a short output: {other:?}")),
    }
    let mut gathered = gpu.zeros::<f32>(10 * w - 1).map_err(err)?;
    match comm.all_gather(&input, &mut gathered) {
        Err(Error::LengthMismatch { actual, .. }) if actual == 10 * w - 1 => {}
        other => return Err(format!("all-gather into a short output: {other:?}")),
    }
    let mut buffer = gpu.zeros::<f32>(10).map_err(err)?;
    match comm.broadcast(&mut buffer, w) {
        Err(Error::OutOfRange { value, .. }) if value == w as u64 => {}
        other => return Err(format!("broadcast from rank {w}: {other:?}")),
    }
    // Empty buffers are nothing to do, on every rank alike.
    let empty = gpu.zeros::<f32>(0).map_err(err)?;
    let mut empty_out = gpu.zeros::<f32>(0).map_err(err)?;
    comm.all_reduce(&empty, &mut empty_out, ReduceOp::Sum)
        .map_err(err)?;
    Ok(())
}

/// Two communicators split by rank parity, each all-reducing its ranks' inputs.
fn split_case(comm: &RankCommunicator) -> Check {
    let (r, w) = (comm.rank(), comm.world_size());
    let color = (r % 2) as u32;
    let sub = comm
        .split(Some(color), r as u32)
        .map_err(err)?
        .ok_or("split returned no communicator for a colored rank")?;
    let members: Vec<usize> = (0..w).filter(|q| q % 2 == r % 2).collect();
    if sub.world_size() != members.len() || sub.rank() != r / 2 {
        return Err(format!(
            "split: rank {} of {}, expected {} of {}",
            sub.rank(),
            sub.world_size(),
            r / 2,
            members.len()
        ));
    }
    let gpu = sub.gpu();
    let mut x = gpu.upload(&[r as i32 + 1; 5]).map_err(err)?;
    sub.all_reduce_in_place(&mut x, ReduceOp::Sum)
        .map_err(err)?;
    sub.synchronize("the split all-reduce").map_err(err)?;
    let want = members.iter().map(|&q| q as i32 + 1).sum::<i32>();
    same(
        "split all-reduce",
        &gpu.download(&x, "split").map_err(err)?,
        &[want; 5],
    )?;
    // A rank with no color gets no communicator (every rank takes part in the call).
    let none = comm.split((r != 0).then_some(0), 0).map_err(err)?;
    if none.is_some() != (r != 0) {
        return Err(format!(
            "split with no color on rank 0: got {:?}",
            none.is_some()
        ));
    }
    Ok(())
}

fn a_rank_exits_early() -> Check {
    let env = RankEnv::from_env().map_err(err)?;
    let gpu = Gpu::new(env.local_rank).map_err(err)?;
    let timeout = Duration::from_secs(10);
    let comm = RankCommunicator::new(gpu, &env, timeout).map_err(err)?;
    // A second communicator (the same ranks) for the all-reduce over peer memory, whose
    // timeout comes from a kernel's own clock rather than NCCL's.
    let sub = comm
        .split(Some(0), comm.rank() as u32)
        .map_err(err)?
        .ok_or("split gave no communicator")?;
    let mut peer = PeerAllReduce::new(&sub).map_err(err)?;
    if comm.rank() == comm.world_size() - 1 {
        std::process::exit(EARLY_EXIT);
    }
    let gpu = comm.gpu();
    let mut x = gpu.upload(&vec![1.0f32; 1 << 20]).map_err(err)?;
    let started = Instant::now();
    let outcome = comm
        .all_reduce_in_place(&mut x, ReduceOp::Sum)
        .and_then(|()| comm.synchronize("an all-reduce the last rank never joins"));
    let waited = started.elapsed();
    match outcome {
        Err(Error::CollectiveTimeout { .. } | Error::Nccl { .. }) if waited < timeout * 2 => {}
        other => {
            return Err(format!(
                "after {waited:?}: expected an error, got {other:?}"
            ));
        }
    }
    match comm.all_reduce_in_place(&mut x, ReduceOp::Sum) {
        Err(Error::CommunicatorAborted { .. }) => {}
        other => return Err(format!("a call after the abort: {other:?}")),
    }
    let Some(peer) = &mut peer else {
        return Ok(());
    };
    let mut value = comm.gpu().upload(&[1.0f64]).map_err(err)?;
    let started = Instant::now();
    let outcome = peer
        .all_reduce_in_place(&mut value)
        .and_then(|()| peer.wait());
    let waited = started.elapsed();
    match outcome {
        Err(Error::CollectiveTimeout { .. }) if waited < timeout * 2 => {}
        other => {
            return Err(format!(
                "peer all-reduce after {waited:?}: expected a timeout, got {other:?}"
            ));
        }
    }
    let got = comm.gpu().download(&value, "the peer all-reduce's value");
    match got {
        Ok(v) if v[0].is_nan() => Ok(()),
        other => Err(format!(
            "a timed-out peer all-reduce left {other:?}, not NaN"
        )),
    }
}
