//! The records of a state drawn as their derivation DAG (SVG), laid out by `layout-rs`.
//!
//! One box per record, an arrow from each parent to its child (a belief to the summary built
//! on it, a summary to the profile, a belief to the tool call it supports), the box filled
//! with the colour of its lifecycle state ([`life_colour`]), and the records a step changed
//! drawn with a thick red border. The HTML report draws every step of a counterexample this
//! way, `memtx replay --html` a trace, and `memtx explore` the state being looked at. The
//! layout (ranks, crossing reduction, placement) is the library's: nothing is positioned by
//! hand here.

use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;
use memtx_model::display::{kind, life_name};
use memtx_model::record::{Kind, RecordSet, Scope};
use memtx_model::{Life, State};

/// The fill colour of a lifecycle state (the legend of every drawing).
pub fn life_colour(life: Life) -> &'static str {
    match life {
        Life::Raw => "#d9d9d9",
        Life::Tentative => "#ffe680",
        Life::Validated => "#bfe3ff",
        Life::Committed => "#9fdf9f",
        Life::ActionSafe => "#3fae5f",
        Life::Quarantined => "#ffb366",
        Life::Superseded => "#c9b3e6",
        Life::Revoked => "#ff8080",
    }
}

/// The three-line label of record `id`: `r1 Summary` (with slot, value and source for a
/// belief) / `Shared, owner a0` (who may read it: the question of an information-flow
/// property) / `Quarantined (review)` (lifecycle state, reason, and effect for a tool call).
fn label(id: u8, state: &State) -> String {
    let r = state.record(id);
    let what = match r.kind {
        Kind::Belief => format!(" s{}=v{} src{}", r.slot, r.value, r.source),
        _ => String::new(),
    };
    let reason = r
        .reason
        .map(|why| format!(" ({})", super::serde_name(&why)))
        .unwrap_or_default();
    let effect = r
        .effect
        .map(|e| format!(" {}", super::serde_name(&e)))
        .unwrap_or_default();
    let pending = if r.pending_revocation {
        ", revocation pending"
    } else {
        ""
    };
    format!(
        "r{id} {}{what}\n{}, owner a{}\n{}{reason}{effect}{pending}",
        kind(r.kind),
        scope_name(r.scope),
        r.owner,
        life_name(r.life())
    )
}

/// `Private`, `Shared`, `Public`.
fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Private => "Private",
        Scope::Shared => "Shared",
        Scope::Public => "Public",
    }
}

/// The size of a box around `text` in the 13 px serif font of the drawing: `layout-rs`'s own
/// estimate gives every character the width of the font size, twice what a serif font takes.
fn box_size(text: &str) -> Point {
    let lines = text.lines().count().max(1) as f64;
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    Point::new(widest * 7.0 + 20.0, lines * 15.0 + 10.0)
}

/// Sets an SVG's `width`, `height` and `viewBox` to what its boxes cover (plus `margin`), from
/// the `<rect>` elements: `layout-rs` sizes its canvas from its own, larger, estimates of the
/// labels, which left hundreds of blank pixels under a small drawing. Every edge runs between
/// two boxes, so the boxes bound the drawing.
fn fit_to_boxes(svg: &str, margin: f64) -> String {
    let number = |tag: &str, name: &str| -> Option<f64> {
        let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let rest = &tag[at..];
        rest[..rest.find('"')?].trim().parse().ok()
    };
    let (mut right, mut bottom) = (0.0f64, 0.0f64);
    for tag in svg.split("<rect").skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if let (Some(x), Some(y), Some(w), Some(h)) = (
            number(tag, "x"),
            number(tag, "y"),
            number(tag, "width"),
            number(tag, "height"),
        ) {
            right = right.max(x + w);
            bottom = bottom.max(y + h);
        }
    }
    let Some(start) = svg.find("<svg ") else {
        return svg.to_string();
    };
    let Some(end) = svg[start..].find('>').map(|e| start + e) else {
        return svg.to_string();
    };
    if right <= 0.0 || bottom <= 0.0 {
        return svg.to_string();
    }
    let (w, h) = ((right + margin).ceil(), (bottom + margin).ceil());
    format!(
        "{}<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\"{}",
        &svg[..start],
        &svg[end..]
    )
}

