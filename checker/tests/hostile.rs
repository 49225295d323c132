//! The hostile-input campaign of issue 26, kept as a test: seeded mutations of every kind of
//! file memtx reads (traces and scenarios, domain files, checkpoints, hostfiles), each given
//! to the binary. Whatever a mutation makes of the file, memtx must answer with one of its
//! own exit codes (0, 1, 3, or 2 with exactly one `memtx:` line on stderr), never a panic
//! (101), an abort (134) or a signal, and within its limits (a run that hangs fails the test
//! after 30 s).
//!
//! The mutations are byte-level (flip, delete, duplicate, truncate, insert junk) and
//! JSON-level (one value anywhere in the document replaced by a hostile one: huge numbers,
//! negative counts, control characters, long strings, wrong types). The seed is fixed, so a
//! failure names the case and replays; `MEMTX_HOSTILE_CASES=N` runs N cases per kind instead
//! of the default.

mod binary_support;
use binary_support::*;

use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// xorshift64*: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const JUNK: &[&str] = &[
    "null",
    "-1",
    "0",
    "1e309",
    "18446744073709551616",
    "4294967296",
    "\"\\u0000\\u001b[31m\"",
    "{}",
    "[]",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "true",
    "\"memtx\"",
];

fn junk_value(rng: &mut Rng) -> Value {
    match rng.below(JUNK.len() + 1) {
        i if i < JUNK.len() => serde_json::from_str(JUNK[i]).unwrap_or(Value::Null),
        _ => Value::String("x".repeat(100_000)),
    }
}

/// Replaces one value anywhere in `v` (chosen by a walk down random children).
fn replace_somewhere(v: &mut Value, rng: &mut Rng, depth: usize) {
    let children = match v {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    };
    if children == 0 || depth > 12 || rng.below(4) == 0 {
        *v = junk_value(rng);
        return;
    }
    let i = rng.below(children);
    match v {
        Value::Object(m) => {
            if let Some((_, child)) = m.iter_mut().nth(i) {
                replace_somewhere(child, rng, depth + 1);
            }
        }
        Value::Array(a) => replace_somewhere(&mut a[i], rng, depth + 1),
        _ => {}
    }
}

/// One mutation of `bytes`.
fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let len = out.len().max(1);
    match rng.below(7) {
        0 => {
            let at = rng.below(len).min(out.len().saturating_sub(1));
            if !out.is_empty() {
                out[at] = rng.next() as u8;
            }
        }
        1 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(64)).min(out.len());
            out.drain(at.min(end)..end);
        }
        2 => {
            let at = rng.below(len).min(out.len());
            let end = (at + 1 + rng.below(256)).min(out.len());
            let copy = out[at..end].to_vec();
            out.splice(at..at, copy);
        }
        3 => out.truncate(rng.below(len)),
        4 => {
            let at = rng.below(len).min(out.len());
            let junk = JUNK[rng.below(JUNK.len())].as_bytes().to_vec();
            out.splice(at..at, junk);
        }
        _ => {
            // JSON-level: the whole document, or (a checkpoint) its header line.
            let text = String::from_utf8_lossy(bytes);
            let (head, tail) = match text.find('\n') {
                Some(i) if !text.trim_start().starts_with('{') || i + 1 < text.len() => {
                    (&text[..i], &bytes[i..])
                }
                _ => (&text[..], &[][..]),
            };
            if let Ok(mut v) = serde_json::from_str::<Value>(head) {
                replace_somewhere(&mut v, rng, 0);
                out = [v.to_string().as_bytes(), tail].concat();
            }
        }
    }
    out
}

