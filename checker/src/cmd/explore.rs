//! `memtx explore`: the web Explorer over the MemTX model ([`crate::web`]).
//!
//! The Explorer lets a person walk the state space by hand: the initial state, the operations
//! enabled in it (and those refused, with the model's reason), the state each leads to, and so
//! on. Each state is shown as the model's record table (`State`'s `Debug`, one row per record),
//! the records' derivation DAG ([`crate::report::dag`], the records the last step changed
//! outlined in red), and every property's verdict *at that state*.
//!
//! It listens on 127.0.0.1 unless told otherwise: `--address` takes loopback addresses only,
//! and any other address must be given with `--bind` (then a warning says that anyone who can
//! reach it can drive the checker).
//! `--trace FILE` prints the URL that opens the Explorer at the trace's last state, leaving out
//! (and naming) the steps the model refuses, and the verdicts at that state (the page shows
//! the same).

use crate::cli::ExploreArgs;
use crate::error::{ErrorKind, UserError};
use crate::web::{api, Explorer};
use memtx_model::MemTx;
use stateright::Model;
use std::io::Write;

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
    let listener = std::net::TcpListener::bind(&address).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot listen on {address}: {e}"),
            "choose another --port",
        )
    })?;
    // `--port 0` lets the system choose; the URL names the port it chose.
    let address = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or(address);
    let explorer = Explorer {
        check_command: format!(
            "memtx check --preset {} --variant {}",
            cfg.preset,
            variant.name()
        ),
        model: MemTx::new(cfg.clone()),
    };
    let mut url = format!("http://{address}/");
    let mut at_end = None;
    if let Some(path) = &args.trace {
        let trace = crate::trace::Trace::read(path)?;
        trace.check_config(&cfg)?;
        let opened = open_at_end(&explorer, &trace).map_err(|step| {
            UserError::with_fix(
                ErrorKind::Malformed,
                format!(
                    "{}: step {step} of the trace is not one the Explorer can follow from the state before it (the domain does not propose it)",
                    path.display()
                ),
                format!("replay it to see why: memtx replay {}", path.display()),
            )
        })?;
        url = format!("http://{address}/#/path/{}", opened.encoded);
        at_end = Some(opened);
    }
    let mut lines = vec![format!(
        "serving the Explorer at {url} for preset {}, variant {} (Ctrl-C to stop)",
        cfg.preset,
        variant.name()
    )];
    if let Some(opened) = &at_end {
        lines.extend(opened.summary());
    }
    // Said once; a closed standard output (a reader gone) must not stop the server.
    for line in lines {
        let _ = writeln!(std::io::stdout(), "memtx explore: {line}");
    }
    // Serves until interrupted (the default SIGINT action ends the process).
    let e = crate::web::serve(listener, explorer);
    Err(UserError::new(
        ErrorKind::Io,
        format!("the Explorer stopped accepting connections on {address}: {e}"),
    ))
}

/// Where `memtx explore --trace` opens: the path through the trace's performed steps.
struct Opened {
    /// The path, as the Explorer's address names it (indices among the enabled operations).
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
    /// What the terminal says beside the URL (the page opens on the same verdicts).
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
            "at the trace's end: invariants violated: {}; examples reached: {}",
            list(&self.failing),
            list(&self.examples)
        ));
        lines
    }
}

/// The path through `trace`'s steps that the model performs, skipping the refused ones (a
/// refused step changes nothing, so the path reaches the state the replay ends in); `Err` with
/// the 1-based step the Explorer cannot follow (performed by the model, but not an operation
/// the configuration's domain proposes there).
fn open_at_end(explorer: &Explorer, trace: &crate::trace::Trace) -> Result<Opened, usize> {
    let model = &explorer.model;
    let cfg = &model.cfg;
    let mut state = model.init_states().into_iter().next().ok_or(0usize)?;
    let mut indices = Vec::new();
    let mut refused = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        match memtx_model::machine::step(cfg, &state, &step.action) {
            Ok(next) => {
                indices.push(api::index_of(explorer, &state, &step.action).ok_or(i + 1)?);
                state = next;
            }
            Err(_) => refused.push(i + 1),
        }
    }
    let key = |name: &str| name.split_whitespace().next().unwrap_or(name).to_string();
    let mut failing = Vec::new();
    let mut examples = Vec::new();
    for p in &model.selected {
        let holds = (p.holds)(model, &state);
        match p.is_invariant() {
            true if !holds => failing.push(key(p.name)),
            false if holds => examples.push(key(p.name)),
            _ => {}
        }
    }
    Ok(Opened {
        encoded: indices
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
        refused,
        performed: indices.len(),
        failing,
        examples,
    })
}
