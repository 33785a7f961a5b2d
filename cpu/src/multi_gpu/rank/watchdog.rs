//! The watchdog of a rank's communicator: a thread that aborts the communicator when a
//! blocking NCCL call overruns its deadline, and the pacing of the waits that poll.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cudarc::nccl::result as nccl;
use cudarc::nccl::sys as nccl_sys;

/// An NCCL communicator handle that the watchdog thread may abort.
#[derive(Clone, Copy, Debug)]
pub(super) struct CommPtr(pub(super) nccl_sys::ncclComm_t);

// SAFETY: NCCL's communicators may be used from any thread, one call at a time, and
// `ncclCommAbort` may be called from another thread while a call blocks (it is how a hung call
// is ended); the handle is only a pointer to NCCL's state.
unsafe impl Send for CommPtr {}
// SAFETY: as above: the only call made through a shared reference from another thread is the
// abort, serialised by the watchdog state's lock.
unsafe impl Sync for CommPtr {}

/// What the calling thread and the watchdog thread share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) comm: CommPtr,
    pub(super) state: Mutex<WatchState>,
    pub(super) wake: Condvar,
}

/// The watchdog's state: the deadline of the NCCL call in progress (if one is), why the
/// communicator was aborted (once it was), and whether the watchdog should stop.
#[derive(Debug, Default)]
pub(super) struct WatchState {
    pub(super) deadline: Option<(Instant, &'static str)>,
    pub(super) aborted: Option<String>,
    pub(super) stop: bool,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `ncclCommAbort` once, under the lock, remembering `cause`.
    pub(super) fn abort_locked(&self, state: &mut WatchState, cause: String) {
        if state.aborted.is_some() {
            return;
        }
        state.aborted = Some(cause);
        // SAFETY: a communicator made by NCCL, aborted once (guarded by `aborted` under the
        // lock); NCCL's abort needs no other rank and may run while a call on it blocks.
        let _ = unsafe { nccl::comm_abort(self.comm.0) };
    }
}

/// The watchdog thread: while a blocking NCCL call is armed (`RankCommunicator::guarded`),
/// aborts the communicator at its deadline, which makes the call return.
pub(super) fn watch(shared: Arc<Shared>) {
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        match state.deadline {
            None => {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner)
            }
            Some((deadline, during)) => {
                let now = Instant::now();
                if now >= deadline {
                    state.deadline = None;
                    shared.abort_locked(
                        &mut state,
                        format!("{during} did not return within the timeout"),
                    );
                } else {
                    state = shared
                        .wake
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }
}

/// The watchdog's pacing: spins (a collective's enqueue or a short wait costs microseconds,
/// and a sleep of any length costs the kernel's timer slack, some 50 us), then yields, then
/// sleeps up to 1 ms, until the deadline.
pub(super) struct Backoff {
    start: Instant,
    deadline: Instant,
}

impl Backoff {
    /// Spin for the first 200 us, yield until 5 ms, then sleep.
    const SPIN: Duration = Duration::from_micros(200);
    const YIELD: Duration = Duration::from_millis(5);

    pub(super) fn until(timeout: Duration) -> Self {
        let start = Instant::now();
        Self {
            start,
            deadline: start + timeout,
        }
    }

    /// Waits a little; `false` once the deadline has passed.
    pub(super) fn pause(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        let waited = now - self.start;
        if waited < Self::SPIN {
            std::hint::spin_loop();
        } else if waited < Self::YIELD {
            std::thread::yield_now();
        } else {
            std::thread::sleep((waited / 16).min(Duration::from_millis(1)));
        }
        true
    }
}
