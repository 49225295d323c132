//! The benchmark, as ignored tests (run them in release mode):
//!
//! ```text
//! MEMTX_BENCH_RMS=8 MEMTX_BENCH_THREADS=1,2 cargo test --release -p memtx \
//!     --test explorer_bench -- --ignored --nocapture
//! ```
//!
//! `MEMTX_BENCH_STATERIGHT=0` skips stateright's BFS, `MEMTX_BENCH_EXACT=1` runs the fast
//! engine in exact mode and `MEMTX_BENCH_SYMMETRY=1` with symmetry reduction (stateright's
//! BFS ignores symmetry, so its counts then differ). The non-ignored test checks the
//! benchmark's plumbing on a tiny model.

use memtx_checker::bench::two_phase_commit::{canonicalize, TwoPhaseSys};
use memtx_checker::bench::{bench_model, bench_two_phase, BenchOptions, Engine};

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn explorer_bench_two_phase() {
    let rms: usize = env_or("MEMTX_BENCH_RMS", "8")
        .parse()
        .expect("MEMTX_BENCH_RMS is a number");
    let threads: Vec<usize> = env_or("MEMTX_BENCH_THREADS", "1,2")
        .split(',')
        .map(|t| {
            t.trim()
                .parse()
                .expect("MEMTX_BENCH_THREADS is a list of numbers")
        })
        .collect();
    let model = TwoPhaseSys::new(rms).expect("supported RM count");
    let mut options = BenchOptions::new(&threads);
    options.stateright = env_or("MEMTX_BENCH_STATERIGHT", "1") != "0";
    options.exact = env_or("MEMTX_BENCH_EXACT", "0") == "1";
    let symmetry = env_or("MEMTX_BENCH_SYMMETRY", "0") == "1";
    if symmetry {
        options.symmetry = Some(|_, s| canonicalize(s));
    }
    let result = bench_model(&format!("2PC, {rms} RMs"), &model, &options)
        .expect("2PC has no eventually property");
    println!("{}", result.to_markdown());
    assert!(result.counts_agree || symmetry);
}

#[test]
fn explorer_bench_plumbing_on_3_rms() {
    let result = bench_two_phase(3, &[1, 2]).expect("3 RMs are supported");
    assert!(result.counts_agree, "{}", result.to_markdown());
    assert_eq!(result.runs.len(), 4);
    assert!(result.runs.iter().all(|r| r.unique_states == 288));
    let fast: Vec<_> = result
        .runs
        .iter()
        .filter(|r| r.engine == Engine::Fast)
        .collect();
    assert!(fast
        .iter()
        .all(|r| r.speedup.is_some() && r.visited_bytes_per_state.is_some()));
    // 288 states: the parent log is 12 bytes per state plus a small header per level.
    assert!(fast.iter().all(|r| r
        .parent_log_bytes_per_state
        .is_some_and(|b| (12.0..20.0).contains(&b))));
    let table = result.to_markdown();
    assert!(table.contains("| visited-set bytes/state | parent-log bytes/state |"));
    assert!(table.contains("| memtx fast | 2 | 288 |"), "{table}");
    assert!(table.contains("| stateright BFS | 1 | 288 |"), "{table}");
    assert!(bench_two_phase(15, &[1]).is_err());
}

#[test]
fn simulation_bench_plumbing_on_quick() {
    use memtx_checker::bench::simulation::{
        throughput, time_to_violation, Hunt, SimEngine, SimulationBench,
    };
    use memtx_model::{presets::preset, Variant};
    use std::time::Duration;
    let cfg = preset("quick", Variant::Memtx).expect("quick");
    let short = Duration::from_millis(300);
    let runs: Vec<_> = [SimEngine::MemtxSwarm, SimEngine::StaterightSimulation]
        .into_iter()
        .map(|engine| throughput(engine, &cfg, 1, short, 1))
        .collect();
    for run in &runs {
        assert!(run.states > 0 && run.seconds > 0.2, "{run:?}");
    }
    assert!(runs[0].walks.is_some_and(|w| w > 0 && w < runs[0].states));
    // Both find no-cascade's I2 on quick; neither finds it under the protocol.
    let broken = preset("quick", Variant::NoCascade).expect("quick");
    for engine in [SimEngine::MemtxSwarm, SimEngine::StaterightSimulation] {
        let found = time_to_violation(engine, &broken, "I2", 1, Duration::from_secs(30), 1);
        assert!(found.is_some_and(|t| t < 30.0), "{engine:?}");
        assert_eq!(time_to_violation(engine, &cfg, "I2", 1, short, 1), None);
    }
    let bench = SimulationBench {
        preset: "quick".into(),
        seconds: 0.3,
        throughput: runs,
        hunt_threads: 1,
        seeds: 1,
        hunts: vec![Hunt {
            variant: "no-cascade",
            property: "I2",
            memtx: vec![Some(0.01)],
            stateright: vec![None],
        }],
    };
    let ratio = bench.ratio(1).expect("both engines ran on 1 thread");
    let md = bench.to_markdown();
    assert!(md.contains(&format!("{ratio:.2}×")), "{md}");
    assert!(
        md.contains("| `no-cascade` | I2 | 0.010 s | 1/1 | > 0 s | 0/1 |"),
        "{md}"
    );
    assert!(
        md.contains("memtx 1 of 1 defects, stateright 0 of 1"),
        "{md}"
    );
}
