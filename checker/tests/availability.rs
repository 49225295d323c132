//! `reports/availability.md` (issue 35) against fresh runs: for two of its presets, every row's
//! figures (distinct states, each example's shortest depth, irreversible calls executed and
//! blocked) equal what `memtx check --json` reports now. The figures are read from the JSON's
//! own fields (properties, rule firings), not through the code that wrote the report.

mod binary_support;

use binary_support::{memtx, scratch};
use std::path::Path;

/// The presets checked here: small enough for `cargo test`, and each reaches an executed call.
const PRESETS: [&str; 2] = ["scopes", "evidence"];
/// The protocol and the variants the report compares it with.
const VARIANTS: [&str; 4] = ["memtx", "paper-provenance", "rev2-lineage", "rev2-scopes"];
const EXAMPLES: [&str; 11] = [
    "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11",
];

/// The cells of one row of `preset`'s table in the report: states, E1..E11, executed, blocked.
fn row_in_report(report: &str, preset: &str, variant: &str) -> Vec<String> {
    let heading = format!("## Preset `{preset}`");
    let section = report
        .split("\n## ")
        .find(|s| format!("## {s}").starts_with(&heading))
        .unwrap_or_else(|| panic!("reports/availability.md has no section {heading}"));
    let start = format!("| `{variant}` |");
    let line = section
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no row for {variant} under {heading}"));
    let cells: Vec<String> = line
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect();
    // variant, states, E1..E11, executed, blocked, share
    assert_eq!(cells.len(), 3 + EXAMPLES.len() + 2, "row: {line}");
    cells[1..cells.len() - 1].to_vec()
}

/// The same cells from a fresh run's JSON.
fn row_from_run(preset: &str, variant: &str) -> Vec<String> {
    let dir = scratch(&format!("availability-{preset}-{variant}"));
    let mut args = vec!["check", "--preset", preset, "--variant", variant, "--json"];
    for e in EXAMPLES {
        args.extend(["--property", e]);
    }
    let out = memtx(&args, &dir);
    // Exit 1 when an example is unreachable under this preset; anything else is a failure.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{preset} × {variant}: {out:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["coverage"]["status"], "exhaustive");
    let mut cells = vec![v["unique_states"].to_string()];
    for e in EXAMPLES {
        let p = v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == e)
            .unwrap_or_else(|| panic!("{e} missing"));
        cells.push(match p["verdict"].as_str() {
            Some("example-found") => p["trace_len"].to_string(),
            _ => "—".to_string(),
        });
    }
    let fired = |pred: &dyn Fn(&str) -> bool| -> u64 {
        v["rules"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| pred(r["id"].as_str().unwrap()))
            .map(|r| r["fired"].as_u64().unwrap())
            .sum()
    };
    cells.push(fired(&|id| id == "op.call-irreversible").to_string());
    cells.push(fired(&|id| id.starts_with("gate.block.")).to_string());
    let _ = std::fs::remove_dir_all(&dir);
    cells
}

#[test]
fn the_availability_report_matches_fresh_runs_of_two_presets() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/availability.md");
    let report = std::fs::read_to_string(&path).expect("reports/availability.md");
    let mut executed_somewhere = false;
    for preset in PRESETS {
        for variant in VARIANTS {
            let fresh = row_from_run(preset, variant);
            assert_eq!(
                row_in_report(&report, preset, variant),
                fresh,
                "{preset} × {variant}: reports/availability.md is stale \
                 (regenerate with `cargo run --release -- reference --paper`)"
            );
            executed_somewhere |= fresh[fresh.len() - 2] != "0";
        }
    }
    assert!(executed_somewhere, "no compared run executes a call");
    assert!(
        report.contains("## Verdict"),
        "the report opens with its verdict"
    );
}
