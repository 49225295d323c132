//! A conformance suite generated from the model (`memtx conformance`): the shortest witness of
//! every rule of the protocol, found by breadth-first search of the suite's presets under
//! `memtx` ([`witness`]), plus the scripted traps and controls of the six corruption families
//! and the harms the end-to-end properties exist for, each case as a scenario (with the
//! outcomes the protocol gives at every step) and as an event log (docs/event-log.md) that an
//! implementation's harness replays and `memtx validate-log` judges.
//!
//! Stable: the same memtx writes the same suite byte for byte (breadth-first order, the model's
//! order of proposals, sorted JSON, no timestamps).

pub mod witness;

use crate::error::{ErrorKind, UserError};
use crate::log::emit::emit_run;
use crate::trace::scenario::{RecordExpect, RefusalSeen, StepExpect};
use crate::trace::{Step, Trace};
use memtx_model::display::op_line;
use memtx_model::machine::step;
use memtx_model::rules::{take_fired, Fired, RULES};
use memtx_model::{Config, Op, State, Variant};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Rules that refuse for the bounded model's capacities (its clock bound, its fixed number of
/// records), not for anything the protocol decides. Their witnesses are cases of kind
/// [`CaseKind::Bound`]: they replay, and their logs conform (a log that says its clock or its
/// store is full sets the run's capacity), but an implementation without such bounds skips them.
pub const MODEL_BOUNDS: [&str; 4] = [
    "enable.tick.clock-bound",
    "enable.observe.free-id",
    "enable.stage.free-id",
    "enable.call.free-id",
];

/// The checks of the protocol an implementation can get wrong or leave out, each with the rules
/// that are it acting (refusing, quarantining, blocking, repairing). The index lists under each
/// check the cases in which one of its rules fires at some step (`checks`), and under each case
/// the checks that act in it: where a case fails an implementation, these say what to look at.
/// Not every listed case catches every way of skipping its check (a check skipped at commit
/// but kept at `Resolve(keep)`; a repair an abort makes moot). Rules that let something through
/// (`pipe.pass.*`, `gate.pass.*`, evidence by authority, disjoint scopes) are in no check.
pub const CHECKS: &[(&str, &[&str])] = &[
    ("evidence (§6.1)", &["pipe.evidence.fail"]),
    ("validity (§6.2)", &["pipe.validity.fail"]),
    (
        "stale write (§6.3)",
        &["pipe.conflict.stale", "pipe.conflict.stale-content"],
    ),
    (
        "conflict adjudication (§6.3)",
        &[
            "pipe.conflict.outranked",
            "pipe.conflict.review",
            "pipe.conflict.supersede-lower",
            "pipe.conflict.correction",
            "pipe.conflict.hidden-rival",
            "pipe.conflict.wider-rival",
            "pipe.conflict.narrower-rival-review",
            "pipe.conflict.several",
        ],
    ),
    (
        "lineage (§6.3)",
        &[
            "pipe.lineage.revoked",
            "pipe.lineage.inactive",
            "pipe.lineage.uncommitted-parent",
        ],
    ),
    (
        "permission inheritance (§6.3)",
        &["pipe.permission.fail", "pipe.permission.content"],
    ),
    ("dependency stability (§6.4)", &["pipe.stability.fail"]),
    (
        "action gate, condition 1: nothing in flight (§7.1)",
        &["gate.block.in-flight"],
    ),
    (
        "action gate, condition 2: ActionSafe support (§7.2)",
        &[
            "gate.block.no-action-safe",
            "gate.block.no-permitted-action-safe",
            "gate.block.support-not-action-safe",
        ],
    ),
    (
        "action gate: support and its ancestors in force and stable (§7)",
        &[
            "gate.block.support-expired",
            "gate.block.support-not-in-force",
            "gate.block.unstable-support",
            "gate.block.ancestor-not-in-force",
        ],
    ),
    (
        "cascade (§8)",
        &[
            "cascade.revoke-belief",
            "cascade.quarantine-view",
            "cascade.compensate",
            "cascade.leak",
            "cascade.below-view",
            "cascade.staged-descendant",
        ],
    ),
];

/// The `format` tag of the suite's index.
pub const INDEX_FORMAT: &str = "memtx-conformance";

/// What a case is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseKind {
    /// The shortest witness of one or more rules.
    Witness,
    /// A scripted trap of a corruption family: the protocol must stop it.
    Trap,
    /// A scripted control: the protocol must let it through.
    Control,
    /// The path on which a variant of §10 breaks an end-to-end property, under `memtx`: the
    /// protocol's outcomes where the harm would be.
    Harm,
    /// The witness of a refusal of the bounded model ([`MODEL_BOUNDS`]), not of the protocol.
    Bound,
}

