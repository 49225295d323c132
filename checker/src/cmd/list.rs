//! `memtx list`: properties, variants and presets.

use memtx_model::config::VARIANTS;
use memtx_model::presets::{preset, PRESETS};
use memtx_model::properties::PROPERTIES;
use memtx_model::Variant;
use serde_json::json;

pub use crate::report::PROTOCOL_DOC;

/// The listing as JSON.
pub fn as_json() -> serde_json::Value {
    json!({
        "protocol": PROTOCOL_DOC,
        "properties": PROPERTIES.iter().map(|p| json!({
            "key": p.key, "name": p.name, "kind": if p.is_invariant() { "always" } else { "sometimes" },
        })).collect::<Vec<_>>(),
        "variants": VARIANTS.iter().map(|v| json!({
            "name": v.name, "removes": v.removes, "expected_to_break": v.expected_to_break,
        })).collect::<Vec<_>>(),
        "presets": PRESETS.iter().filter_map(|n| preset(n, Variant::Memtx)).map(|c| json!({
            "name": c.preset, "bounds": c.bounds, "domain": c.domain,
        })).collect::<Vec<_>>(),
    })
}

/// The listing as text.
pub fn as_text() -> String {
    let mut out = format!(
        "The protocol, every rule with its id and every property in full: {PROTOCOL_DOC}\n\n\
         PROPERTIES (always = invariant, sometimes = example that must be reached)\n"
    );
    for p in PROPERTIES {
        out.push_str(&format!(
            "  {:<3} {:<9} {}\n",
            p.key,
            if p.is_invariant() {
                "always"
            } else {
                "sometimes"
            },
            &p.name[p.key.len() + 1..]
        ));
    }
    out.push_str("\nVARIANTS (--variant NAME)\n");
    for v in VARIANTS {
        let breaks = if v.expected_to_break.is_empty() {
            "-".to_string()
        } else {
            v.expected_to_break.join(", ")
        };
        out.push_str(&format!(
            "  {:<26} removes {:<75} expected to break: {breaks}\n",
            v.name, v.removes
        ));
    }
    out.push_str(
        "\nPRESETS (--preset NAME; `memtx suite` checks quick, paper and the focused presets)\n",
    );
    for c in PRESETS.iter().filter_map(|n| preset(n, Variant::Memtx)) {
        let b = &c.bounds;
        out.push_str(&format!(
            "  {:<12} agents {} records {} ticks {} slots {} values {} sources {:?}\n",
            c.preset, b.agents, b.records, b.ticks, b.slots, b.values, b.sources
        ));
        out.push_str(&format!(
            "               domain {}\n",
            serde_json::to_string(&c.domain).unwrap_or_default()
        ));
    }
    out
}
