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
//!
//! # Only over a regular file
//!
//! A rename replaces whatever has the name: run as root, `memtx replay T --html /dev/null`
//! replaced the machine's `/dev/null` with a regular file (issue 26). [`write_atomic`] and the
//! checks made before a run ([`check_writable_file`], [`check_replaceable`]) therefore refuse a
//! destination that exists and is not a regular file (a directory, symbolic link, FIFO, socket
//! or device) in one line, and commands refuse an output that is one of their own inputs
//! ([`check_not_input`]).

use crate::error::{ErrorKind, UserError};
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Distinguishes temporary files of concurrent writes from one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary files of writes in progress, and the temporary directories of runs in
/// progress ([`TempDir`]), so that an exit that skips destructors (a second interrupt:
/// [`crate::interrupt`]) can still remove them.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every temporary file of a write still in progress and exits with `code` (a
/// second interrupt). The registry stays locked until the process is gone, and a temporary
/// is created and registered under the same lock (`TempGuard::create`): so a write either
/// created its temporary before (and it is removed here) or never creates it. (Registered
/// first and created after, a temporary created while this ran survived: 4 of 150 double
/// Ctrl-C runs left one.)
pub fn remove_temporaries_and_exit(code: i32) -> ! {
    let mut registry = temporaries();
    for path in registry.drain(..) {
        remove_temporary(&path);
    }
    std::process::exit(code)
}

/// Removes a registered temporary: a file, or a directory with what it holds (never through a
/// symbolic link).
fn remove_temporary(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Owns a temporary directory (a `--local` run's hosts file lives in one): registered while
/// it exists, removed with its contents on drop and on a second interrupt, which skips
/// destructors ([`remove_temporaries_and_exit`]).
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// Creates the directory `path` (its parent must exist, and `path` must not: a directory
    /// that was there already is not this one's to remove) and registers it, both under the
    /// registry's lock (as [`TempGuard::create`] does for a file).
    pub(crate) fn create(path: PathBuf) -> std::io::Result<Self> {
        let mut registry = temporaries();
        fs::create_dir(&path)?;
        registry.push(path.clone());
        Ok(TempDir(path))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
        temporaries().retain(|p| *p != self.0);
    }
}

/// Owns a temporary file: registered while it exists, removed on drop unless disarmed
/// (after a successful rename).
pub(crate) struct TempGuard(Option<PathBuf>);

impl TempGuard {
    /// Creates the temporary file `path` with `options` and registers it for removal on drop
    /// and on a second interrupt, both under the registry's lock (see
    /// [`remove_temporaries_and_exit`]).
    pub(crate) fn create(path: PathBuf, options: &OpenOptions) -> std::io::Result<(Self, File)> {
        let mut registry = temporaries();
        let file = options.open(&path)?;
        registry.push(path.clone());
        Ok((TempGuard(Some(path)), file))
    }

    /// The file was renamed into place: nothing to remove any more.
    pub(crate) fn disarm(&mut self) {
        if let Some(path) = self.0.take() {
            temporaries().retain(|p| *p != path);
        }
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(&path);
            temporaries().retain(|p| *p != path);
        }
    }
}

/// Removes the temporaries that earlier writes of `name` into `dir` left behind when their
/// process was killed (`.<name>.<pid>.<n>.tmp` of a process that no longer runs); those of
/// running processes are left alone.
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let pid = rest.split_once('.').and_then(|(p, n)| {
            n.bytes()
                .all(|b| b.is_ascii_digit())
                .then_some(p.parse::<u32>().ok()?)
        });
        if pid.is_some_and(|p| p != std::process::id() && process_ended(p)) {
            let _ = fs::remove_file(entry.path());
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
    check_replaceable(path, "output")?;
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
    remove_stale_temporaries(&dir, &name.to_string_lossy());
    let (mut guard, mut file) = TempGuard::create(
        temp.clone(),
        OpenOptions::new().write(true).create_new(true),
    )
    .map_err(|e| dir_error(&dir, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| dir_error(&dir, e))?;
    drop(file);
    // Again just before the rename: something may have taken the name during the write.
    check_replaceable(path, "output")?;
    fs::rename(&temp, path).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot replace {}: {e}", path.display()),
            "check that it is not a directory and that you may write it",
        )
    })?;
    guard.disarm();
    // Make the rename durable; not every platform lets a directory be opened and synced.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks, before a long run, that files can later be written into directory `dir` (which
