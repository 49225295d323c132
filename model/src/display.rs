//! Readable printing: a state as a table, an operation as one line.

use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, Record, FOREVER};
use crate::state::State;
use std::fmt::{self, Write};

/// The short name of a record kind: `Belief`, `Summary`, `Profile`, `Tool(rev)`, `Tool(irr)`.
pub fn kind(k: Kind) -> &'static str {
    match k {
        Kind::Belief => "Belief",
        Kind::Summary => "Summary",
        Kind::Profile => "Profile",
        Kind::ReversibleAction => "Tool(rev)",
        Kind::IrreversibleAction => "Tool(irr)",
    }
}

fn validity(r: &Record) -> String {
    if r.validity.until == FOREVER {
        format!("[{},∞)", r.validity.from)
    } else {
        format!("[{},{})", r.validity.from, r.validity.until)
    }
}

/// One record as a table row.
pub fn record_row(id: u8, r: &Record) -> String {
    let what = if r.kind == Kind::Belief {
        format!("s{}=v{}", r.slot, r.value)
    } else {
        "-".into()
    };
    let mut extra = String::new();
    if let Some(reason) = r.reason {
        let _ = write!(extra, " reason={reason:?}");
    }
    if let Some(w) = r.writer {
        let _ = write!(extra, " staged-by=a{w}");
    }
    if let Some(seq) = r.seq {
        let _ = write!(extra, " seq={seq}");
    }
    if let Some(e) = r.effect {
        let _ = write!(extra, " effect={e:?}");
    }
    if r.pending_revocation {
        extra.push_str(" PENDING-REVOCATION");
    }
    if !r.implicit.is_empty() {
        let _ = write!(extra, " implicit={:?}", r.implicit);
    }
    if let Some(o) = r.observed {
        let _ = write!(extra, " observed={o}");
    }
    if !r.doubted_at_execution.is_empty() {
        let _ = write!(extra, " doubted-at-exec={:?}", r.doubted_at_execution);
    }
    // Source and confidence are a belief's evidence; views and tool calls carry none.
    let evidence = if r.kind == Kind::Belief {
        format!(
            "src{} {}",
            r.source,
            format!("{:?}", r.confidence).to_lowercase()
        )
    } else {
        "-".into()
    };
    format!(
        "r{id:<2} {:<10} {:<6} {:<9} a{} {:<7} parents={:<10} {:<7} {:<11}{extra}",
        kind(r.kind),
        what,
        evidence,
        r.owner,
        format!("{:?}", r.scope),
        format!("{:?}", r.parents),
        validity(r),
        format!("{:?}", r.life()),
    )
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "clock={} next_seq={} records={}",
            self.clock,
            self.next_seq,
            self.len()
        )?;
        for (id, r) in self.records().iter().enumerate() {
            writeln!(f, "  {}", record_row(id as u8, r))?;
        }
        for (agent, tx) in self.txns().iter().enumerate() {
            if let Some(tx) = tx {
                writeln!(
                    f,
                    "  txn a{agent}: {:?} {:?} snapshot={:?} snapshot_seq={}",
                    tx.tier, tx.isolation, tx.snapshot, tx.snapshot_seq
                )?;
            }
        }
        for (agent, context) in self.contexts().iter().enumerate() {
            if !context.is_empty() {
                writeln!(f, "  context a{agent}: {context:?}")?;
            }
        }
        for id in self.ids() {
            let log = self.audit(id);
            if log.cause.is_some() {
                let repairs: Vec<String> = log.repairs().map(|r| format!("{r:?}")).collect();
                writeln!(
                    f,
                    "  log r{id}: {} (latest cause r{})",
                    repairs.join("+"),
                    log.cause.unwrap_or(id)
                )?;
            }
        }
        if !self.ghost.violated.is_empty() {
            let v: Vec<String> = self
                .ghost
                .violated
                .numbers()
                .map(|n| format!("I{n}"))
                .collect();
            writeln!(f, "  ghost: violated {}", v.join(", "))?;
        }
        Ok(())
    }
}

/// One operation as a short line, e.g. `a0 Stage Belief s0=v1 src2 high Shared parents={r0} [0,∞)`.
pub fn op_line(op: &Op) -> String {
    match op {
        Op::Tick => "Tick".into(),
        Op::Observe {
            source,
            slot,
            value,
            confidence,
            scope,
            owner,
        } => {
            format!("Observe s{slot}=v{value} src{source} {confidence:?} {scope:?} owner=a{owner}")
        }
        Op::Begin {
            agent,
            tier,
            isolation,
        } => format!("a{agent} Begin {tier:?} {isolation:?}"),
        Op::Stage {
            agent,
            kind: k,
            slot,
            value,
            source,
            confidence,
            scope,
            parents,
            validity: v,
        } => {
            let until = if v.until == FOREVER {
                "∞".to_string()
            } else {
                v.until.to_string()
            };
            let what = if *k == Kind::Belief {
                format!(" s{slot}=v{value} src{source} {confidence:?}")
            } else {
                String::new()
            };
            format!(
                "a{agent} Stage {}{what} {scope:?} parents={parents:?} [{},{until})",
                kind(*k),
                v.from
            )
        }
        Op::Adopt { agent, record } => format!("a{agent} Adopt r{record}"),
        Op::Commit { agent } => format!("a{agent} Commit"),
        Op::Abort { agent } => format!("a{agent} Abort"),
        Op::CallTool {
            agent,
            reversible,
            support,
        } => {
            format!(
                "a{agent} CallTool {} support={support:?}",
                if *reversible {
                    "reversible"
                } else {
                    "irreversible"
                }
            )
        }
        Op::RequestRevocation { record } => format!("RequestRevocation r{record}"),
        Op::ApplyRevocation { record } => format!("ApplyRevocation r{record}"),
        Op::Revalidate { record } => format!("Revalidate r{record}"),
        Op::Rebuild { view } => format!("Rebuild r{view}"),
        Op::Resolve { record, keep } => format!(
            "Resolve r{record} {}",
            if *keep { "keep" } else { "reject" }
        ),
        Op::Read { agent, record } => format!("a{agent} Read r{record}"),
        Op::EndSession { agent } => format!("a{agent} EndSession"),
    }
}

/// Lifecycle state name as docs/protocol.md spells it.
pub fn life_name(l: Life) -> &'static str {
    match l {
        Life::Raw => "Raw",
        Life::Tentative => "Tentative",
        Life::Validated => "Validated",
        Life::Committed => "Committed",
        Life::ActionSafe => "ActionSafe",
        Life::Quarantined => "Quarantined",
        Life::Superseded => "Superseded",
        Life::Revoked => "Revoked",
    }
}
