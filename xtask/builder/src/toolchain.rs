//! The toolchain that compiles the kernels: the nightly pinned in `rust-toolchain.toml`, through
//! rustup (installed with `rust-src` when missing), or the active one when it is such a nightly.

use crate::{BuildError, tail};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// How the nested cargo is started: through rustup with the pinned channel, or (no rustup,
/// but the active toolchain is a nightly with `rust-src`) the active cargo itself.
pub(crate) enum Toolchain {
    Rustup { channel: String },
    Active,
}

impl Toolchain {
    /// The toolchain pinned in `workspace_root/rust-toolchain.toml`, installed through rustup
    /// (with `rust-src`) if it is not yet.
    pub(crate) fn pinned(workspace_root: &Path) -> Result<Self, BuildError> {
        let file = workspace_root.join("rust-toolchain.toml");
        let channel = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let value = l.trim().strip_prefix("channel")?.trim().strip_prefix('=')?;
                    Some(value.trim().trim_matches('"').to_string())
                })
            })
            .filter(|c| !c.is_empty())
            .ok_or(BuildError::NoChannel { path: file })?;
        let rustup = |args: &[&str]| {
            let mut cmd = Command::new("rustup");
            clean_environment(&mut cmd);
            cmd.current_dir(workspace_root).args(args).output()
        };
        let Ok(list) = rustup(&["toolchain", "list"]) else {
            // No rustup: the active toolchain will do if it is a nightly with rust-src.
            return match check_active_toolchain(workspace_root) {
                Ok(()) => Ok(Toolchain::Active),
                Err(_) => Err(BuildError::NoRustup { channel }),
            };
        };
        let installed = String::from_utf8_lossy(&list.stdout).lines().any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| t == channel || t.starts_with(&format!("{channel}-")))
        });
        let install = |args: &[&str]| -> Result<(), BuildError> {
            let out = rustup(args).map_err(|source| BuildError::Spawn {
                program: "rustup".into(),
                source,
            })?;
            if out.status.success() {
                Ok(())
            } else {
                Err(BuildError::Install {
                    channel: channel.clone(),
                    status: out.status,
                    stderr: tail(&String::from_utf8_lossy(&out.stderr), 20),
                })
            }
        };
        if !installed {
            install(&[
                "toolchain",
                "install",
                &channel,
                "--profile",
                "minimal",
                "--component",
                "rust-src",
            ])?;
        }
        let sysroot = rustup(&["run", &channel, "rustc", "--print", "sysroot"])
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if !has_rust_src(&sysroot) {
            install(&["component", "add", "rust-src", "--toolchain", &channel])?;
        }
        Ok(Toolchain::Rustup { channel })
    }

    /// `cargo` of this toolchain, with the outer build's environment removed.
    pub(crate) fn cargo(&self) -> Command {
        let mut cmd = match self {
            Toolchain::Rustup { channel } => {
                let mut cmd = Command::new("rustup");
                cmd.args(["run", channel, "cargo"]);
                cmd
            }
            Toolchain::Active => {
                Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
            }
        };
        clean_environment(&mut cmd);
        if let Toolchain::Active = self {
            // The active toolchain is the one wanted: keep the outer build's compiler.
            if let Some(rustc) = std::env::var_os("RUSTC") {
                cmd.env("RUSTC", rustc);
            }
        }
        cmd
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Toolchain::Rustup { channel } => format!("rustup run {channel} cargo"),
            Toolchain::Active => "cargo".into(),
        }
    }
}

/// Removes what an outer cargo (running a build script, clippy or a test) or rustup sets for
/// itself, so the nested build is configured by this builder alone and runs the pinned
/// toolchain even when the outer build runs another (a stable one, in a user's crate).
/// `CARGO_HOME` and `RUSTUP_HOME` stay: they name the same registry and toolchains.
pub(crate) fn clean_environment(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let outer = (key.contains("CARGO") && key != "CARGO_HOME")
            || matches!(
                key,
                "RUSTC"
                    | "RUSTDOC"
                    | "RUSTUP_TOOLCHAIN"
                    | "RUSTFLAGS"
                    | "RUSTDOCFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "MAKEFLAGS"
                    | "MFLAGS"
            );
        if outer {
            cmd.env_remove(key);
        }
    }
}

pub(crate) fn has_rust_src(sysroot: &str) -> bool {
    !sysroot.is_empty()
        && Path::new(sysroot)
            .join("lib/rustlib/src/rust/library/core/Cargo.toml")
            .is_file()
}

/// Without rustup: the active toolchain (`$RUSTC`) must be a nightly with `rust-src`.
pub(crate) fn check_active_toolchain(workspace_root: &Path) -> Result<(), BuildError> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let run = |args: &[&str]| -> Result<String, BuildError> {
        let mut cmd = Command::new(&rustc);
        clean_environment(&mut cmd);
        let out = cmd
            .current_dir(workspace_root)
            .args(args)
            .output()
            .map_err(|source| BuildError::Spawn {
                program: rustc.to_string_lossy().into_owned(),
                source,
            })?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let version = run(&["--version"])?;
    if !version.contains("nightly") {
        return Err(BuildError::NotNightly { version });
    }
    let sysroot = run(&["--print", "sysroot"])?;
    if !has_rust_src(&sysroot) {
        return Err(BuildError::MissingRustSrc { sysroot });
    }
    Ok(())
}
