//! Atomic writes: no temporary file left behind, one-line errors naming the directory.

mod binary_support;
mod trace_support;

use memtx_checker::error::ErrorKind;
use memtx_checker::fsutil::{read_text, write_atomic};
use std::fs;
use trace_support::temp_dir;

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writes_replaces_and_leaves_no_temporary() {
    let dir = temp_dir("atomic");
    let file = dir.join("out.json");
    write_atomic(&file, b"first").expect("write");
    assert_eq!(fs::read(&file).expect("read"), b"first");
    write_atomic(&file, b"second").expect("overwrite");
    assert_eq!(read_text(&file, "test file").expect("read"), "second");
    assert_eq!(entries(&dir), vec!["out.json".to_string()]);
}

#[test]
fn creates_a_missing_directory() {
    let dir = temp_dir("mkdir");
    let file = dir.join("a/b/report.md");
    write_atomic(&file, b"x").expect("write");
    assert_eq!(fs::read(&file).expect("read"), b"x");
    assert_eq!(entries(&dir.join("a/b")), vec!["report.md".to_string()]);
}

#[test]
fn an_unwritable_directory_is_a_user_error_naming_it() {
    let dir = temp_dir("unwritable");
    // A directory path that goes through a regular file can never be created (even by root).
    let blocker = dir.join("not-a-dir");
    fs::write(&blocker, b"").expect("blocker");
    let target = blocker.join("sub").join("out.json");
    let e = write_atomic(&target, b"x").expect_err("cannot write");
    assert_eq!(e.kind(), ErrorKind::Io);
    let m = e.to_string();
    assert!(!m.contains('\n'), "{m:?}");
    assert!(
        m.contains(&blocker.join("sub").display().to_string()),
        "{m}"
    );
    assert!(m.contains("directory"), "{m}");
    assert_eq!(entries(&dir), vec!["not-a-dir".to_string()]);
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_is_a_user_error_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("readonly");
    let ro = dir.join("ro");
    fs::create_dir(&ro).expect("mkdir");
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).expect("chmod");
    // Root ignores permission bits: then there is nothing to test.
    if fs::write(ro.join("probe"), b"").is_ok() {
        let _ = fs::remove_file(ro.join("probe"));
        return;
    }
    let e = write_atomic(&ro.join("out.json"), b"x").expect_err("read-only");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains(&ro.display().to_string()), "{e}");
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert!(entries(&ro).is_empty());
}

#[test]
fn a_directory_in_the_way_is_refused_before_anything_is_written() {
    let dir = temp_dir("rename");
    let target = dir.join("taken");
    fs::create_dir(&target).expect("mkdir");
    fs::write(target.join("keep"), b"").expect("file");
    let e = write_atomic(&target, b"x").expect_err("a directory is not replaced");
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(
        e.to_string().contains("taken") && e.to_string().contains("a directory"),
        "{e}"
    );
    assert_eq!(entries(&dir), vec!["taken".to_string()]);
    assert!(target.join("keep").is_file());
}

/// A FIFO, a symbolic link and (as root) a character device named as the destination are
/// refused in one line and left as they were (a rename would have replaced each).
#[test]
fn only_a_regular_file_is_replaced() {
    let dir = temp_dir("special");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let link = dir.join("link");
    let aim = dir.join("aim");
    fs::write(&aim, b"kept").unwrap();
    std::os::unix::fs::symlink(&aim, &link).unwrap();
    let device = dir.join("null");
    let mknod = std::process::Command::new("mknod")
        .arg(&device)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status();
    let mut targets = vec![(link.clone(), "a symbolic link")];
    if made.is_ok_and(|s| s.success()) {
        targets.push((fifo.clone(), "a FIFO"));
    }
    if mknod.is_ok_and(|s| s.success()) {
        targets.push((device.clone(), "a character device"));
    }
    for (target, kind) in &targets {
        let e = write_atomic(target, b"x").expect_err("refused");
        assert!(e.to_string().contains(kind), "{e}");
        assert!(!e.to_string().contains('\n'));
        assert_eq!(
            memtx_checker::fsutil::not_regular(target),
            Some(*kind),
            "{} left as it was",
            target.display()
        );
    }
    assert_eq!(fs::read(&aim).unwrap(), b"kept");
    // No temporary left beside them.
    assert!(
        entries(&dir).iter().all(|n| !n.ends_with(".tmp")),
        "{:?}",
        entries(&dir)
    );
}

#[test]
fn a_path_without_file_name_is_refused() {
    let e = write_atomic(std::path::Path::new("/"), b"x").expect_err("no file name");
    assert!(!e.to_string().contains('\n'));
}

/// A later write of the same file removes the temporaries that killed writers left behind
/// (their process gone), and leaves those of running processes alone.
#[test]
fn stale_temporaries_of_dead_writers_are_removed() {
    let dir = temp_dir("stale");
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = dir.join(format!(".out.json.{dead}.0.tmp"));
    let live = dir.join(".out.json.1.0.tmp");
    let other = dir.join(format!(".other.json.{dead}.0.tmp"));
    for f in [&stale, &live, &other] {
        fs::write(f, b"partial").unwrap();
    }
    write_atomic(&dir.join("out.json"), b"done").unwrap();
    assert!(!stale.exists(), "the dead writer's temporary is removed");
    assert!(live.exists(), "process 1 still runs: its temporary stays");
    assert!(
        other.exists(),
        "another file's temporary is not this write's business"
    );
}
