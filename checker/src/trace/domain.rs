//! Which field of a configuration keeps an operation out of its domain, for the error of a
//! trace step that the protocol would perform but the configuration does not enumerate.
//!
//! The enumerator (`memtx_model::machine::candidate_ops`) decides what is explored; this
//! module only *explains* a refusal, field by field, in the names of a scenario's `config`
//! (`bounds.agents`, `domain.writes`, ...). When no single field is at fault (the enumerator
//! declines the operation in that state, e.g. a parent that is not readable), it says so.

use memtx_model::config::{Config, ValidityShape};
use memtx_model::record::{Kind, Validity, FOREVER};
use memtx_model::Op;

use super::scenario::serde_name;

/// The field of `cfg` that keeps `op` out of the domain, phrased for a person, or `None`
/// when every field admits it (the state decides).
pub fn domain_fault(cfg: &Config, op: &Op, now: u8) -> Option<String> {
    let d = &cfg.domain;
    let b = &cfg.bounds;
    let agent_fault = |agent: u8| {
        (agent >= b.agents).then(|| {
            format!(
                "agent a{agent} is outside bounds.agents = {} (agents a0..a{})",
                b.agents,
                b.agents.saturating_sub(1)
            )
        })
    };
    let content_fault = |slot: u8, value: u8, source: u8| {
        if slot >= b.slots {
            Some(format!(
                "slot s{slot} is outside bounds.slots = {}",
                b.slots
            ))
        } else if value >= b.values {
            Some(format!(
                "value v{value} is outside bounds.values = {}",
                b.values
            ))
        } else if source as usize >= b.sources.len() {
            Some(format!(
                "source src{source} is outside bounds.sources ({} sources)",
                b.sources.len()
            ))
        } else {
            None
        }
    };
    let shape_fault = |source, confidence, scope| {
        let listed = d
            .writes
            .iter()
            .any(|w| (w.source, w.confidence, w.scope) == (source, confidence, scope));
        (!listed).then(|| {
            format!(
                "domain.writes has no shape {{source: {source}, confidence: {}, scope: {}}}",
                serde_name(&confidence),
                serde_name(&scope)
            )
        })
    };
    let off = |flag: bool, field: &str| (!flag).then(|| format!("{field} is false"));
    match *op {
        Op::Tick => (now >= b.ticks).then(|| format!("the clock is at bounds.ticks = {}", b.ticks)),
        Op::Observe {
            source,
            slot,
            value,
            confidence,
            scope,
            owner,
        } => off(d.observe, "domain.observe")
            .or_else(|| agent_fault(owner))
            .or_else(|| content_fault(slot, value, source))
            .or_else(|| shape_fault(source, confidence, scope)),
        Op::Begin {
            agent,
            tier,
            isolation,
        } => agent_fault(agent)
            .or_else(|| {
                (!d.tiers.contains(&tier))
                    .then(|| format!("domain.tiers does not list {}", serde_name(&tier)))
            })
            .or_else(|| {
                let any_level = tier == memtx_model::txn::Tier::ExternalAction;
                (!any_level && !d.isolations.contains(&isolation))
                    .then(|| format!("domain.isolations does not list {}", serde_name(&isolation)))
            }),
        Op::Stage {
            agent,
            kind,
            slot,
            value,
            source,
            confidence,
            scope,
            parents,
            validity,
        } => {
            let kind_fault = (!d.stage_kinds.contains(&kind))
                .then(|| format!("domain.stage_kinds does not list {}", serde_name(&kind)));
            let rest = || {
                if kind.is_view() {
                    if !d.view_scopes.contains(&scope) {
                        return Some(format!(
                            "domain.view_scopes does not list {}",
                            serde_name(&scope)
                        ));
                    }
                    return (parents.len() > u32::from(d.view_parents)).then(|| {
                        format!(
                            "{} parents, more than domain.view_parents = {}",
                            parents.len(),
                            d.view_parents
                        )
                    });
                }
                if kind != Kind::Belief {
                    return None;
                }
                content_fault(slot, value, source)
                    .or_else(|| shape_fault(source, confidence, scope))
                    .or_else(|| {
                        (parents.len() > u32::from(d.belief_parents)).then(|| {
                            format!(
                                "{} parents, more than domain.belief_parents = {}",
                                parents.len(),
                                d.belief_parents
                            )
                        })
                    })
                    .or_else(|| validity_fault(&d.validities, validity, now))
            };
            agent_fault(agent).or(kind_fault).or_else(rest)
        }
        Op::CallTool {
            agent,
            reversible,
            support,
        } => agent_fault(agent)
            .or_else(|| {
                (reversible && !d.reversible_calls)
                    .then(|| "domain.reversible_calls is false".to_string())
            })
            .or_else(|| {
                (support.len() > u32::from(d.support)).then(|| {
                    format!(
                        "a support of {}, more than domain.support = {}",
                        support.len(),
                        d.support
                    )
                })
            }),
        Op::Adopt { agent, .. } => agent_fault(agent).or_else(|| off(d.observe, "domain.observe")),
        Op::Commit { agent } | Op::Abort { agent } => agent_fault(agent),
        Op::Read { agent, .. } => agent_fault(agent).or_else(|| off(d.reads, "domain.reads")),
        Op::EndSession { agent } => {
            agent_fault(agent).or_else(|| off(d.sessions, "domain.sessions"))
        }
        Op::RequestRevocation { .. } => off(d.revocations, "domain.revocations"),
        Op::Resolve { .. } => off(d.reviews, "domain.reviews"),
        Op::ApplyRevocation { .. } | Op::Revalidate { .. } | Op::Rebuild { .. } => None,
    }
}

