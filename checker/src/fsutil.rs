//! Files: atomic writes, reads with one-line errors, and JSON rendering.
//!
//! # Why atomic
//!
//! A report or trace that is half written (the run was interrupted, the disk filled up) is worse
//! than none: a later `memtx replay` would read a truncated file and report a confusing error, and
//! CI could compare against a truncated manifest. [`write_atomic`] therefore never writes the
//! destination in place. It
//!
//! 1. creates a temporary file **in the same directory** (a rename is only atomic within one
//!    file system, and the directory is the one place sure to be on the destination's),
//! 2. writes the bytes and `fsync`s the file, so its content is on disk before its name is,
//! 3. renames it over the destination (readers see the old file or the new one, never a mix),
//! 4. `fsync`s the directory (best effort), so the rename itself survives a crash.
//!
//! If any step fails the temporary file is removed (also if the thread panics), and the error is a
//! [`UserError`] naming the directory or file and what to do.

use crate::error::{ErrorKind, UserError};
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary files of concurrent writes from one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary file on drop unless disarmed (after a successful rename).
struct TempGuard(Option<PathBuf>);

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// The directory `path` is written into (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn dir_error(dir: &Path, err: impl std::fmt::Display) -> UserError {
    UserError::with_fix(
        ErrorKind::Io,
        format!("cannot write in directory {}: {err}", dir.display()),
        "choose an output directory you can write to",
    )
}

/// Writes `bytes` to `path` atomically: temporary file in the same directory, `fsync`, rename.
///
/// A missing directory is created. Errors: an unwritable or uncreatable directory gives a
/// [`UserError`] of kind [`ErrorKind::Io`] naming the directory; a failed rename names the file.
/// No temporary file is left behind in any case.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), UserError> {
    let Some(name) = path.file_name() else {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            format!("{} is not a file path", path.display()),
            "give a file name, not a directory",
        ));
    };
    let dir = parent_dir(path);
    if !dir.is_dir() {
        fs::create_dir_all(&dir).map_err(|e| dir_error(&dir, e))?;
    }
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| dir_error(&dir, e))?;
    let mut guard = TempGuard(Some(temp.clone()));
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| dir_error(&dir, e))?;
    drop(file);
    fs::rename(&temp, path).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot replace {}: {e}", path.display()),
            "check that it is not a directory and that you may write it",
        )
    })?;
    guard.0 = None;
    // Make the rename durable; not every platform lets a directory be opened and synced.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads a whole text file; a failure is a one-line [`UserError`] naming the file and `what` it is.
pub fn read_text(path: &Path, what: &str) -> Result<String, UserError> {
    fs::read_to_string(path).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read {what} {}: {e}", path.display()),
            "check the path",
        )
    })
}

/// Pretty JSON of `value`, with a final newline.
///
/// The types memtx writes (traces, reports, manifests) have string keys and infallible
/// `Serialize` impls, so a failure here is an internal bug, not a user error.
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| panic!("[memtx internal bug] cannot serialise to JSON: {e}"));
    text.push('\n');
    text
}
