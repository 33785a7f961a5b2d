//! Whole-or-absent file writes: each file is written to a temporary file in its own folder and
//! renamed over the destination, under one process-wide lock that an interrupt handler takes
//! before it exits ([`exit_after_writes`]), so Ctrl-C never leaves a half-written file or a
//! stray temporary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Held for the whole of every write; the interrupt handler takes it before exiting.
static WRITES: Mutex<()> = Mutex::new(());

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    /// The destination.
    pub path: PathBuf,
    /// The underlying failure.
    #[source]
    pub source: std::io::Error,
}

/// Writes `contents` to `path` whole or not at all (temporary file in the same folder, then a
/// rename), creating the folder if needed.
///
/// # Errors
/// [`WriteError`] naming `path` if the folder cannot be created or the file written; the
/// destination is then untouched.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    write_all_atomically([(path, contents)])
}

/// Writes several files, each whole or not at all, without an interrupt between them: a
/// report's markdown, JSON and charts land as one set.
///
/// # Errors
/// As [`write_atomically`], for the first file that fails; the files before it are written.
pub fn write_all_atomically<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a [u8])>,
) -> Result<(), WriteError> {
    let _guard = WRITES.lock().unwrap_or_else(|e| e.into_inner());
    for (path, contents) in files {
        write_one(path, contents).map_err(|source| WriteError {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

fn write_one(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".partial-")
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Waits for a write in progress to finish, then exits the process with `code`: the body of an
/// interrupt handler.
///
/// `_exit`, not `exit`: the handler runs on its own thread while the main thread may be inside
/// the CUDA driver, and `exit` would run the atexit handlers (the driver's teardown) under it;
/// on an H200 that race once ended `demo all` by a signal instead of exit code 130.
pub fn exit_after_writes(code: i32) -> ! {
    let _guard = WRITES.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: `_exit` ends the process at once and touches no Rust state; every report file
    // is written whole (the guard above waited for a write in progress).
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("sub/a.txt");
        let b = dir.path().join("b.txt");
        write_all_atomically([(a.as_path(), &b"one"[..]), (b.as_path(), &b"two"[..])]).unwrap();
        write_atomically(&b, b"three").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"one");
        assert_eq!(std::fs::read(&b).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with(".partial")),
            "{names:?}"
        );
    }

    #[test]
    fn unwritable_destination_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        // A folder cannot be created under a file.
        let err = write_atomically(&file.join("report.md"), b"y").unwrap_err();
        assert!(err.to_string().contains("report.md"), "{err}");
    }
}
