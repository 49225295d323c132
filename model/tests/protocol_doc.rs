//! `docs/protocol.md` is the project's own account of the protocol: every rule of the rule
//! table must appear in it with its id, its statement and the function that implements it, and
//! every property with its key (regenerate the table from `model/src/rules.rs` when a rule
//! changes).

use memtx_model::properties::PROPERTIES;
use memtx_model::rules::RULES;

#[test]
fn the_protocol_document_names_every_rule_and_property() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    let doc = std::fs::read_to_string(&path).expect("docs/protocol.md exists");
    for r in RULES {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", r.id)))
            .unwrap_or_else(|| panic!("docs/protocol.md has no row for {}", r.id));
        assert!(
            row.contains(&r.statement.replace('|', "\\|")),
            "{}: the statement differs",
            r.id
        );
        assert!(
            row.contains(r.implemented_by),
            "{}: the implementing function differs",
            r.id
        );
    }
    for p in PROPERTIES {
        let named = if p.is_invariant() {
            format!("**{}**", p.key)
        } else {
            format!("{} ", p.key)
        };
        assert!(
            doc.contains(&named),
            "docs/protocol.md does not state {}",
            p.key
        );
    }
}
