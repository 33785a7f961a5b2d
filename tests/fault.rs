//! A kernel fault surfaces as an error naming the kernel, not a hang or a silent wrong result.
//!
//! The faulting kernel (`smoke_trap_out_of_bounds`, an out-of-bounds index caught by a bounds
//! check that traps) leaves its CUDA context unusable, so it runs in a child process (this
//! executable again, with `GPU_LAB_FAULT_CHILD` set) and the trial checks the child's exit
//! status and message. Reported as ignored where no GPU can be opened.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lab_tests::gpu_trial;
use libtest_mimic::{Arguments, Failed};

const CHILD_ENV: &str = "GPU_LAB_FAULT_CHILD";
/// Exit status of a child whose kernel faulted as expected.
const FAULTED: i32 = 3;

fn child() -> ! {
    let outcome = cpu::Gpu::new(0).and_then(|gpu| cpu::lab::smoke::trap_out_of_bounds(&gpu));
    match outcome {
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(FAULTED)
        }
        Ok(()) => {
            eprintln!("the trapping kernel completed without an error");
            std::process::exit(0)
        }
    }
}

fn trap_names_the_kernel() -> Result<(), Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .env(CHILD_ENV, "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            return Err("the faulting kernel hung for 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    use std::io::Read;
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr)
            .map_err(|e| e.to_string())?;
    }
    let kernel = gpu::smoke::kernels::smoke_trap_out_of_bounds.name();
    if status.code() != Some(FAULTED) {
        return Err(format!("child exited with {status}, stderr: {stderr}").into());
    }
    if !stderr.contains(kernel) {
        return Err(format!("the error does not name {kernel}: {stderr}").into());
    }
    Ok(())
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
    }
    let args = Arguments::from_args();
    let trials = vec![gpu_trial(
        "fault::trap_is_an_error_naming_the_kernel".into(),
        trap_names_the_kernel,
    )];
    libtest_mimic::run(&args, trials).exit();
}
