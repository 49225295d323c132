//! The HTML report: one self-contained page (no network, no script, opens from disk) per
//! run, per trace and per suite.
//!
//! A run's page ([`run_page`]) shows the verdict first (pass, fail or incomplete, and what
//! failed), then the configuration and domain, the plots ([`super::plot`]: distinct states per
//! depth, states per second and memory over time), the property table, the rule-coverage table
//! (rules coloured by how often they fired, never-exercised rules marked), and each
//! counterexample step by step: the action, what it changed, the invariants failing after it,
//! and the records' derivation DAG after the step ([`super::dag`]), lifecycle states as
//! colours and the changed records outlined in red. [`trace_page`] draws one trace the same
//! way (`memtx replay TRACE --html OUT`), [`suite_page`] links the presets' pages.

use super::dag::{dag_svg, legend_html};
use super::plot::{chart_svg, Chart};
use super::{domain_rows, Outcome, PropertyOutcome, RunReport, Verdict};
use crate::trace::replay::{replay, ReplayReport};
use crate::trace::{changed_records, Trace};
use memtx_model::properties::PropertyDef;
use std::fmt::Write as _;

/// `s` with `&`, `<`, `>` and `"` escaped for HTML text and attributes.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.verdict{font-size:1.3em;padding:.6em 1em;border-radius:6px;margin:1em 0}\
.pass{background:#d8f5d8;border:2px solid #3a3}.fail{background:#fde0e0;border:2px solid #c33}\
.incomplete{background:#fff1cc;border:2px solid #c90}.bad{color:#b00;font-weight:bold}.never{background:#fde0e0}\
.swatch{display:inline-block;padding:2px 6px;border:1px solid #999;border-radius:4px;margin:2px;font-size:.85em}\
.step{border-top:1px solid #ddd;padding:.5em 0}.dag svg{max-width:100%;height:auto}\
.plots svg{max-width:100%;height:auto}code{background:#f6f6f6;padding:1px 3px}\
.refused{color:#8a4b00;font-weight:bold}.changes{margin:.2em 0}.met{color:#262}";

/// The page skeleton around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n",
        esc(title)
    )
}

/// The verdict banner: `result: PASS (…)` on the outcome's colour.
fn verdict_banner(outcome: Outcome, line: &str) -> String {
    let class = match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Incomplete => "incomplete",
    };
    format!(
        "<div class=\"verdict {class}\" id=\"verdict\" data-result=\"{class}\">{}</div>\n",
        esc(line)
    )
}

/// A two-column table of `rows`.
fn kv_table(rows: &[(String, String)]) -> String {
    let mut s = String::from("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</table>\n");
    s
}

/// The charts of a run: states per depth, states per second and memory over time.
fn plots(r: &RunReport) -> String {
    let mut charts: Vec<Chart<'_>> = Vec::new();
    charts.push(Chart {
        title: "distinct states per depth",
        x_label: "depth (1 = the initial state)",
        y_label: "new distinct states",
        points: r
            .states_per_depth
            .iter()
            .enumerate()
            .map(|(d, &n)| ((d + 1) as f64, n as f64))
            .collect(),
        integer_x: true,
        bars: false,
    });
    let mut rate = Vec::new();
    let mut last = (0.0, 0u64);
    for s in &r.samples {
        let dt = s.seconds - last.0;
        if dt > 1e-6 {
            rate.push((s.seconds, (s.distinct.saturating_sub(last.1)) as f64 / dt));
            last = (s.seconds, s.distinct);
        }
    }
    charts.push(Chart {
        title: "distinct states per second",
        x_label: "seconds",
        y_label: "states/s",
        points: rate,
        integer_x: false,
        bars: false,
    });
    // The resident memory the report's `peak memory` is the peak of, so that the chart and
    // the figure agree (the explorer's allocated capacity can exceed what is resident).
    let mib = |bytes: u64| bytes as f64 / (1u64 << 20) as f64;
    let memory_title = match r.peak_memory_bytes {
        Some(peak) => format!("resident memory (peak {} MiB)", peak >> 20),
        None => "resident memory".to_string(),
    };
    charts.push(Chart {
        title: &memory_title,
        x_label: "seconds",
        y_label: "MiB",
        points: r
            .samples
            .iter()
            .filter_map(|s| Some((s.seconds, mib(s.resident_bytes?))))
            .collect(),
        integer_x: false,
        bars: false,
    });
    // Over time needs at least two samples: a run shorter than the sampling interval has one.
    for c in charts.iter_mut().skip(1) {
        if c.points.len() < 2 {
            c.points.clear();
        }
    }
    let mut s = String::from("<div class=\"plots\">\n");
    for c in &charts {
        match chart_svg(c) {
            Some(svg) => {
                let _ = writeln!(s, "<figure class=\"plot\">{svg}</figure>");
            }
            None => {
                let _ = writeln!(
                    s,
                    "<p>{}: not plotted (the run was shorter than two sampling intervals of 0.2 s).</p>",
                    esc(c.title)
                );
            }
        }
    }
    s.push_str("</div>\n");
    s
}

fn properties_table(r: &RunReport) -> String {
    let mut s = String::from(
        "<table id=\"properties\"><tr><th>property</th><th>kind</th><th>verdict</th><th>trace</th></tr>\n",
    );
    for p in &r.properties {
        let cell = r.cell(p);
        let class = if p.verdict.is_failure() {
            " class=\"bad\""
        } else {
            ""
        };
        let trace = p.trace.as_deref().map_or("-".to_string(), |t| {
            format!("<a href=\"{}\">{}</a>", esc(t), esc(t))
        });
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td{class}>{}</td><td>{trace}</td></tr>",
            esc(&p.name),
            p.kind.name(),
            esc(&cell)
        );
    }
    s.push_str("</table>\n");
    s
}

/// The background of a coverage cell: white for rules that fired most, deepening blue for
/// fewer firings; never-exercised rules get the `never` class.
fn coverage_table(rules: Option<&super::RuleCoverage>) -> String {
    let Some(rules) = rules else {
        return "<p>Rule coverage was not collected (stateright engine).</p>\n".into();
    };
    let max = rules
        .rules
        .iter()
        .map(|c| c.fired)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut s = format!(
        "<p id=\"rules-summary\">{}</p>\n<table id=\"coverage\"><tr><th>rule</th><th>section</th><th>steps that fired it</th><th>first fired after step</th></tr>\n",
        esc(&rules.summary_line())
    );
    for c in &rules.rules {
        let (class, style): (&str, String) = if c.fired == 0 {
            (" class=\"never\"", String::new())
        } else {
            // A log scale: one firing is light, the most fired rule saturated.
            let t = ((c.fired as f64).ln() / max.ln().max(1e-9)).clamp(0.0, 1.0);
            let light = (95.0 - 45.0 * t).round();
            ("", format!(" style=\"background:hsl(210,80%,{light}%)\""))
        };
        let _ = writeln!(
            s,
            "<tr{class}><td><code>{}</code></td><td>{}</td><td{style}>{}</td><td>{}</td></tr>",
            esc(&c.id),
            esc(&c.section),
            if c.fired == 0 {
                "never".to_string()
            } else {
                c.fired.to_string()
            },
            c.first_step.map_or("-".into(), |n| n.to_string())
        );
    }
    s.push_str("</table>\n");
    s
}

/// The configuration's bounds and domain, a row each.
fn config_rows(cfg: &memtx_model::config::Config) -> Vec<(String, String)> {
    let b = &cfg.bounds;
    let mut config = vec![
        ("agents".to_string(), b.agents.to_string()),
        ("record ids".to_string(), b.records.to_string()),
        ("clock".to_string(), format!("0..={}", b.ticks)),
        (
            "slots × values".to_string(),
            format!("{} × {}", b.slots, b.values),
        ),
        (
            "sources (authority)".to_string(),
            b.sources
                .iter()
                .enumerate()
                .map(|(i, a)| format!("src{i} {}", super::serde_name(a)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    config.extend(
        domain_rows(&cfg.domain)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    config
}

/// One counterexample (or any trace) step by step, from its replay: each step's action, every
/// change it made (records, revocation requests, transactions, contexts, the rollback log), a
/// refusal worded as one, the invariants failing after it and the records' DAG with the changed
/// records outlined.
fn steps_html(report: &ReplayReport, failing_key: Option<&str>) -> String {
    let mut s = format!("<p>Lifecycle colours: {}</p>\n", legend_html());
    for pair in report.steps.windows(2) {
        let (pre, post) = (&pair[0], &pair[1]);
        let failing = &post.failing;
        let highlight = failing_key.is_some_and(|k| failing.iter().any(|f| f == k));
        let what = match &post.refused {
            Some(r) => format!(
                "<p class=\"refused\">refused: {} — nothing changed</p>\n",
                esc(&r.describe())
            ),
            None if post.changes.is_empty() => "<p>nothing changed</p>\n".to_string(),
            None => {
                let items: String = post
                    .changes
                    .iter()
                    .map(|c| format!("<li>{}</li>", esc(c)))
                    .collect();
                format!("<ul class=\"changes\">{items}</ul>\n")
            }
        };
        let dag = if post.refused.is_some() {
            String::new()
        } else {
            format!(
                "<div class=\"dag\">{}</div>",
                dag_svg(&post.state, changed_records(&pre.state, &post.state))
            )
        };
        let _ = writeln!(
            s,
            "<div class=\"step\" id=\"step-{n}\"><h4>step {n}: <code>{}</code></h4>\n{what}<p>invariants failing after it: <span{}>{}</span></p>\n{dag}</div>",
            esc(&post.label),
            if highlight { " class=\"bad\"" } else { "" },
            if failing.is_empty() { "none".to_string() } else { esc(&failing.join(", ")) },
            n = post.step
        );
    }
    s
}

/// The page of one run, with `traces` the counterexamples' traces (by property key).
pub fn run_page(r: &RunReport, traces: &[(String, Trace)]) -> String {
    let title = format!(
        "memtx check: preset {}, variant {}",
        r.config.preset,
        r.variant.name()
    );
    let mut body = format!("<h1>{}</h1>\n", esc(&title));
    body.push_str(&verdict_banner(r.outcome(), &r.result_line()));
    let mut summary = vec![
        ("command".to_string(), r.command.clone()),
        ("coverage".to_string(), r.coverage.to_string()),
        ("unique states".to_string(), r.unique_states.to_string()),
        ("total states".to_string(), r.total_states.to_string()),
        ("max depth".to_string(), r.max_depth.to_string()),
        ("seconds".to_string(), format!("{:.2}", r.seconds)),
        (
            "engine, threads".to_string(),
            format!("{}, {}", r.engine, r.threads),
        ),
    ];
    if let Some(group) = &r.symmetry_group {
        summary.push(("symmetry".into(), group.clone()));
    }
    if let Some(level) = r.resumed_from_level {
        summary.push((
            "resumed".into(),
            format!("from a checkpoint at level {level}"),
        ));
    }
    body.push_str(&kv_table(&summary));
    body.push_str("<h2>Configuration and domain</h2>\n");
    body.push_str(&kv_table(&config_rows(&r.config)));
    body.push_str("<h2>Growth</h2>\n");
    body.push_str(&plots(r));
    body.push_str("<h2>Properties</h2>\n<p>Each property in full: <code>docs/protocol.md</code> in the memtx repository.</p>\n");
    body.push_str(&properties_table(r));
    body.push_str("<h2>Rule coverage</h2>\n");
    body.push_str(&coverage_table(r.rules.as_ref()));
    let violated: Vec<&PropertyOutcome> = r
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Violated)
        .collect();
    if !violated.is_empty() {
        body.push_str("<h2>Counterexamples</h2>\n");
        for p in violated {
            let _ = writeln!(body, "<h3 id=\"cx-{}\">{}</h3>", esc(&p.key), esc(&p.name));
            match traces.iter().find(|(k, _)| *k == p.key) {
                Some((_, t)) => match replay(t, None) {
                    Ok(report) => body.push_str(&steps_html(&report, Some(&p.key))),
                    Err(e) => {
                        let _ = writeln!(
                            body,
                            "<p class=\"bad\">the trace does not replay: {}</p>",
                            esc(&e.to_string())
                        );
                    }
                },
                None => body.push_str("<p>(no trace saved)</p>\n"),
            }
        }
    }
    page(&title, &body)
}

/// The page of one trace (a saved counterexample or a scenario file), `origin` its path, drawn
/// from its replay `report`: the verdict first (what the trace shows, and whether the replay
/// met the recorded expectation), then the configuration and every step.
pub fn trace_page(trace: &Trace, report: &ReplayReport, origin: &str) -> String {
    let title = format!("memtx trace {origin}");
    let mut body = format!("<h1>{}</h1>\n", esc(&title));
    let failing = report.ever_failing();
    let shows = if failing.is_empty() {
        "every invariant holds at every step".to_string()
    } else {
        failing
            .iter()
            .map(|k| {
                let step = report.first_failure(k).unwrap_or_default();
                let name = PropertyDef::find(k).map_or(k.clone(), |p| p.name.to_string());
                format!("{name}: fails at step {step}")
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let met = if report.overridden {
        true
    } else {
        report.expectation_met()
    };
    let outcome = if !met || !failing.is_empty() {
        Outcome::Fail
    } else {
        Outcome::Pass
    };
    body.push_str(&verdict_banner(
        outcome,
        &format!("{shows} (variant {})", report.variant.name()),
    ));
    let _ = writeln!(
        body,
        "<p id=\"replay-verdict\" class=\"{}\">replay: {}</p>",
        if met { "met" } else { "bad" },
        esc(&report.verdict_line())
    );
    let mut rows = vec![
        ("preset".to_string(), trace.config.preset.clone()),
        ("variant".to_string(), report.variant.name().to_string()),
        ("property".to_string(), trace.property_key().to_string()),
        ("steps".to_string(), report.len().to_string()),
    ];
    if let Some(d) = &trace.description {
        rows.push(("description".into(), d.clone()));
    }
    if !trace.command.is_empty() {
        rows.push(("found by".into(), trace.command.clone()));
    }
    // Every invariant the final state violates, by name (not only the trace's property).
    if let Some(last) = report.steps.last() {
        let names: Vec<String> = last
            .failing
            .iter()
            .map(|k| PropertyDef::find(k).map_or(k.clone(), |p| p.name.to_string()))
            .collect();
        let shown = if names.is_empty() {
            "none".to_string()
        } else {
            names.join("; ")
        };
        rows.push(("violated in the final state".into(), shown));
    }
    body.push_str(&kv_table(&rows));
    let key = trace.property.as_ref().map(|p| p.key.as_str());
    body.push_str(&steps_html(report, key));
    page(&title, &body)
}

/// The suite's index: the preset × property matrix, each preset linking its page
/// (`<preset>-memtx.html`), and the union coverage line.
pub fn suite_page(suite: &super::suite::SuiteReport) -> String {
    let title = "memtx suite";
    let mut body = format!("<h1>{title}</h1>\n");
    let outcome = if suite.passed() {
        Outcome::Pass
    } else {
        Outcome::Fail
    };
    body.push_str(&verdict_banner(outcome, &suite.result_line()));
    let keys: Vec<&str> = suite
        .presets
        .first()
        .map(|r| r.properties.iter().map(|p| p.key.as_str()).collect())
        .unwrap_or_default();
    body.push_str("<table id=\"matrix\"><tr><th>preset</th><th>states</th><th>rules</th>");
    for k in &keys {
        let _ = write!(body, "<th>{}</th>", esc(k));
    }
    body.push_str("</tr>\n");
    for r in &suite.presets {
        let name = format!("{}-memtx", r.config.preset);
        let _ = write!(
            body,
            "<tr><td><a href=\"{n}.html\">{}</a></td><td>{}</td><td>{}</td>",
            esc(&r.config.preset),
            r.unique_states,
            r.rules
                .as_ref()
                .map_or("-".into(), |c| format!("{}/{}", c.exercised, c.total)),
            n = esc(&name)
        );
        for k in &keys {
            let cell = r.property(k).map_or("-".to_string(), |p| r.cell(p));
            let bad = r.property(k).is_some_and(|p| p.verdict.is_failure());
            let _ = write!(
                body,
                "<td{}>{}</td>",
                if bad { " class=\"bad\"" } else { "" },
                esc(&cell)
            );
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</table>\n");
    if let Some(sim) = &suite.simulation {
        let _ = writeln!(body, "<h2>{}</h2>", esc(&sim.heading()));
        body.push_str(
            "<table id=\"simulation\"><tr><th>variant</th><th>property</th><th>expected</th><th>result</th></tr>\n",
        );
        for run in &sim.runs {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>",
                esc(run.variant),
                esc(run.property.unwrap_or("all")),
                esc(&run.expected()),
                if run.as_expected() {
                    ""
                } else {
                    " class=\"bad\""
                },
                esc(&run.outcome())
            );
        }
        body.push_str("</table>\n");
    }
    body.push_str("<h2>Union rule coverage</h2>\n");
    let _ = writeln!(
        body,
        "<p id=\"union\">{}</p>",
        esc(&suite.union.summary_line())
    );
    page(title, &body)
}

/// The page of a simulation (`memtx simulate --report DIR`): the result (never a pass: no
/// violation is drawn as incomplete), the run and its configuration, the walks' lengths, rule
/// coverage and distinct states as the walks went on, the properties, every rule's firings, and
/// the shortened counterexample step by step.
pub fn simulation_page(r: &super::simulation::SimulationReport, trace: Option<&Trace>) -> String {
    let title = format!(
        "memtx simulate: preset {}, variant {}",
        r.config.preset,
        r.variant.name()
    );
    let mut body = format!("<h1>{}</h1>\n", esc(&title));
    let outcome = if r.violation.is_some() {
        Outcome::Fail
    } else {
        Outcome::Incomplete
    };
    body.push_str(&verdict_banner(outcome, &r.result_line()));
    let summary = vec![
        ("command".to_string(), r.command.clone()),
        ("reproduce".to_string(), r.reproduce.clone()),
        ("walks".to_string(), r.walks.to_string()),
        ("steps".to_string(), r.steps.to_string()),
        ("refused attempts".to_string(), r.refused.to_string()),
        (
            "walks stuck before their bound".to_string(),
            r.stuck_walks.to_string(),
        ),
        (
            "deepest walk".to_string(),
            format!("{} steps", r.deepest_walk),
        ),
        (
            "distinct states seen".to_string(),
            format!(
                "about {} ({})",
                r.distinct_states_estimate, r.distinct_states_method
            ),
        ),
        (
            "seconds, threads".to_string(),
            format!("{:.2}, {}", r.seconds, r.threads),
        ),
        (
            "steps per second".to_string(),
            format!("{:.0}", r.steps_per_second),
        ),
        ("seed".to_string(), r.seed.to_string()),
    ];
    body.push_str(&kv_table(&summary));
    body.push_str("<h2>Configuration and domain</h2>\n");
    body.push_str(&kv_table(&config_rows(&r.config)));
    body.push_str("<h2>Walks</h2>\n");
    let walks_axis = "walks (after 1, 2, 4, … batches of 64, and at the end)";
    let charts = [
        Chart {
            title: "walks by length",
            x_label: "steps",
            y_label: "walks",
            points: r
                .walk_lengths
                .iter()
                .map(|&(len, n)| (len as f64, n as f64))
                .collect(),
            integer_x: true,
            bars: true,
        },
        Chart {
            title: "rules exercised as the walks went on",
            x_label: walks_axis,
            y_label: "rules fired",
            points: r
                .progress
                .iter()
                .map(|p| (p.walks as f64, f64::from(p.rules_exercised)))
                .collect(),
            integer_x: false,
            bars: false,
        },
        Chart {
            title: "distinct states seen (estimated) as the walks went on",
            x_label: walks_axis,
            y_label: "states",
            points: r
                .progress
                .iter()
                .map(|p| (p.walks as f64, p.distinct_estimate as f64))
                .collect(),
            integer_x: false,
            bars: false,
        },
    ];
    body.push_str("<div class=\"plots\">\n");
    for c in &charts {
        match chart_svg(c) {
            Some(svg) => {
                let _ = writeln!(body, "<figure class=\"plot\">{svg}</figure>");
            }
            None => {
                let _ = writeln!(body, "<p>{}: nothing to plot.</p>", esc(c.title));
            }
        }
    }
    body.push_str("</div>\n<h2>Properties</h2>\n");
    body.push_str(
        "<table id=\"properties\"><tr><th>property</th><th>kind</th><th>what the walks saw</th></tr>\n",
    );
    for p in &r.properties {
        // An example the walks did not reach is not a failure: walks prove nothing absent.
        let bad = p.verdict == "VIOLATED";
        let at = p
            .first
            .map(|s| format!(" (walk {}, step {})", s.walk, s.step))
            .unwrap_or_default();
        let _ = writeln!(
            body,
            "<tr><td>{} {}</td><td>{}</td><td{}>{}{}</td></tr>",
            esc(p.key),
            esc(p.name),
            p.kind,
            if bad { " class=\"bad\"" } else { "" },
            esc(p.verdict),
            esc(&at)
        );
    }
    body.push_str("</table>\n<h2>Rule coverage</h2>\n");
    body.push_str(&coverage_table(Some(&r.rules)));
    if let Some(v) = &r.violation {
        let _ = writeln!(
            body,
            "<h2 id=\"cx-{}\">Counterexample</h2>\n<p>Saved as <code>{}</code>; replay: <code>{}</code></p>",
            esc(v.property),
            esc(&v.trace),
            esc(&v.replay)
        );
        match trace.map(|t| replay(t, None)) {
            Some(Ok(report)) => body.push_str(&steps_html(&report, Some(v.property))),
            Some(Err(e)) => {
                let _ = writeln!(
                    body,
                    "<p class=\"bad\">the trace does not replay: {}</p>",
                    esc(&e.to_string())
                );
            }
            None => body.push_str("<p>(the trace was not read)</p>\n"),
        }
    }
    page(&title, &body)
}
