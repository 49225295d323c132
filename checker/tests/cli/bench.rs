//! `memtx bench`: each measurement in its own process, against a baseline binary, repeats
//! and medians, local processes against threads, and what `bench --simulate` refuses.

use super::*;

#[test]
fn bench_runs_each_measurement_in_its_own_process_and_compares_engines() {
    let dir = scratch("bench");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "quick",
            "--two-phase",
            "3",
            "--threads",
            "1",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let quick = pinned_quick_states();
    assert!(
        table.contains(&format!("| memtx fast | 1 | {quick} |")),
        "{table}"
    );
    assert!(
        table.contains(&format!("| stateright BFS | 1 | {quick} |")),
        "{table}"
    );
    assert!(table.contains("| memtx fast | 1 | 288 |"), "{table}");
    assert!(table.contains("| stateright BFS | 1 | 288 |"), "{table}");
    assert!(!table.contains("disagree"), "{table}");
    // One progress line per child process.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("bench: ")
            .count(),
        4
    );
    // The internal child mode prints one JSON measurement.
    let one = memtx(
        &[
            "bench",
            "--two-phase",
            "3",
            "--threads",
            "2",
            "--run-one",
            "fast",
        ],
        &dir,
    );
    let run: serde_json::Value = serde_json::from_slice(&one.stdout).expect("one JSON object");
    assert_eq!(run["unique_states"], 288);
    assert_eq!(run["threads"], 2);
}

#[test]
fn bench_compares_against_a_baseline_binary_in_one_run() {
    let dir = scratch("bench-baseline");
    // This binary as its own baseline: both subjects count the same states, and the table
    // says per thread count how much slower per distinct state, against the 15 % target.
    let me = env!("CARGO_BIN_EXE_memtx");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "evidence",
            "--threads",
            "1",
            "--skip-stateright",
            "--baseline-binary",
            me,
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("## Against the baseline binary"), "{table}");
    assert!(
        table.contains("MemTX, preset evidence, baseline binary"),
        "{table}"
    );
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("## Against the baseline binary"))
        .find(|l| l.starts_with("| 1 |"))
        .unwrap_or_else(|| panic!("no ratio row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let slower: f64 = cells[4]
        .trim_end_matches(" %")
        .parse()
        .expect("a percentage");
    assert!(slower.abs() < 100.0, "{row}");
    // The same size: this binary stopped at the baseline's distinct states, a time per state
    // and a percentage against the baseline.
    let same_size: f64 = cells[6].parse().expect("µs per state");
    assert!(same_size > 0.0, "{row}");
    let same_slower: f64 = cells[7]
        .trim_end_matches(" %")
        .parse()
        .expect("a percentage");
    assert!(same_slower.abs() < 100.0, "{row}");
    assert!(
        row.ends_with("| not measured (--skip-stateright) |"),
        "{row}"
    );
    // Three children per round (this binary, the baseline, this binary stopped at the
    // baseline's count), the stopped one with the baseline's distinct states.
    assert_eq!(stderr.matches("bench: ").count(), 3, "{stderr}");
    let states = |label: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(&format!("bench: MemTX, preset evidence, {label}, ")))
            .and_then(|l| l.split(": ").nth(2))
            .and_then(|l| l.split(' ').next())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no {label} run: {stderr}"))
    };
    assert_eq!(
        states("stopped at the baseline's distinct states"),
        states("baseline binary"),
        "{stderr}"
    );
    // A baseline that is not there, or that fails, is the user's error.
    let missing = memtx(&["bench", "--baseline-binary", "no-such-memtx"], &dir);
    assert_user_error(&missing, "--baseline-binary no-such-memtx: no such file");
    let failing = memtx(
        &[
            "bench",
            "--skip-stateright",
            "--baseline-binary",
            "/bin/false",
        ],
        &dir,
    );
    assert_user_error(
        &failing,
        "--baseline-binary /bin/false: benchmark process failed",
    );
}

