//! docs/extending.md's walk-through, followed on a scratch copy of the repository.
//!
//! The page marks each edit and each command of its worked example (an invariant taken from the
//! sentence to a green `cargo test`) with an HTML comment:
//!
//! - `<!-- walkthrough: FILE, end -->`, `<!-- walkthrough: FILE, before: LINE -->` or
//!   `<!-- walkthrough: FILE, after: LINE -->`, followed by a fenced block: the block is inserted
//!   at the end of FILE, or before or after the first line of FILE that reads LINE (leading and
//!   trailing spaces aside);
//! - `<!-- walkthrough: run, exit N -->`, followed by a fenced block of commands, one per line:
//!   each is run by `sh` at the copy's root and must exit with N;
//! - `<!-- walkthrough: exists PATH -->`: the steps so far produced PATH.
//!
//! The test copies every file git tracks (as it is on disk) to `target/walkthrough/repo`, follows
//! the steps in order and fails at the first one that does not go as the page says, naming its
//! line in the page. The copy builds into `target/walkthrough/target` (kept between runs, so a
//! second run is incremental) with the release profile lightened for build time (no debug
//! information, 16 codegen units, incremental): the page's commands are run as written.

use std::path::{Path, PathBuf};
use std::process::Command;

const PAGE: &str = "docs/extending.md";

/// Where an edit goes in its file.
#[derive(Debug)]
enum Anchor {
    End,
    Before(String),
    After(String),
}

/// One marked step of the page, with the line of its marker.
#[derive(Debug)]
enum Step {
    Edit {
        line: usize,
        file: String,
        anchor: Anchor,
        text: String,
    },
    Run {
        line: usize,
        exit: i32,
        commands: Vec<String>,
    },
    Exists {
        line: usize,
        path: String,
    },
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The marked steps of `page`, in order. Panics, naming the line, on a marker it cannot read.
fn steps(page: &str) -> Vec<Step> {
    let lines: Vec<&str> = page.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(spec) = lines[i]
            .trim()
            .strip_prefix("<!-- walkthrough:")
            .and_then(|s| s.strip_suffix("-->"))
            .map(str::trim)
        else {
            i += 1;
            continue;
        };
        let line = i + 1;
        i += 1;
        if let Some(path) = spec.strip_prefix("exists ") {
            out.push(Step::Exists {
                line,
                path: path.trim().to_string(),
            });
            continue;
        }
        // A fenced block follows the marker.
        assert!(
            lines.get(i).is_some_and(|l| l.starts_with("```")),
            "{PAGE}:{line}: a walkthrough marker must be followed by a fenced block"
        );
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("{PAGE}:{line}: the fenced block is not closed"));
        let block = &lines[start..end];
        i = end + 1;
        if let Some(exit) = spec.strip_prefix("run, exit ") {
            out.push(Step::Run {
                line,
                exit: exit
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{PAGE}:{line}: exit code {exit:?}")),
                commands: block
                    .iter()
                    .map(|c| c.trim())
                    .filter(|c| !c.is_empty() && !c.starts_with('#'))
                    .map(String::from)
                    .collect(),
            });
            continue;
        }
        let (file, place) = spec
            .split_once(", ")
            .unwrap_or_else(|| panic!("{PAGE}:{line}: expected `FILE, end|before: …|after: …`"));
        let anchor = if place == "end" {
            Anchor::End
        } else if let Some(l) = place.strip_prefix("before: ") {
            Anchor::Before(l.trim().to_string())
        } else if let Some(l) = place.strip_prefix("after: ") {
            Anchor::After(l.trim().to_string())
        } else {
            panic!("{PAGE}:{line}: unknown place {place:?}")
        };
        let mut text = block.join("\n");
        text.push('\n');
        out.push(Step::Edit {
            line,
            file: file.trim().to_string(),
            anchor,
            text,
        });
    }
    out
}

/// `content` with `text` inserted as `anchor` says; `None` if the anchor's line is not there.
fn insert(content: &str, anchor: &Anchor, text: &str) -> Option<String> {
    let mut content = content.to_string();
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    let (wanted, after) = match anchor {
        Anchor::End => return Some(content + text),
        Anchor::Before(l) => (l, false),
        Anchor::After(l) => (l, true),
    };
    let mut offset = 0;
    for line in content.split_inclusive('\n') {
        if line.trim() == wanted.as_str() {
            let at = if after { offset + line.len() } else { offset };
            return Some(format!("{}{}{}", &content[..at], text, &content[at..]));
        }
        offset += line.len();
    }
    None
}

