//! The bundle's `run.sh`: the template (`xtask/templates/run.sh`), filled with the pattern
//! registry's lists as the built `demo` prints them.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The bundle's entry point (see README "Running on a GPU machine without Rust"), with the
/// placeholders `@DEMOS@`, `@SANITIZE_CASES@` and `@STARTUP_ARGS@`.
const RUN_SH: &str = include_str!("../templates/run.sh");

/// `run.sh startup`: the arguments of each pattern's demo at its smallest sizes, as
/// `demo <pattern> --help` states its limits, and one timed repetition. Every pattern of the
/// registry needs a row (the bundle is not built without one), and the bundle checks each
/// row with the built demo ([`check_startup_args`]). The non-obvious minimums: `md --cells 3`
/// (3..=400), `shared-memory --size 256` (whole blocks of 256: less is no block at all),
/// `coalescing --max-stride 1` (1..=32), `bandwidth --max-size 1024` (at least 1 KiB),
/// `multi-gpu --max-bytes 1024` (at least 1 KiB). `multi-gpu --devices 0`: one GPU, as every
/// other row, so that the row measures one process's start (the driver, NCCL's loading and a
/// one-rank communicator), not how many GPUs the machine has; the group of every GPU is
/// `run.sh multi-gpu`'s.
const STARTUP_ARGS: &[(&str, &str)] = &[
    ("vector-add", "--size 1 --reps 1"),
    ("transpose", "--rows 1 --cols 1 --reps 1"),
    ("reduce", "--size 1 --reps 1"),
    ("square-sum", "--size 1 --reps 1"),
    ("scan", "--size 1 --reps 1"),
    ("histogram", "--size 1 --bins 1 --reps 1"),
    ("sort", "--size 1 --reps 1"),
    ("conv1d", "--size 1 --mask-width 1 --reps 1"),
    ("conv2d", "--rows 1 --cols 1 --mask-width 1 --reps 1"),
    ("md", "--cells 3 --steps 1 --threads 1 --reps 1"),
    ("registers", "--size 1 --reps 1"),
    ("shared-memory", "--size 256 --reps 1"),
    ("bank-conflicts", "--accesses 1 --reps 1"),
    ("constant-memory", "--size 1 --reads 1 --reps 1"),
    ("device-globals", "--reps 1"),
    (
        "coalescing",
        "--size 1 --max-offset 0 --max-stride 1 --reps 1",
    ),
    ("layout", "--size 1 --reps 1"),
    ("bandwidth", "--max-size 1024 --launches 1 --reps 1"),
    ("texture", "--size 1 --table 1 --reps 1"),
    (
        "multi-gpu",
        "--devices 0 --size 1 --max-bytes 1024 --reps 1",
    ),
    ("smoke", "--size 1 --reps 1"),
];

