//! `memtx bench --simulate`: memtx's swarm simulation ([`crate::simulate`]) against
//! stateright's own simulation checker (`spawn_simulation` with its `UniformChooser`) on the
//! same model and preset, in one run.
//!
//! Two measurements:
//! - **Throughput**: each engine walks under `memtx` (every property judged on every state)
//!   for the same time and thread count; the unit is *states visited*, the count stateright's
//!   simulation reports (every state a walk reaches, its initial state included); for memtx
//!   that is its steps plus its walks. Neither walks past memtx's `--max-walk-depth` steps
//!   (stateright's `target_max_depth` is that + 1), though memtx's walks draw their own bound
//!   below it (swarm), and stateright's also end at a state repeated within the walk and count
//!   refused attempts in their length.
//! - **Time to first violation** of each property each variant of §10 is expected to break:
//!   both engines judge that property alone and stop at its first violation; per seed the
//!   wall-clock time, or "not found" within the cap; the median over the seeds (a seed not
//!   found counts as slower than any found).

use crate::simulate::{simulate, SimulateOptions, DEFAULT_MAX_WALK_DEPTH};
use memtx_model::config::{Config, VariantInfo, VARIANTS};
use memtx_model::properties::PropertyDef;
use memtx_model::MemTx;
use stateright::{Checker, HasDiscoveries, Model, UniformChooser};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Which simulation produced a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SimEngine {
    /// [`crate::simulate::simulate`].
    MemtxSwarm,
    /// stateright's `spawn_simulation` with `UniformChooser`.
    StaterightSimulation,
}

impl SimEngine {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            SimEngine::MemtxSwarm => "memtx swarm simulation",
            SimEngine::StaterightSimulation => "stateright simulation",
        }
    }
}

/// One throughput run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Throughput {
    /// The engine.
    pub engine: SimEngine,
    /// Threads.
    pub threads: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// States visited (initial states of walks included).
    pub states: u64,
    /// Walks (memtx only: stateright does not count them).
    pub walks: Option<u64>,
}

impl Throughput {
    /// States visited per second.
    pub fn per_second(&self) -> f64 {
        self.states as f64 / self.seconds.max(1e-9)
    }
}

/// Walks `cfg` under its variant with every property for `time`, on `threads` threads.
pub fn throughput(
    engine: SimEngine,
    cfg: &Config,
    threads: usize,
    time: Duration,
    seed: u64,
) -> Throughput {
    let model = MemTx::new(cfg.clone());
    let started = Instant::now();
    match engine {
        SimEngine::MemtxSwarm => {
            let sim = simulate(&model, &options(seed, threads, time));
            Throughput {
                engine,
                threads,
                seconds: sim.elapsed.as_secs_f64(),
                states: sim.steps + sim.walks,
                walks: Some(sim.walks),
            }
        }
        SimEngine::StaterightSimulation => {
            let checker = stateright_simulation(model, threads, time, seed, HasDiscoveries::All);
            Throughput {
                engine,
                threads,
                seconds: started.elapsed().as_secs_f64(),
                states: checker.state_count() as u64,
                walks: None,
            }
        }
    }
}

fn options(seed: u64, threads: usize, time: Duration) -> SimulateOptions {
    SimulateOptions {
        seed,
        walks: None,
        time: Some(time),
        max_walk_depth: DEFAULT_MAX_WALK_DEPTH,
        threads,
        interrupt: None,
    }
}

/// The seconds until `engine` first violates `key` on `cfg` (its variant), judging it alone,
/// or `None` if it did not within `cap`.
pub fn time_to_violation(
    engine: SimEngine,
    cfg: &Config,
    key: &'static str,
    threads: usize,
    cap: Duration,
    seed: u64,
) -> Option<f64> {
    let selected: Vec<&'static PropertyDef> = PropertyDef::find(key).into_iter().collect();
    let model = MemTx::with_properties(cfg.clone(), selected);
    let started = Instant::now();
    let found = match engine {
        SimEngine::MemtxSwarm => simulate(&model, &options(seed, threads, cap))
            .violation
            .is_some(),
        SimEngine::StaterightSimulation => {
            let checker =
                stateright_simulation(model, threads, cap, seed, HasDiscoveries::AnyFailures);
            !checker.discoveries().is_empty()
        }
    };
    found.then(|| started.elapsed().as_secs_f64())
}

/// stateright's simulation checker on `model`, run to its end: `time` at most, walks bounded
/// as memtx's are, stopping early when `finish_when` says (`All`, its default, never does
/// under a protocol whose invariants hold).
fn stateright_simulation(
    model: MemTx,
    threads: usize,
    time: Duration,
    seed: u64,
    finish_when: HasDiscoveries,
) -> impl Checker<MemTx> {
    model
        .checker()
        .threads(threads)
        .timeout(time)
        .target_max_depth(DEFAULT_MAX_WALK_DEPTH + 1)
        .finish_when(finish_when)
        .spawn_simulation(seed, UniformChooser)
        .join()
}

/// One hunt: per engine, per seed, the time to the first violation of one property a
/// variant should break.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Hunt {
    /// The variant's name.
    pub variant: &'static str,
    /// The property it should break (the only one judged).
    pub property: &'static str,
    /// memtx, per seed: seconds, or `None` (not found within the cap).
    pub memtx: Vec<Option<f64>>,
    /// stateright, per seed.
    pub stateright: Vec<Option<f64>>,
}