/// Runs memtx with `args` in `dir`; asserts one of its own outcomes within 30 s.
fn judge(dir: &Path, args: &[&str], case: &str) {
    let out = memtx_within(args, dir, Duration::from_secs(30), case);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0..=3)),
        "{case}: exit {code:?} for memtx {args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert!(!stderr.contains("[memtx internal bug]"), "{case}: {stderr}");
    if code == Some(2) {
        let lines: Vec<&str> = stderr.trim_end().lines().collect();
        assert_eq!(lines.len(), 1, "{case}: one line for exit 2: {stderr}");
        assert!(lines[0].starts_with("memtx:"), "{case}: {stderr}");
        // Values from the file are cut, not echoed whole (a 100,000-character one was).
        assert!(
            lines[0].len() < 2_000,
            "{case}: a {}-byte line: {}…",
            lines[0].len(),
            lines[0].chars().take(200).collect::<String>()
        );
    }
}

fn cases(default: usize) -> usize {
    std::env::var("MEMTX_HOSTILE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn regression(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
}

#[test]
fn mutated_traces_and_scenarios_are_answered_in_one_line() {
    let dir = scratch("traces");
    let seeds = [
        regression("regressions/quick/no-cascade-I2.trace.json"),
        regression("regressions/quick/paper-provenance-I15.trace.json"),
        regression("regressions/scenarios/dirty-read-trap.json"),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..cases(120) {
        let seed = &seeds[i % seeds.len()];
        let mut bytes = mutate(seed, &mut rng);
        if rng.below(3) == 0 {
            bytes = mutate(&bytes, &mut rng);
        }
        std::fs::write(dir.join("t.json"), &bytes).unwrap();
        judge(&dir, &["replay", "t.json"], &format!("trace case {i}"));
    }
}

#[test]
fn mutated_domain_files_are_answered_in_one_line() {
    let dir = scratch("domains");
    let list = memtx(&["list", "--json"], &dir);
    let all: Value = serde_json::from_slice(&list.stdout).unwrap();
    let seeds: Vec<Vec<u8>> = all["presets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "quick" || p["name"] == "scopes")
        .map(|p| {
            serde_json::json!({ "bounds": p["bounds"], "domain": p["domain"] })
                .to_string()
                .into_bytes()
        })
        .collect();
    let mut rng = Rng(0xd1b5_4a32_d192_ed03);
    for i in 0..cases(50) {
        let bytes = mutate(&seeds[i % seeds.len()], &mut rng);
        std::fs::write(dir.join("d.json"), &bytes).unwrap();
        judge(
            &dir,
            &[
                "check",
                "--preset",
                "quick",
                "--domain",
                "d.json",
                "--max-states",
                "20000",
                "--traces",
                "tr",
            ],
            &format!("domain case {i}"),
        );
    }
}

#[test]
fn mutated_checkpoints_are_answered_in_one_line() {
    let dir = scratch("checkpoints");
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--checkpoint",
            "good",
            "--checkpoint-every",
            "0s",
            "--max-depth",
            "8",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let good = std::fs::read(dir.join("good/checkpoint.memtx")).expect("a checkpoint");
    let mut rng = Rng(0x94d0_49bb_1331_11eb);
    for i in 0..cases(30) {
        let bytes = mutate(&good, &mut rng);
        let ck = dir.join(format!("ck{i}"));
        std::fs::create_dir_all(&ck).unwrap();
        std::fs::write(ck.join("checkpoint.memtx"), &bytes).unwrap();
        judge(
            &dir,
            &["resume", &format!("ck{i}")],
            &format!("checkpoint case {i}"),
        );
    }
}

#[test]
fn mutated_hostfiles_are_answered_in_one_line() {
    let dir = scratch("hostfiles");
    let seed = b"# two processes\n127.0.0.1:1\n127.0.0.1:2\n".to_vec();
    let mut rng = Rng(0xbf58_476d_1ce4_e5b9);
    for i in 0..cases(15) {
        let bytes = mutate(&seed, &mut rng);
        std::fs::write(dir.join("hosts"), &bytes).unwrap();
        judge(
            &dir,
            &[
                "check",
                "--preset",
                "quick",
                "--processes",
                "2",
                "--process",
                "0",
                "--hostfile",
                "hosts",
                "--connect-timeout",
                "1s",
            ],
            &format!("hostfile case {i}"),
        );
    }
}