/// One case of the suite.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its path in the suite, without extension (`rules/012-pipe.evidence.fail`).
    pub name: String,
    /// What it is.
    pub kind: CaseKind,
    /// Its family (a rule family, a corruption family, or the property of a harm).
    pub family: String,
    /// The rules it is the shortest witness of (witnesses only).
    pub witnesses: Vec<&'static str>,
    /// Every rule a step of it fires.
    pub fires: Vec<&'static str>,
    /// The scenario: configuration, operations, each step's outcomes.
    pub trace: Trace,
    /// The same case as an event log.
    pub log: Vec<String>,
}

/// A preset searched, and how far.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Searched {
    /// Its name.
    pub preset: String,
    /// States kept.
    pub states: usize,
    /// Whether every reachable state (up to symmetry) was expanded.
    pub complete: bool,
}

/// The generated suite.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The cases, witnesses first (in rule-table order), then traps and controls, then harms.
    pub cases: Vec<Case>,
    /// The presets searched.
    pub searched: Vec<Searched>,
    /// Rules no preset's search reached.
    pub unreached: Vec<&'static str>,
}

/// The scenario of `ops` under `cfg`, each step's expectation being what the protocol does:
/// refused for its first refusal rule, or every record it changed as it became. `None` when a
/// step is refused for no rule (an operation naming a record that does not exist): such a path
/// is not a case. Also every rule the steps fire.
fn scenario(cfg: &Config, ops: &[Op], description: String) -> Option<(Trace, Fired)> {
    let mut state = State::initial();
    let mut steps = Vec::with_capacity(ops.len());
    let mut all: Fired = 0;
    for op in ops {
        take_fired();
        let result = step(cfg, &state, op);
        let fired = take_fired();
        all |= fired;
        let mut expect = StepExpect::default();
        match result {
            Err(refusal) => {
                let seen = RefusalSeen::new(&refusal, fired);
                expect.refused = Some(seen.rules.first().cloned().or(seen.condition)?);
            }
            Ok(post) => {
                for id in crate::trace::changed_records(&state, &post).iter() {
                    let r = post.record(id);
                    expect.records.insert(
                        id,
                        RecordExpect {
                            life: Some(r.life()),
                            reason: Some(r.reason),
                            effect: r.kind.is_action().then_some(r.effect),
                            pending_revocation: Some(r.pending_revocation),
                        },
                    );
                }
                state = post;
            }
        }
        steps.push(Step {
            label: op_line(op),
            action: op.clone(),
            state: None,
            expect: (expect != StepExpect::default()).then_some(expect),
        });
    }
    let trace = Trace::scenario(cfg, steps, description);
    Some((trace, all))
}

fn rule_ids(fired: Fired) -> Vec<&'static str> {
    memtx_model::rules::in_set(fired).map(|r| r.id).collect()
}

/// Generates the suite: witnesses from a search of each of `presets` (at most `budget` states
/// each), and, when `regressions` holds them, the scripted traps and controls
/// (`regressions/scenarios/`) and the harms of I15–I18 (saved traces of variants breaking them).
pub fn generate(
    presets: &[String],
    budget: usize,
    regressions: Option<&Path>,
) -> Result<Suite, UserError> {
    // Each rule's shortest witness over every preset (the first preset wins a tie).
    let mut best: Vec<Option<(usize, Vec<Op>)>> = vec![None; memtx_model::rules::MAX_RULES];
    let mut searched = Vec::new();
    let mut configs = Vec::new();
    for (p, name) in presets.iter().enumerate() {
        let cfg = memtx_model::presets::preset(name, Variant::Memtx).ok_or_else(|| {
            UserError::with_fix(
                ErrorKind::Usage,
                format!("unknown preset '{}'", crate::input::cut(name)),
                format!("choose among {}", memtx_model::presets::PRESETS.join(", ")),
            )
        })?;
        let found = witness::search(&cfg, budget);
        searched.push(Searched {
            preset: name.clone(),
            states: found.states,
            complete: !found.stopped_early,
        });
        for (bit, w) in found.witnesses.into_iter().enumerate() {
            if let Some(w) = w {
                let shorter = best[bit]
                    .as_ref()
                    .is_none_or(|(_, ops)| w.ops.len() < ops.len());
                if shorter {
                    best[bit] = Some((p, w.ops));
                }
            }
        }
        configs.push(cfg);
    }
    // One case per distinct witness, in rule-table order of its first rule.
    let mut cases: Vec<Case> = Vec::new();
    let mut by_path: BTreeMap<(usize, Vec<String>), usize> = BTreeMap::new();
    for def in RULES {
        let Some((p, ops)) = &best[def.rule as usize] else {
            continue;
        };
        let bound = MODEL_BOUNDS.contains(&def.id);
        let key = (*p, ops.iter().map(op_line).collect::<Vec<_>>());
        if let Some(&i) = by_path.get(&key) {
            cases[i].witnesses.push(def.id);
            continue;
        }
        let n = cases.len();
        let name = format!("rules/{n:03}-{}", def.id);
        let description = format!(
            "Shortest witness of {} on preset {} ({} steps): {}",
            def.id,
            presets[*p],
            ops.len(),
            def.statement
        );
        let Some((trace, fired)) = scenario(&configs[*p], ops, description) else {
            continue;
        };
        by_path.insert(key, n);
        cases.push(Case {
            log: emit_run(&name, &configs[*p], ops),
            name,
            kind: if bound {
                CaseKind::Bound
            } else {
                CaseKind::Witness
            },
            family: crate::trace::scenario::serde_name(&def.family),
            witnesses: vec![def.id],
            fires: rule_ids(fired),
            trace,
        });
    }
    let unreached = RULES
        .iter()
        .filter(|d| best[d.rule as usize].is_none())
        .map(|d| d.id)
        .collect();
    if let Some(dir) = regressions {
        cases.extend(scripted(dir)?);
        cases.extend(harms(dir)?);
    }
    Ok(Suite {
        cases,
        searched,
        unreached,
    })
}

