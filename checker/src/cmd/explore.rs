//! `memtx explore`: stateright's web Explorer over the MemTX model.
//!
//! The Explorer (stateright's `CheckerBuilder::serve`) lets a person walk the state space by
//! hand: the initial state, the operations enabled in it, the state each leads to, and so on,
//! with the properties' verdicts as the on-demand checker finds them. memtx shows each state
//! in the model's table display (`State`'s `Debug`, one row per record) and draws the path's
//! last state as the records' derivation DAG ([`crate::report::dag`]), the records the last
//! step changed outlined in red.
//!
//! It listens on 127.0.0.1 unless told otherwise: `--address` takes loopback addresses only,
//! and any other address must be given with `--bind` (then a warning says that anyone who can
//! reach it can drive the checker).
//! `--trace FILE` prints the URL that opens the Explorer at the trace's last state, leaving out
//! (and naming) the steps the model refuses, and the verdicts at that state.

use crate::cli::ExploreArgs;
use crate::error::{ErrorKind, UserError};
use memtx_model::{MemTx, Op, State};
use stateright::{Model, Path, Property};

/// [`MemTx`] as the Explorer shows it: the same model, with the DAG drawing as its SVG.
pub struct Explorable(pub MemTx);

/// Property `I` of the inner model, as a plain `fn` for [`Property`].
fn inner_property<const I: usize>(m: &Explorable, s: &State) -> bool {
    let ps = m.0.properties();
    ps.get(I).is_some_and(|p| (p.condition)(&m.0, s))
}

/// One `fn` per property index (the model has at most this many properties).
const CONDITIONS: [fn(&Explorable, &State) -> bool; 32] = [
    inner_property::<0>,
    inner_property::<1>,
    inner_property::<2>,
    inner_property::<3>,
    inner_property::<4>,
    inner_property::<5>,
    inner_property::<6>,
    inner_property::<7>,
    inner_property::<8>,
    inner_property::<9>,
    inner_property::<10>,
    inner_property::<11>,
    inner_property::<12>,
    inner_property::<13>,
    inner_property::<14>,
    inner_property::<15>,
    inner_property::<16>,
    inner_property::<17>,
    inner_property::<18>,
    inner_property::<19>,
    inner_property::<20>,
    inner_property::<21>,
    inner_property::<22>,
    inner_property::<23>,
    inner_property::<24>,
    inner_property::<25>,
    inner_property::<26>,
    inner_property::<27>,
    inner_property::<28>,
    inner_property::<29>,
    inner_property::<30>,
    inner_property::<31>,
];

impl Model for Explorable {
    type State = State;
    type Action = Op;

    fn init_states(&self) -> Vec<State> {
        self.0.init_states()
    }

    fn actions(&self, state: &State, actions: &mut Vec<Op>) {
        self.0.actions(state, actions)
    }

    fn next_state(&self, state: &State, op: Op) -> Option<State> {
        self.0.next_state(state, op)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.0
            .properties()
            .into_iter()
            .zip(CONDITIONS)
            .map(|(p, condition)| Property {
                expectation: p.expectation,
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, state: &State) -> bool {
        self.0.within_boundary(state)
    }

    fn format_action(&self, op: &Op) -> String {
        self.0.format_action(op)
    }

    fn as_svg(&self, path: Path<State, Op>) -> Option<String> {
        let states = path.into_states();
        let last = states.last()?;
        let changed = match states.len() {
            0 | 1 => memtx_model::RecordSet::EMPTY,
            n => crate::trace::changed_records(&states[n - 2], last),
        };
        Some(crate::report::dag::dag_svg(last, changed))
    }
}

/// Runs `memtx explore`: serves until interrupted (it returns only on an error).
pub fn explore_command(args: &ExploreArgs) -> Result<u8, UserError> {
    let variant = crate::setup::variant(&args.variant)
        .map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?;
    let cfg = crate::setup::config(&args.preset, &Default::default(), variant)
        .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    let (text, explicit) = match (&args.bind, &args.address) {
        (Some(b), _) => (b.as_str(), true),
        (None, Some(a)) => (a.as_str(), false),
        (None, None) => ("127.0.0.1", false),
    };
    let ip: std::net::IpAddr = text.parse().map_err(|_| {
        UserError::new(
            ErrorKind::Usage,
            format!(
                "'{}' is not an IP address: give e.g. 127.0.0.1",
                crate::input::cut(text)
            ),
        )
    })?;
    if !ip.is_loopback() {
        if !explicit {
            return Err(UserError::with_fix(
                ErrorKind::Usage,
                format!("refusing to serve the Explorer on {ip}: anyone who can reach it could drive the checker"),
                format!("pass --bind {ip} to do it anyway"),
            ));
        }
        eprintln!(
            "memtx explore: warning: listening on {ip}: anyone who can reach this address can drive the checker"
        );
    }
    let address = std::net::SocketAddr::new(ip, args.port).to_string();
    // Refuse a busy port with one line (stateright's server would panic on it).
    std::net::TcpListener::bind(&address).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot listen on {address}: {e}"),
            "choose another --port",
        )
    })?;
    let model = Explorable(MemTx::new(cfg.clone()));
    let mut url = format!("http://{address}/");
    let mut at_end = None;
    if let Some(path) = &args.trace {
        let trace = crate::trace::Trace::read(path)?;
        trace.check_config(&cfg)?;
        let opened = open_at_end(&model, &trace).map_err(|step| {
            UserError::with_fix(
                ErrorKind::Malformed,
                format!(
                    "{}: step {step} of the trace is not one the Explorer can follow from the state before it",
                    path.display()
                ),
                format!("replay it to see why: memtx replay {}", path.display()),
            )
        })?;
        url = format!("http://{address}/#/steps/{}", opened.encoded);
        at_end = Some(opened);
    }
    println!(
        "memtx explore: preset {}, variant {}: serving stateright's Explorer at {url} (Ctrl-C to stop)",
        cfg.preset,
        variant.name()
    );
    if let Some(opened) = &at_end {
        for line in opened.summary() {
            println!("memtx explore: {line}");
        }
    }
    let _checker = model.checker().threads(1).serve(address);
    // Serve until interrupted (the default SIGINT action ends the process).
    loop {
        std::thread::park();
    }
}