/// need not exist yet: then its nearest existing ancestor must be a writable directory, as
/// [`write_atomic`] will create the rest). Nothing is left behind: a probe file is created
/// and removed, and no directory is created. `what` names the flag in the error
/// (e.g. `--traces`).
pub fn check_writable_dir(dir: &Path, what: &str) -> Result<(), UserError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => {
                existing = Path::new(".");
                break;
            }
        }
    }
    let unusable = |why: String| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("{what} {}: {why}", dir.display()),
            "choose a directory you can write to",
        )
    };
    if !existing.is_dir() {
        return Err(unusable(format!(
            "{} is not a directory",
            existing.display()
        )));
    }
    let probe = existing.join(format!(
        ".memtx-probe.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let (guard, file) = TempGuard::create(
        probe.clone(),
        OpenOptions::new().write(true).create_new(true),
    )
    .map_err(|e| {
        unusable(format!(
            "cannot create files in {}: {e}",
            existing.display()
        ))
    })?;
    drop(file);
    drop(guard);
    Ok(())
}

/// Checks that the file `path` can later be written (its directory, see
/// [`check_writable_dir`]) and is not a directory.
pub fn check_writable_file(path: &Path, what: &str) -> Result<(), UserError> {
    check_replaceable(path, what)?;
    if path.is_dir() || path.file_name().is_none() {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            format!("{what} {} is a directory, not a file", path.display()),
            "give a file name",
        ));
    }
    check_writable_dir(&parent_dir(path), what)
}

/// What kind of file `path` names, if it exists and is not a regular file ("a directory",
/// "a FIFO", ...); `None` for a regular file or nothing. A symbolic link is not followed.
pub fn not_regular(path: &Path) -> Option<&'static str> {
    let kind = fs::symlink_metadata(path).ok()?.file_type();
    (!kind.is_file()).then(|| kind_name(kind))
}

/// What a file of type `kind` is called in messages ("a regular file", "a FIFO", ...).
pub fn kind_name(kind: fs::FileType) -> &'static str {
    if kind.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Refuses to write `path` if it exists and is not a regular file (see the module
/// documentation); `what` names the flag in the error.
pub fn check_replaceable(path: &Path, what: &str) -> Result<(), UserError> {
    match not_regular(path) {
        None => Ok(()),
        Some(kind) => Err(UserError::with_fix(
            ErrorKind::Usage,
            format!(
                "{what} {} is {kind}: memtx writes only over a regular file or a new name",
                path.display()
            ),
            "give the path of a file",
        )),
    }
}

/// Refuses an output that is the input file `input` itself (the same file, by device and
/// inode where the platform has them; else by canonical path): `replay T --html T` overwrote
/// the trace. `what` and `input_what` name the two in the error.
pub fn check_not_input(
    output: &Path,
    what: &str,
    input: &Path,
    input_what: &str,
) -> Result<(), UserError> {
    if same_file(output, input) {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            format!(
                "{what} {} is {input_what} itself: writing it would destroy the input",
                output.display()
            ),
            "give another file name",
        ));
    }
    Ok(())
}

/// Do `a` and `b` name one existing file?
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// Checks that `name` is a plain name: ASCII letters, digits, `-` and `_` only, not empty (so
/// it cannot hide or escape the directory it is written into, and the files named after it
/// read as the user meant).
pub fn check_plain_name(name: &str, what: &str) -> Result<(), UserError> {
    // What the message says, and nothing else: `x.json` named files `x.json.json`, and a
    // space passed for a name.
    let bad = name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bad {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            format!(
                "{what} '{}' is not a plain file name",
                crate::input::cut(name)
            ),
            "use letters, digits, '-' and '_' only, without '/', '..' or a leading dot",
        ));
    }
    Ok(())
}