/// A case from a saved trace or scenario replayed under `memtx` (its own expectations dropped,
/// the protocol's outcomes recorded); `None` when a step is refused for no rule.
fn case_of(
    file: &Path,
    name: String,
    kind: CaseKind,
    family: String,
) -> Result<Option<Case>, UserError> {
    let saved = Trace::read(file)?;
    let cfg = Config {
        variant: Variant::Memtx,
        ..saved.config.clone()
    };
    let ops: Vec<Op> = saved.steps.iter().map(|s| s.action.clone()).collect();
    let description = match &saved.description {
        Some(d) => format!(
            "{d} (from {})",
            crate::input::user_path(&file.to_string_lossy())
        ),
        None => format!(
            "The path of {} under memtx: what the protocol does where variant {} breaks {}",
            crate::input::user_path(&file.to_string_lossy()),
            saved.config.variant.name(),
            saved.property_key()
        ),
    };
    Ok(
        scenario(&cfg, &ops, description).map(|(trace, fired)| Case {
            log: emit_run(&name, &cfg, &ops),
            name,
            kind,
            family,
            witnesses: Vec::new(),
            fires: rule_ids(fired),
            trace,
        }),
    )
}

fn sorted_files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| keep(&n.to_string_lossy())))
        .collect();
    out.sort();
    out
}

/// The scripted traps and controls of `regressions/scenarios/` (`<family>-trap.json`,
/// `<family>-control.json`).
fn scripted(regressions: &Path) -> Result<Vec<Case>, UserError> {
    let mut out = Vec::new();
    for file in sorted_files(&regressions.join("scenarios"), |n| n.ends_with(".json")) {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (family, kind) = match (stem.strip_suffix("-trap"), stem.strip_suffix("-control")) {
            (Some(f), _) => (f.to_string(), CaseKind::Trap),
            (_, Some(f)) => (f.to_string(), CaseKind::Control),
            _ => continue,
        };
        out.extend(case_of(&file, format!("families/{stem}"), kind, family)?);
    }
    Ok(out)
}

/// The harms: every saved trace of `regressions/` in which a variant breaks I15, I16, I17 or
/// I18, under `memtx`.
fn harms(regressions: &Path) -> Result<Vec<Case>, UserError> {
    let mut out = Vec::new();
    let mut dirs = sorted_files(regressions, |n| n != "scenarios" && n != "logs");
    dirs.retain(|d| d.is_dir());
    for dir in dirs {
        let folder = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for file in sorted_files(&dir, |n| {
            ["-I15.", "-I16.", "-I17.", "-I18."]
                .iter()
                .any(|k| n.contains(k))
                && n.ends_with(".trace.json")
        }) {
            let stem = file
                .file_name()
                .map(|s| {
                    s.to_string_lossy()
                        .trim_end_matches(".trace.json")
                        .to_string()
                })
                .unwrap_or_default();
            let key = stem.rsplit('-').next().unwrap_or("").to_string();
            out.extend(case_of(
                &file,
                format!("harms/{folder}-{stem}"),
                CaseKind::Harm,
                key,
            )?);
        }
    }
    Ok(out)
}

