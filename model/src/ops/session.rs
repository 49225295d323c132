//! What the middleware serves an agent (docs/protocol.md §4, §5, revision 3): `Read` puts a
//! record in the agent's context; `EndSession` clears it.

use super::{agent_ok, all_parts, open_txn, record_ok, Applied};
use crate::config::Config;
use crate::provenance;
use crate::record::{RecordId, RecordSet};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::in_view;

pub(super) fn read(cfg: &Config, state: &mut State, agent: u8, id: RecordId) -> Applied {
    open_txn(cfg, state, agent, Rule::EnReadNoTxn)?;
    record_ok(state, id)?;
    // The content is judged of a record in view only: what the transaction cannot see at all
    // is refused for that alone.
    let in_view = in_view(cfg, state, agent, id);
    all_parts(&[
        (in_view, Rule::EnReadNotVisible),
        (
            !in_view || provenance::content_permitted(cfg, state, agent, id),
            Rule::EnReadContentNotPermitted,
        ),
        (!state.record(id).kind.is_action(), Rule::EnReadAction),
    ])?;
    provenance::serve(state, agent, RecordSet::single(id));
    fire(Rule::OpRead);
    Ok(())
}

pub(super) fn end_session(cfg: &Config, state: &mut State, agent: u8) -> Applied {
    agent_ok(cfg, agent)?;
    all_parts(&[
        (state.txn(agent).is_none(), Rule::EnEndSessionTxnOpen),
        (!state.context(agent).is_empty(), Rule::EnEndSessionEmpty),
    ])?;
    state.set_context(agent, RecordSet::EMPTY);
    fire(Rule::OpEndSession);
    Ok(())
}
