//! The bundle's `run.sh`: the template (`xtask/templates/run.sh`), filled with the pattern
//! registry's lists as the built `demo` prints them.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The bundle's entry point (see README "Running on a GPU machine without Rust"), with the
/// placeholders `@DEMOS@` and `@SANITIZE_CASES@`.
const RUN_SH: &str = include_str!("../templates/run.sh");

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
    fill_run_sh(
        &demo_list(demo, "--names")?,
        &demo_list(demo, "--sanitize-args")?,
    )
}

/// [`RUN_SH`] with `names` as its `demos` array and `cases` as its `sanitize_cases` array.
fn fill_run_sh(names: &[String], cases: &[String]) -> Result<String> {
    let demos = format!("demos=(\n  {}\n)", names.join("\n  "));
    let sanitize = format!(
        "sanitize_cases=(\n{}\n)",
        cases
            .iter()
            .map(|c| format!("  \"{c}\""))
            .collect::<Vec<_>>()
            .join("\n")
    );
    for placeholder in ["@DEMOS@", "@SANITIZE_CASES@"] {
        if !RUN_SH.contains(placeholder) {
            bail!("run.sh template lacks {placeholder}");
        }
    }
    Ok(RUN_SH
        .replace("@DEMOS@", &demos)
        .replace("@SANITIZE_CASES@", &sanitize))
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
        assert!(
            !script.contains("@DEMOS@") && !script.contains("@SANITIZE_CASES@"),
            "a placeholder is left"
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
}