/// The median of per-seed times (the lower middle one for an even number of seeds), a seed
/// not found counting as slower than any found; `None` if the median seed found nothing.
pub fn median(times: &[Option<f64>]) -> Option<f64> {
    let mut sorted: Vec<f64> = times.iter().map(|t| t.unwrap_or(f64::INFINITY)).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .filter(|t| t.is_finite())
}

/// Every variant that should break something, with each property it should break, in the
/// table's order.
pub fn hunted() -> impl Iterator<Item = (&'static VariantInfo, &'static str)> {
    VARIANTS
        .iter()
        .flat_map(|v| v.expected_to_break.iter().map(move |k| (v, *k)))
}

/// What `memtx bench --simulate` measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SimulationBench {
    /// The preset.
    pub preset: String,
    /// Seconds each throughput run was given, and the cap of each hunt.
    pub seconds: f64,
    /// Throughput runs, memtx then stateright per thread count.
    pub throughput: Vec<Throughput>,
    /// Threads of the hunts.
    pub hunt_threads: usize,
    /// The seeds of each hunt (1..=n).
    pub seeds: u64,
    /// One hunt per variant.
    pub hunts: Vec<Hunt>,
}

/// The target of issue 24: memtx's swarm visits at least this many times as many states per
/// second as stateright's simulation.
pub const TARGET_RATIO: f64 = 5.0;

impl SimulationBench {
    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## Simulation: memtx's swarm against stateright's simulation checker\n\n\
             Preset `{}` under `memtx`, every property judged on every state, {:.0} s per run, \
             walks of at most {} steps (seed 1). States visited: every state a walk reaches, \
             its initial state included (stateright's count; for memtx, steps + walks).\n",
            self.preset, self.seconds, DEFAULT_MAX_WALK_DEPTH
        );
        let _ = writeln!(
            s,
            "| engine | threads | seconds | walks | states visited | states/s | memtx ÷ stateright | target ≥ {TARGET_RATIO}× |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---|");
        for t in &self.throughput {
            let ratio = self.ratio(t.threads);
            let (ratio_cell, verdict) = match (t.engine, ratio) {
                (SimEngine::MemtxSwarm, Some(r)) => (
                    format!("{r:.2}×"),
                    if r >= TARGET_RATIO { "met" } else { "NOT met" }.to_string(),
                ),
                _ => (String::new(), String::new()),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {:.1} | {} | {} | {:.0} | {ratio_cell} | {verdict} |",
                t.engine.name(),
                t.threads,
                t.seconds,
                t.walks.map_or("–".into(), |w| w.to_string()),
                t.states,
                t.per_second()
            );
        }
        let _ = writeln!(
            s,
            "\n### Time to the first violation of each variant's defects\n\n\
             One property at a time, judged alone; each engine stops at its first violation. Seeds 1 to {}, {} thread(s), at most {:.0} s per seed; the median \
             counts a seed that found nothing as slower than any that did.\n",
            self.seeds, self.hunt_threads, self.seconds
        );
        let _ = writeln!(
            s,
            "| variant | property | memtx median | memtx found | stateright median | stateright found |"
        );
        let _ = writeln!(s, "|---|---|---:|---:|---:|---:|");
        let cell = |times: &[Option<f64>]| {
            if times.is_empty() {
                return ("–".to_string(), "–".to_string());
            }
            (
                median(times).map_or(format!("> {:.0} s", self.seconds), |t| format!("{t:.3} s")),
                format!(
                    "{}/{}",
                    times.iter().filter(|t| t.is_some()).count(),
                    times.len()
                ),
            )
        };
        for h in &self.hunts {
            let (m, mf) = cell(&h.memtx);
            let (r, rf) = cell(&h.stateright);
            let _ = writeln!(
                s,
                "| `{}` | {} | {m} | {mf} | {r} | {rf} |",
                h.variant, h.property
            );
        }
        let found = |pick: fn(&Hunt) -> &Vec<Option<f64>>| {
            self.hunts
                .iter()
                .filter(|h| median(pick(h)).is_some())
                .count()
        };
        let _ = writeln!(
            s,
            "\nFound at the median seed: memtx {} of {} defects, stateright {} of {}.",
            found(|h| &h.memtx),
            self.hunts.len(),
            found(|h| &h.stateright),
            self.hunts.len()
        );
        s
    }

    /// memtx's states/s over stateright's at `threads`, if both ran.
    pub fn ratio(&self, threads: usize) -> Option<f64> {
        let rate = |engine| {
            self.throughput
                .iter()
                .find(|t| t.engine == engine && t.threads == threads)
                .map(Throughput::per_second)
        };
        Some(rate(SimEngine::MemtxSwarm)? / rate(SimEngine::StaterightSimulation)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_counts_a_seed_not_found_as_the_slowest() {
        assert_eq!(median(&[Some(3.0), Some(1.0), Some(2.0)]), Some(2.0));
        assert_eq!(median(&[None, Some(1.0), Some(2.0)]), Some(2.0));
        assert_eq!(median(&[None, None, Some(2.0)]), None);
        assert_eq!(median(&[Some(4.0), Some(1.0)]), Some(1.0));
        assert_eq!(median(&[]), None);
    }
}