/// The derivation DAG of `state`'s records as an SVG document; the records in `changed` are
/// highlighted. A state without records gives a small SVG that says so.
pub fn dag_svg(state: &State, changed: RecordSet) -> String {
    if state.is_empty() {
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"160\" height=\"30\"><text x=\"4\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">no records yet</text></svg>".to_string();
    }
    let mut graph = VisualGraph::new(Orientation::TopToBottom);
    let mut handles = Vec::new();
    for id in state.ids() {
        let r = state.record(id);
        let text = label(id, state);
        let highlighted = changed.contains(id);
        let look = StyleAttr::new(
            Color::fast(if highlighted { "#d00000" } else { "#333333" }),
            if highlighted { 4 } else { 1 },
            Some(Color::fast(life_colour(r.life()))),
            6,
            13,
        );
        let shape = ShapeKind::new_box(&text);
        let size = box_size(&text);
        let element = Element::create_with_properties(
            shape,
            look,
            Orientation::TopToBottom,
            size,
            format!("r{id}"),
        );
        handles.push(graph.add_node(element));
    }
    for id in state.ids() {
        for parent in state.record(id).parents.iter() {
            if (parent as usize) < handles.len() {
                graph.add_edge(
                    Arrow::simple(""),
                    handles[parent as usize],
                    handles[id as usize],
                );
            }
        }
    }
    let mut svg = SVGWriter::new();
    graph.do_it(false, false, false, &mut svg);
    fit_to_boxes(&svg.finalize(), 10.0)
}

/// The legend of the lifecycle colours, as HTML.
pub fn legend_html() -> String {
    Life::ALL
        .iter()
        .map(|&l| {
            format!(
                "<span class=\"swatch\" style=\"background:{}\">{}</span>",
                life_colour(l),
                life_name(l)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawing's canvas ends where its boxes do: no blank band under a small DAG.
    #[test]
    fn the_canvas_fits_the_boxes() {
        let mut state = State::initial();
        let cfg = memtx_model::presets::preset("quick", memtx_model::Variant::Memtx).unwrap();
        for op in [
            memtx_model::Op::Begin {
                agent: 0,
                tier: memtx_model::txn::Tier::Medium,
                isolation: memtx_model::txn::Isolation::CommittedRead,
            },
            memtx_model::Op::Stage {
                agent: 0,
                kind: Kind::Belief,
                slot: 0,
                value: 0,
                source: 0,
                confidence: memtx_model::evidence::Confidence::High,
                scope: Scope::Shared,
                parents: RecordSet::EMPTY,
                validity: memtx_model::record::Validity {
                    from: 0,
                    until: 255,
                },
            },
        ] {
            state = memtx_model::machine::step(&cfg, &state, &op).unwrap();
        }
        let svg = dag_svg(&state, RecordSet::EMPTY);
        let height: f64 = svg
            .split("<svg width=\"")
            .nth(1)
            .and_then(|s| s.split("height=\"").nth(1))
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("a height");
        // One box of three lines (55 px) below layout-rs's 30 px top margin, plus 10.
        assert!(height <= 100.0, "height {height}:\n{svg}");
        assert!(svg.contains("Shared, owner a0"));
        assert!(svg.contains("viewBox=\"0 0 "));
    }

    #[test]
    fn fitting_keeps_every_box_inside() {
        let svg = "<?xml?><svg width=\"500\" height=\"900\" viewBox=\"0 0 500 900\" xmlns=\"http://www.w3.org/2000/svg\"><rect x=\"30\" y=\"30\" width=\"100\" height=\"40\"/><rect x=\"50\" y=\"120\" width=\"200\" height=\"40\" /></svg>";
        let fitted = fit_to_boxes(svg, 10.0);
        assert!(
            fitted.starts_with("<?xml?><svg width=\"260\" height=\"170\" viewBox=\"0 0 260 170\""),
            "{fitted}"
        );
        assert!(fitted.ends_with("</svg>"));
        assert_eq!(fit_to_boxes("<svg></svg>", 10.0), "<svg></svg>");
    }
}
