//! Atomic writes: no temporary file left behind, one-line errors naming the directory.

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
fn a_failed_rename_removes_the_temporary() {
    let dir = temp_dir("rename");
    // The destination is a non-empty directory: the rename fails after the temporary was written.
    let target = dir.join("taken");
    fs::create_dir(&target).expect("mkdir");
    fs::write(target.join("keep"), b"").expect("file");
    let e = write_atomic(&target, b"x").expect_err("rename onto a directory");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("taken"), "{e}");
    assert_eq!(entries(&dir), vec!["taken".to_string()]);
}

#[test]
fn a_path_without_file_name_is_refused() {
    let e = write_atomic(std::path::Path::new("/"), b"x").expect_err("no file name");
    assert!(!e.to_string().contains('\n'));
}