/// `target` as a path relative to directory `from` (both relative to the current directory
/// unless absolute), e.g. `../traces/x.trace.json` for `traces/x.trace.json` seen from
/// `reports/`. Computed lexically (`.` and `..` resolved without touching the disk), so it
/// works for files not written yet.
pub fn relative_path(target: &Path, from: &Path) -> PathBuf {
    use std::path::Component;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let absolute = |p: &Path| -> Vec<std::ffi::OsString> {
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        let mut parts: Vec<std::ffi::OsString> = Vec::new();
        for c in full.components() {
            match c {
                Component::Normal(n) => parts.push(n.to_os_string()),
                Component::ParentDir => {
                    parts.pop();
                }
                _ => {}
            }
        }
        parts
    };
    let (t, f) = (absolute(target), absolute(from));
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for part in &t[common..] {
        out.push(part);
    }
    out
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

/// A lock on a directory a run writes into (a checkpoint folder): the file `.memtx.lock`,
/// created exclusively, holding the process id and the command; removed when dropped. Two
/// resumes of one checkpoint at once overwrote each other's checkpoints (issue 26): the
/// second is now told who holds the folder. A lock left by a process that no longer runs (a
/// kill -9) is taken over; where liveness cannot be told (no `/proc`), the message says how
/// to remove it.
pub struct DirLock {
    path: PathBuf,
}

/// The name of [`DirLock`]'s file.
pub const LOCK_FILE: &str = ".memtx.lock";

impl DirLock {
    /// Takes the lock on `dir` for `command` (`what` names the directory in errors).
    pub fn take(dir: &Path, what: &str, command: &str) -> Result<DirLock, UserError> {
        let path = dir.join(LOCK_FILE);
        let mine = format!("{}\n{}\n", std::process::id(), command);
        for _ in 0..3 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    file.write_all(mine.as_bytes())
                        .map_err(|e| UserError::io("write", &path, &e))?;
                    return Ok(DirLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let held = fs::read_to_string(&path).unwrap_or_default();
                    let mut lines = held.lines();
                    let pid = lines.next().and_then(|p| p.trim().parse::<u32>().ok());
                    let by = lines.next().unwrap_or("an unknown command");
                    match pid {
                        Some(pid) if !process_ended(pid) => {
                            return Err(UserError::with_fix(
                                ErrorKind::Usage,
                                format!(
                                    "{what} {} is in use by process {pid} ({})",
                                    dir.display(),
                                    crate::input::cut(by)
                                ),
                                format!(
                                    "wait for it to end or stop it; if no such run is going on, remove {}",
                                    path.display()
                                ),
                            ));
                        }
                        // Left by a run that ended without removing it: take it over.
                        _ => {
                            let _ = fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(UserError::io("create", &path, &e)),
            }
        }
        Err(UserError::with_fix(
            ErrorKind::Io,
            format!("cannot take the lock {}", path.display()),
            "another run keeps taking it: wait for it to end",
        ))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Has process `pid` ended? Known on systems with `/proc`; elsewhere assumed running.
fn process_ended(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_out_of_the_report_folder() {
        let r = |t: &str, f: &str| {
            relative_path(Path::new(t), Path::new(f))
                .display()
                .to_string()
        };
        assert_eq!(
            r("traces/x.trace.json", "reports"),
            "../traces/x.trace.json"
        );
        assert_eq!(r("traces/x.trace.json", "."), "traces/x.trace.json");
        assert_eq!(r("rep/t/x.json", "rep"), "t/x.json");
        assert_eq!(r("/a/b/c.json", "/a/d/e"), "../../b/c.json");
        assert_eq!(r("a/./b/../c.json", "a"), "c.json");
    }

    #[test]
    fn plain_names_refuse_separators_and_dots() {
        for bad in [
            "../x", "a/b", "..", ".", ".hidden", "", "a\\b", " ", "x.json", "a b", "\u{1b}",
        ] {
            assert!(check_plain_name(bad, "--name").is_err(), "{bad}");
        }
        for good in ["paper-memtx", "run_2", "Run3"] {
            assert!(check_plain_name(good, "--name").is_ok(), "{good}");
        }
    }
}