impl Suite {
    /// The index: presets searched, rule -> files, file -> rules, length, family, kind; the
    /// rules no preset reached.
    pub fn index(&self) -> Value {
        let mut rules: Map<String, Value> = Map::new();
        for def in RULES {
            let mut files: Vec<&str> = self
                .cases
                .iter()
                .filter(|c| c.witnesses.contains(&def.id))
                .map(|c| c.name.as_str())
                .collect();
            for c in &self.cases {
                if c.fires.contains(&def.id) && !files.contains(&c.name.as_str()) {
                    files.push(&c.name);
                }
            }
            rules.insert(
                def.id.to_string(),
                Value::Array(files.iter().map(|f| json!(format!("{f}.json"))).collect()),
            );
        }
        let mut files: Map<String, Value> = Map::new();
        for c in &self.cases {
            files.insert(
                format!("{}.json", c.name),
                json!({
                    "kind": c.kind,
                    "family": c.family,
                    "witness_of": c.witnesses,
                    "fires": c.fires,
                    "checks": CHECKS
                        .iter()
                        .filter(|(_, ids)| c.fires.iter().any(|f| ids.contains(f)))
                        .map(|(check, _)| *check)
                        .collect::<Vec<_>>(),
                    "length": c.trace.steps.len(),
                    "log": format!("{}.jsonl", c.name),
                }),
            );
        }
        let mut checks: Map<String, Value> = Map::new();
        for (check, ids) in CHECKS {
            let cases: Vec<String> = self
                .cases
                .iter()
                .filter(|c| c.kind != CaseKind::Bound && c.fires.iter().any(|f| ids.contains(f)))
                .map(|c| format!("{}.json", c.name))
                .collect();
            checks.insert(check.to_string(), json!({ "rules": ids, "cases": cases }));
        }
        json!({
            "format": INDEX_FORMAT,
            "version": 1,
            "tool": crate::trace::tool_id(),
            "presets": self.searched,
            "cases": self.cases.len(),
            "rules_total": RULES.len(),
            "rules_witnessed": RULES.len() - self.unreached.len(),
            "model_bounds": MODEL_BOUNDS,
            "model_bounds_why": "refusals of the bounded model (its clock bound, its fixed number of records), not of the protocol: their cases (kind bound) replay and their logs conform, but an implementation without such bounds skips them",
            "unreached": self.unreached,
            "rules": rules,
            "checks": checks,
            "checks_why": "each check of the protocol with the rules that are it acting, and the cases (bound cases aside) in which one of those rules fires at some step: an implementation that leaves the check out where it acts fails the case at that step",
            "files": files,
        })
    }

    /// Writes the suite under `out`: each case's scenario (`NAME.json`) and log (`NAME.jsonl`),
    /// and `index.json`; every file written whole (temporary, then rename).
    pub fn write(&self, out: &Path) -> Result<(), UserError> {
        for c in &self.cases {
            let scenario = out.join(format!("{}.json", c.name));
            if let Some(parent) = scenario.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| UserError::io("cannot create the suite's folder", parent, &e))?;
            }
            c.trace.write(&scenario)?;
            let log = c.log.join("\n") + "\n";
            crate::fsutil::write_atomic(&out.join(format!("{}.jsonl", c.name)), log.as_bytes())?;
        }
        let index = crate::fsutil::json_pretty(&self.index()) + "\n";
        crate::fsutil::write_atomic(&out.join("index.json"), index.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::rules::Family;

    /// Rules of the pipeline, the gate and the cascade that let something through: no check of
    /// [`CHECKS`] acts in them.
    const PASSES: [&str; 7] = [
        "pipe.evidence.by-authority",
        "pipe.conflict.disjoint",
        "pipe.pass.committed",
        "pipe.pass.action-safe",
        "pipe.deferred-effect",
        "gate.pass.weak",
        "gate.pass.strong",
    ];

    #[test]
    fn every_acting_rule_of_the_pipeline_gate_and_cascade_is_in_exactly_one_check() {
        let listed: Vec<&str> = CHECKS
            .iter()
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        for id in &listed {
            assert!(RULES.iter().any(|d| d.id == *id), "{id} is no rule");
            assert_eq!(listed.iter().filter(|l| *l == id).count(), 1, "{id} twice");
            assert!(!PASSES.contains(id), "{id} lets through");
        }
        for def in RULES {
            if matches!(
                def.family,
                Family::Pipeline | Family::Gate | Family::Cascade
            ) {
                assert!(
                    listed.contains(&def.id) || PASSES.contains(&def.id),
                    "{} is in no check",
                    def.id
                );
            }
        }
    }
}