/// Copies every file git tracks in `from` (as it is on disk) to `to`.
fn copy_tracked(from: &Path, to: &Path) {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(from)
        .output()
        .expect("this test needs git (it copies the files git tracks)");
    assert!(out.status.success(), "git ls-files failed");
    let mut copied = 0;
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).expect("a tracked path in UTF-8");
        let source = from.join(name);
        if !source.is_file() {
            continue; // deleted in the working tree
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&source, &target).unwrap();
        copied += 1;
    }
    assert!(copied > 100, "only {copied} tracked files copied");
}

/// Runs `command` with `sh` at `root`; its exit code and the tail of its output.
fn run(root: &Path, target: &Path, command: &str) -> (i32, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(dir) = Path::new(&cargo)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        let mut dirs = vec![dir.to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        path = std::env::join_paths(dirs).unwrap();
    }
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(root)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("sh");
    let tail = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    let shown = format!(
        "stdout (its end):\n{}\nstderr (its end):\n{}",
        tail(&out.stdout),
        tail(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), shown)
}

#[test]
fn the_pages_markers_are_read() {
    let page = std::fs::read_to_string(repo().join(PAGE)).unwrap();
    let steps = steps(&page);
    let edits = steps
        .iter()
        .filter(|s| matches!(s, Step::Edit { .. }))
        .count();
    let runs = steps
        .iter()
        .filter(|s| matches!(s, Step::Run { .. }))
        .count();
    assert!(edits >= 5 && runs >= 3, "{steps:#?}");
    // Every edit lands in a file of the repository, at a line it has.
    for step in &steps {
        if let Step::Edit {
            line,
            file,
            anchor,
            text,
        } = step
        {
            let content = std::fs::read_to_string(repo().join(file))
                .unwrap_or_else(|e| panic!("{PAGE}:{line}: {file}: {e}"));
            assert!(
                insert(&content, anchor, text).is_some(),
                "{PAGE}:{line}: {file} has no line {anchor:?}"
            );
        }
    }
}

#[test]
fn insertion_goes_where_the_marker_says() {
    let content = "a\n  b\nc\n  b\n";
    let at = |a: Anchor| insert(content, &a, "X\n").unwrap();
    assert_eq!(at(Anchor::Before("b".into())), "a\nX\n  b\nc\n  b\n");
    assert_eq!(at(Anchor::After("b".into())), "a\n  b\nX\nc\n  b\n");
    assert_eq!(at(Anchor::End), "a\n  b\nc\n  b\nX\n");
    assert_eq!(insert(content, &Anchor::After("d".into()), "X\n"), None);
    assert_eq!(insert("a", &Anchor::End, "X\n").unwrap(), "a\nX\n");
}

/// The walk-through itself: a few minutes (a release build of the copy, `memtx reference`
/// without `--paper`, the tests the page names).
#[test]
fn the_extending_walk_through_ends_in_a_green_cargo_test_on_a_scratch_copy() {
    let page = std::fs::read_to_string(repo().join(PAGE)).unwrap();
    let steps = steps(&page);
    let base = repo().join("target/walkthrough");
    let root = base.join("repo");
    let target = base.join("target");
    if root.exists() {
        std::fs::remove_dir_all(&root).unwrap();
    }
    copy_tracked(&repo(), &root);
    for step in &steps {
        match step {
            Step::Edit {
                line,
                file,
                anchor,
                text,
            } => {
                let path = root.join(file);
                let content = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{PAGE}:{line}: {file}: {e}"));
                let edited = insert(&content, anchor, text)
                    .unwrap_or_else(|| panic!("{PAGE}:{line}: {file} has no line {anchor:?}"));
                std::fs::write(&path, edited).unwrap();
            }
            Step::Run {
                line,
                exit,
                commands,
            } => {
                for command in commands {
                    let (code, tail) = run(&root, &target, command);
                    assert_eq!(
                        code,
                        *exit,
                        "{PAGE}:{line}: `{command}` exited {code}, the page says {exit}; \
                         the copy is kept in {}:\n{tail}",
                        root.display()
                    );
                }
            }
            Step::Exists { line, path } => assert!(
                root.join(path).exists(),
                "{PAGE}:{line}: {path} was not produced; the copy is kept in {}",
                root.display()
            ),
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}