/// Where `memtx explore --trace` opens: the path through the trace's performed steps.
struct Opened {
    /// The path, in stateright's encoding for the Explorer's URL.
    encoded: String,
    /// The steps the model refused (1-based; a scenario's traps expect some), left out.
    refused: Vec<usize>,
    /// Steps performed.
    performed: usize,
    /// The invariants violated at the trace's last state (keys).
    failing: Vec<String>,
    /// The examples that hold at the trace's last state (keys).
    examples: Vec<String>,
}

impl Opened {
    /// What the terminal says beside the URL: the Explorer's own status panel and property
    /// list describe its on-demand search from the initial state, not the state it opens at.
    fn summary(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.refused.is_empty() {
            let steps: Vec<String> = self.refused.iter().map(|s| s.to_string()).collect();
            lines.push(format!(
                "the model refuses step{} {} of the trace (a refused step changes nothing): left out, the Explorer opens after the {} performed step{}",
                if self.refused.len() == 1 { "" } else { "s" },
                steps.join(", "),
                self.performed,
                if self.performed == 1 { "" } else { "s" }
            ));
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        lines.push(format!(
            "at the trace's end: invariants violated: {}; examples reached: {} (the Explorer's status panel and property list count its own search from the initial state)",
            list(&self.failing),
            list(&self.examples)
        ));
        lines
    }
}

/// The path through `trace`'s steps that the model performs, skipping the refused ones (a
/// refused step changes nothing, so the path reaches the state the replay ends in); `Err` with
/// the 1-based step the Explorer cannot follow.
fn open_at_end(model: &Explorable, trace: &crate::trace::Trace) -> Result<Opened, usize> {
    let cfg = &model.0.cfg;
    let mut state = model.init_states().into_iter().next().ok_or(0usize)?;
    let init = state.clone();
    let mut performed = Vec::new();
    let mut refused = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        match memtx_model::machine::step(cfg, &state, &step.action) {
            Ok(next) => {
                performed.push(step.action.clone());
                state = next;
            }
            Err(_) => refused.push(i + 1),
        }
    }
    let Some(path) = Path::from_actions(model, init.clone(), performed.iter()) else {
        // The first performed step stateright's path does not follow, by its number in the
        // trace.
        let numbers: Vec<usize> = (1..=trace.steps.len())
            .filter(|n| !refused.contains(n))
            .collect();
        let first = (1..=performed.len())
            .find(|&k| Path::from_actions(model, init.clone(), performed[..k].iter()).is_none())
            .unwrap_or(performed.len());
        return Err(numbers.get(first - 1).copied().unwrap_or(0));
    };
    let key = |name: &str| name.split_whitespace().next().unwrap_or(name).to_string();
    let mut failing = Vec::new();
    let mut examples = Vec::new();
    for p in model.0.properties() {
        let holds = (p.condition)(&model.0, &state);
        match p.expectation {
            stateright::Expectation::Always if !holds => failing.push(key(p.name)),
            stateright::Expectation::Sometimes if holds => examples.push(key(p.name)),
            _ => {}
        }
    }
    Ok(Opened {
        encoded: path.encode(model),
        refused,
        performed: performed.len(),
        failing,
        examples,
    })
}
