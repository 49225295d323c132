//! A test's scratch directory: fresh when made, removed when the test passes, kept (and
//! named on stderr) when it fails, so that a failure can be looked at and a passing run
//! leaves nothing behind in the system's temporary directory.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh, empty directory `memtx-<stem>-<pid>` under the system's temporary directory,
/// removed when dropped unless the thread is panicking (a failed assertion).
pub struct Scratch(PathBuf);

impl Scratch {
    /// Makes the directory, emptying what an earlier process of the same id left there.
    pub fn new(stem: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("memtx-{stem}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "kept the failed test's scratch directory {}",
                self.0.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