#[test]
fn bench_repeats_report_the_median_run_and_every_time() {
    let dir = scratch("bench-repeat");
    let args = [
        "bench",
        "--two-phase",
        "3",
        "--threads",
        "1",
        "--skip-stateright",
    ];
    let out = memtx(&[&args[..], &["--repeat", "3"]].concat(), &dir);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("median time of 3 runs"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("| memtx fast | 1 | 288 |"))
        .unwrap_or_else(|| panic!("no 2PC row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let times: Vec<f64> = cells[13]
        .split(", ")
        .map(|t| t.parse().expect("a time"))
        .collect();
    assert_eq!(times.len(), 3, "{row}");
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median: f64 = cells[6].parse().expect("seconds");
    assert!((median - sorted[1]).abs() < 0.006, "{row}");
    for bad in ["0", "100"] {
        let out = memtx(&[&args[..], &["--repeat", bad]].concat(), &dir);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat must be between 1 and 99"));
    }
}

/// `bench --processes 2`: both setups measured in one run, the same count, a ratio and the
/// bytes exchanged (speed itself is not asserted: it is a measurement, not a test).
#[test]
fn bench_compares_local_processes_with_threads_in_one_run() {
    let dir = scratch("bench-processes");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "quick",
            "--processes",
            "2",
            "--out",
            "b.md",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let quick = pinned_quick_states();
    assert!(text.contains(&format!("{quick} distinct states")), "{text}");
    assert!(text.contains("| 1 process × 2 threads |"), "{text}");
    assert!(text.contains("| 2 local processes × 1 thread |"), "{text}");
    assert!(
        text.contains("processes' speed / threads' speed: **"),
        "{text}"
    );
    assert!(text.contains("per distinct state"), "{text}");
    assert_eq!(std::fs::read_to_string(dir.join("b.md")).unwrap(), text);
    let out = memtx(&["bench", "--processes", "1"], &dir);
    assert_user_error(&out, "--processes");
}

/// `bench --processes 2 --two-phase 3`: the preset and 2PC in one run, a table, a ratio and the
/// bytes per state for each; the internal cluster flags are refused outside a child.
#[test]
fn bench_compares_local_processes_with_threads_on_the_preset_and_2pc_in_one_run() {
    let dir = scratch("bench-processes-2pc");
    let out = memtx(
        &[
            "bench",
            "--processes",
            "2",
            "--two-phase",
            "3",
            "--preset",
            "quick",
            "--repeat",
            "1",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let preset = text
        .find("## MemTX, preset `quick`")
        .expect("the preset's table");
    let two_phase = text.find("## 2PC, 3 RMs").expect("2PC's table");
    assert!(preset < two_phase, "{text}");
    for section in [&text[preset..two_phase], &text[two_phase..]] {
        assert!(section.contains("| 1 process × 2 threads |"), "{text}");
        assert!(
            section.contains("| 2 local processes × 1 thread |"),
            "{text}"
        );
        assert_eq!(
            section
                .matches("processes' speed / threads' speed: **")
                .count(),
            1,
            "{text}"
        );
        assert!(section.contains("per distinct state"), "{text}");
    }
    let quick = pinned_quick_states();
    assert!(
        text[preset..].contains(&format!("{quick} distinct states")),
        "{text}"
    );
    // 2PC with 3 RMs: 288 distinct states (stateright's example).
    assert!(text[two_phase..].contains("288 distinct states"), "{text}");
    let out = memtx(
        &[
            "bench",
            "--processes",
            "2",
            "--process",
            "1",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "internal");
    std::fs::write(dir.join("h"), "127.0.0.1:1\n").expect("a hostfile");
    let out = memtx(
        &[
            "bench",
            "--run-one",
            "fast",
            "--processes",
            "2",
            "--process",
            "0",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "--hostfile");
    let out = memtx(
        &[
            "bench",
            "--run-one",
            "stateright",
            "--processes",
            "2",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "--run-one fast");
}

#[test]
fn bench_simulate_refuses_what_it_does_not_measure_in_one_line() {
    let dir = scratch("bench-simulate");
    let cases: [(&[&str], &str); 5] = [
        (
            &["bench", "--simulate", "5s", "--two-phase", "3"],
            "--simulate measures the simulations alone: drop --two-phase",
        ),
        (
            &["bench", "--simulate", "5s", "--repeat", "3"],
            "--simulate measures the simulations alone: drop --repeat",
        ),
        (
            &["bench", "--simulate", "soon"],
            "--simulate \"soon\" is not a duration",
        ),
        (
            &["bench", "--simulate", "0s"],
            "--simulate \"0s\" is no time at all",
        ),
        (
            &["bench", "--seeds", "3"],
            "required arguments were not provided: --simulate <DURATION>",
        ),
    ];
    for (args, message) in cases {
        assert_user_error(&memtx(args, &dir), message);
    }
}
