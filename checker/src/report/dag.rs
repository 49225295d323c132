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
use memtx_model::record::{Kind, RecordSet};
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

/// The two-line label of record `id`: `r1 Summary` / `Committed`, with slot and value for a
/// belief and the effect for a tool call.
fn label(id: u8, state: &State) -> String {
    let r = state.record(id);
    let what = match r.kind {
        Kind::Belief => format!(" s{}=v{} src{}", r.slot, r.value, r.source),
        _ => String::new(),
    };
    let effect = r
        .effect
        .map(|e| format!(" {}", format!("{e:?}").to_lowercase()))
        .unwrap_or_default();
    format!(
        "r{id} {}{what}\n{}{effect}",
        kind(r.kind),
        life_name(r.life())
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
        let size = layout::core::geometry::get_size_for_str(&text, 13);
        let size = Point::new(size.x + 16.0, size.y + 10.0);
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
    svg.finalize()
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
