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

/// Each rule's implementing function is found where its name says: `a::b::f` is a `fn f` in
/// `model/src/a/b.rs` (or `a/b/mod.rs`; a method's type is skipped), so that a reader who follows docs/protocol.md's rule
/// table lands on the code, and a function renamed or moved without its rule fails here.
#[test]
fn every_rule_names_a_function_where_its_path_says() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for r in RULES {
        let (module, function) = r
            .implemented_by
            .rsplit_once("::")
            .unwrap_or_else(|| panic!("{}: `{}` names no module", r.id, r.implemented_by));
        // A method's path names its type after the module (`state::State::move_record`).
        let module: Vec<&str> = module
            .split("::")
            .take_while(|part| !part.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        let dir = src.join(module.join("/"));
        let file = [dir.with_extension("rs"), dir.join("mod.rs")]
            .into_iter()
            .find(|f| f.is_file())
            .unwrap_or_else(|| panic!("{}: no file for module `{}`", r.id, module.join("::")));
        let text = std::fs::read_to_string(&file).expect("a source file reads");
        let defines = text.lines().any(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix("pub ")
                .or_else(|| l.strip_prefix("pub(super) "))
                .or_else(|| l.strip_prefix("pub(crate) "))
                .unwrap_or(l);
            l.starts_with(&format!("fn {function}(")) || l.starts_with(&format!("fn {function}<"))
        });
        assert!(
            defines,
            "{}: {} defines no `fn {function}`",
            r.id,
            file.display()
        );
    }
}