/// The validity shapes `validity` could be at clock `now`, and the fault if `shapes` lists
/// none of them.
fn validity_fault(shapes: &[ValidityShape], validity: Validity, now: u8) -> Option<String> {
    let shape = match (validity.from, validity.until) {
        (f, FOREVER) if f == now => Some(ValidityShape::Open),
        (f, u) if f == now && u == now.saturating_add(1) => Some(ValidityShape::OneTick),
        (f, FOREVER) if f == now.saturating_add(1) => Some(ValidityShape::FromNextTick),
        _ => None,
    };
    match shape {
        Some(s) if shapes.contains(&s) => None,
        Some(s) => Some(format!(
            "domain.validities does not list {}",
            serde_name(&s)
        )),
        None => Some(format!(
            "a validity [{}, {}) at clock {now}: domain.validities offers only open, \
             one-tick and from-next-tick intervals starting at the current clock",
            validity.from,
            if validity.until == FOREVER {
                "∞".to_string()
            } else {
                validity.until.to_string()
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::evidence::Confidence;
    use memtx_model::presets::preset;
    use memtx_model::record::{RecordSet, Scope};
    use memtx_model::txn::{Isolation, Tier};
    use memtx_model::Variant;

    fn belief(agent: u8, source: u8, confidence: Confidence, scope: Scope) -> Op {
        Op::Stage {
            agent,
            kind: Kind::Belief,
            slot: 0,
            value: 0,
            source,
            confidence,
            scope,
            parents: RecordSet::EMPTY,
            validity: Validity::open(0),
        }
    }

    #[test]
    fn the_field_that_keeps_an_operation_out_is_named() {
        let cfg = preset("quick", Variant::Memtx).expect("quick");
        let w = cfg.domain.writes[0];
        let fault = |op: &Op| domain_fault(&cfg, op, 0).unwrap_or_default();
        assert_eq!(
            domain_fault(&cfg, &belief(0, w.source, w.confidence, w.scope), 0),
            None
        );
        assert!(
            fault(&belief(cfg.bounds.agents, w.source, w.confidence, w.scope))
                .starts_with("agent a1 is outside bounds.agents = 1")
        );
        let other = if w.confidence == Confidence::High {
            Confidence::Low
        } else {
            Confidence::High
        };
        if !cfg
            .domain
            .writes
            .iter()
            .any(|x| (x.source, x.confidence, x.scope) == (w.source, other, w.scope))
        {
            assert!(fault(&belief(0, w.source, other, w.scope))
                .starts_with("domain.writes has no shape"));
        }
        let begin = Op::Begin {
            agent: 0,
            tier: Tier::Medium,
            isolation: Isolation::RawRead,
        };
        if !cfg.domain.isolations.contains(&Isolation::RawRead) {
            assert_eq!(fault(&begin), "domain.isolations does not list raw-read");
        }
        // An external-action transaction may ask for any level.
        let action = Op::Begin {
            agent: 0,
            tier: Tier::ExternalAction,
            isolation: Isolation::RawRead,
        };
        if cfg.domain.tiers.contains(&Tier::ExternalAction) {
            assert_eq!(domain_fault(&cfg, &action, 0), None);
        }
        let mut closed = cfg.clone();
        closed.domain.revocations = false;
        closed.domain.reads = false;
        assert_eq!(
            domain_fault(&closed, &Op::RequestRevocation { record: 0 }, 0).as_deref(),
            Some("domain.revocations is false")
        );
        assert_eq!(
            domain_fault(
                &closed,
                &Op::Read {
                    agent: 0,
                    record: 0
                },
                0
            )
            .as_deref(),
            Some("domain.reads is false")
        );
        let mut late = belief(0, w.source, w.confidence, w.scope);
        if let Op::Stage { validity, .. } = &mut late {
            *validity = Validity { from: 2, until: 3 };
        }
        assert!(
            fault(&late).starts_with("a validity [2, 3) at clock 0"),
            "{}",
            fault(&late)
        );
        // The state decides, not a field.
        assert_eq!(
            domain_fault(&cfg, &Op::ApplyRevocation { record: 0 }, 0),
            None
        );
    }
}