/// Lines the built `demo` prints for `demo list <flag>` (it needs no GPU).
fn demo_list(demo: &Path, flag: &str) -> Result<Vec<String>> {
    let output = Command::new(demo)
        .args(["list", flag])
        .output()
        .with_context(|| format!("running {} list {flag}", demo.display()))?;
    if !output.status.success() {
        bail!(
            "{} list {flag} failed ({}): {}",
            demo.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    // The lines become bash words and quoted strings: nothing that needs escaping.
    let plain = |c: char| c.is_ascii_alphanumeric() || " .-_:".contains(c);
    if lines.is_empty() || lines.iter().any(|l| l.is_empty() || !l.chars().all(plain)) {
        bail!("{} list {flag} printed {lines:?}", demo.display());
    }
    Ok(lines)
}

/// [`RUN_SH`] with the demo and sanitizer lists of the pattern registry, as the built `demo`
/// prints them.
pub(crate) fn from_registry(demo: &Path) -> Result<String> {
    let names = demo_list(demo, "--names")?;
    let script = fill_run_sh(&names, &demo_list(demo, "--sanitize-args")?)?;
    if let Some((stale, _)) = STARTUP_ARGS
        .iter()
        .find(|(p, _)| !names.iter().any(|n| n == p))
    {
        bail!("STARTUP_ARGS (xtask/src/run_sh.rs) has a row for {stale}, which is no pattern");
    }
    check_startup_args(demo)?;
    Ok(script)
}

/// Each row of [`STARTUP_ARGS`] parses: the built demo, with every GPU hidden
/// (`CUDA_VISIBLE_DEVICES=-1`), refuses bad arguments with exit status 2 before any device
/// work, and ends with 1 (no device) on good ones.
fn check_startup_args(demo: &Path) -> Result<()> {
    for (pattern, args) in STARTUP_ARGS {
        let output = Command::new(demo)
            .arg(pattern)
            .args(args.split_whitespace())
            .env("CUDA_VISIBLE_DEVICES", "-1")
            .output()
            .with_context(|| format!("running {} {pattern} {args}", demo.display()))?;
        if output.status.code() == Some(2) {
            bail!(
                "demo {pattern} {args} (STARTUP_ARGS, xtask/src/run_sh.rs) is refused: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
    }
    Ok(())
}

/// [`RUN_SH`] with `names` as its `demos` array, `cases` as its `sanitize_cases` array, and the
/// [`STARTUP_ARGS`] of each of `names` as its `startup_args` associative array.
fn fill_run_sh(names: &[String], cases: &[String]) -> Result<String> {
    let demos = format!("demos=(\n  {}\n)", names.join("\n  "));
    let mut startup = Vec::new();
    for name in names {
        let Some((_, args)) = STARTUP_ARGS.iter().find(|(p, _)| p == name) else {
            bail!(
                "the pattern {name} has no row in STARTUP_ARGS (xtask/src/run_sh.rs): its \
                 smallest sizes for `run.sh startup`"
            );
        };
        startup.push(format!("  [{name}]=\"{args}\""));
    }
    let startup = format!("declare -A startup_args=(\n{}\n)", startup.join("\n"));
    let sanitize = format!(
        "sanitize_cases=(\n{}\n)",
        cases
            .iter()
            .map(|c| format!("  \"{c}\""))
            .collect::<Vec<_>>()
            .join("\n")
    );
    for placeholder in ["@DEMOS@", "@SANITIZE_CASES@", "@STARTUP_ARGS@"] {
        if !RUN_SH.contains(placeholder) {
            bail!("run.sh template lacks {placeholder}");
        }
    }
    Ok(RUN_SH
        .replace("@DEMOS@", &demos)
        .replace("@SANITIZE_CASES@", &sanitize)
        .replace("@STARTUP_ARGS@", &startup))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_sh_gets_the_lists_and_is_valid_bash() {
        let names = vec!["vector-add".to_string(), "device-globals".into()];
        let cases = vec![
            "vector-add --size 100003".to_string(),
            "device-globals".into(),
        ];
        let script = fill_run_sh(&names, &cases).unwrap();
        assert!(script.contains("demos=(\n  vector-add\n  device-globals\n)"));
        assert!(script.contains("  \"vector-add --size 100003\"\n  \"device-globals\"\n)"));
        assert!(script.contains(
            "declare -A startup_args=(\n  [vector-add]=\"--size 1 --reps 1\"\n  [device-globals]=\"--reps 1\"\n)"
        ));
        assert!(
            !script.contains("@DEMOS@")
                && !script.contains("@SANITIZE_CASES@")
                && !script.contains("@STARTUP_ARGS@"),
            "a placeholder is left"
        );
        assert!(
            script.contains("  startup) run_startup ;;")
                && script.contains("#   ./run.sh startup [DIR")
                && script.contains("|dumps|startup]"),
            "run.sh has the startup mode, documented"
        );
        assert!(
            script.contains("  sweep) run_sweep ;;")
                && script.contains("peers.py\" --sweep \"$file\" --demo \"$here/bin/demo\"")
                && script.contains("#   ./run.sh sweep [DIR"),
            "run.sh has the sweep mode, documented"
        );
        let Ok(mut bash) = Command::new("bash")
            .args(["-n", "/dev/stdin"])
            .stdin(std::process::Stdio::piped())
            .spawn()
        else {
            return; // no bash here: the syntax check is run.sh's own first run
        };
        use std::io::Write;
        bash.stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        assert!(bash.wait().unwrap().success(), "bash -n rejects run.sh");
    }

    #[test]
    fn every_pattern_needs_startup_args() {
        let names = vec!["vector-add".to_string(), "no-such-pattern".into()];
        let err = fill_run_sh(&names, &["vector-add".to_string()]).unwrap_err();
        assert!(err.to_string().contains("no-such-pattern"), "{err}");
        let mut seen = std::collections::BTreeSet::new();
        for (pattern, args) in STARTUP_ARGS {
            assert!(seen.insert(pattern), "{pattern} twice in STARTUP_ARGS");
            assert!(args.contains("--reps 1"), "{pattern}: {args}");
        }
    }

    /// `run.sh startup` in a bundle of stand-ins (bin/demo and the example: shell scripts that
    /// record the JIT cache folder they get): a row per command, cold and warm, the failing
    /// command's exit status in its row and in the step's, the table in DIR/startup.md, the
    /// output in DIR/logs/, a fresh cache folder for every cold run and one for the warm runs.
    #[test]
    fn startup_times_every_command_cold_and_warm() {
        if Command::new("bash").arg("--version").output().is_err() {
            return; // no bash here: run.sh's machines run it
        }
        let names = vec!["vector-add".to_string(), "device-globals".into()];
        let script = fill_run_sh(&names, &names).unwrap();
        let dir = std::env::temp_dir().join(format!("run-sh-startup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["bin", "examples"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let caches = dir.join("caches.txt");
        let stand_in = |status: &str| {
            format!(
                "#!/bin/sh\necho \"$0 $* $CUDA_CACHE_PATH\" >> '{}'\n\
                 [ -d \"$CUDA_CACHE_PATH\" ] || exit 9\n\
                 echo \"output of $1\"\n[ \"$1\" = device-globals ] && exit {status}\nexit 0\n",
                caches.display()
            )
        };
        let files = [
            ("run.sh", script),
            ("bin/demo", stand_in("3")),
            ("examples/01_reduce_a_sub_slice", stand_in("0")),
        ];
        for (name, text) in &files {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let out = Command::new("bash")
            .arg(dir.join("run.sh"))
            .args(["startup", "times"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let table = std::fs::read_to_string(dir.join("times/startup.md")).unwrap_or_default();
        let log =
            std::fs::read_to_string(dir.join("times/logs/bin_demo_device-globals_--reps_1.log"))
                .unwrap_or_default();
        let runs = std::fs::read_to_string(&caches).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);

        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(
            stdout.contains("FAILED: startup bin/demo device-globals --reps 1"),
            "{stdout}"
        );
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows[0], "| command | cold s | warm s | exit |", "{table}");
        let commands = [
            "bin/demo vector-add --size 1",
            "bin/demo vector-add --size 1 --reps 1",
            "bin/demo device-globals --reps 1",
            "examples/01_reduce_a_sub_slice",
        ];
        assert_eq!(rows.len(), 2 + commands.len(), "{table}");
        for (row, command) in rows[2..].iter().zip(commands) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells[1], format!("`{command}`"), "{table}");
            for secs in &cells[2..4] {
                assert!(secs.parse::<f64>().is_ok_and(|s| s >= 0.0), "{row}");
            }
            let status = if command.contains("device-globals") {
                "3"
            } else {
                "0"
            };
            assert_eq!(cells[4], status, "{row}");
        }
        assert!(stdout.contains(&table), "the table is printed:\n{stdout}");
        // The output goes to the logs; the end of a failing command's log is shown.
        assert!(!stdout.contains("output of vector-add"), "{stdout}");
        assert!(stdout.contains("output of device-globals"), "{stdout}");
        assert_eq!(log.matches("output of device-globals").count(), 3, "{log}");
        // Three runs a command (cold, fill, warm): the cold ones each in a folder of its own,
        // the fill and warm ones all in one.
        let folders: Vec<&str> = runs
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(folders.len(), 3 * commands.len(), "{runs}");
        let cold: std::collections::BTreeSet<_> = folders.iter().step_by(3).collect();
        let warm: std::collections::BTreeSet<_> = folders
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, f)| f)
            .collect();
        assert_eq!(cold.len(), commands.len(), "{runs}");
        assert_eq!(warm.len(), 1, "{runs}");
        assert!(cold.is_disjoint(&warm), "{runs}");
    }
}
