//! What the workers send one another: batches of successor records, level summaries, the
//! lookups that rebuild a counterexample's chain, the final tallies, checkpoint receipts.

use crate::explore::coordinator::Sighting;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// A batch of successor records, serialized as one byte string (not byte by byte).
#[derive(Clone, Debug, Default)]
pub(super) struct Bytes(pub(super) Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Bytes, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Bytes(out))
            }
        }
        d.deserialize_byte_buf(Visitor)
    }
}

/// One worker's account of a closed level, sent to every worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Summary {
    pub(super) worker: u32,
    /// Cumulative: generated, new, expanded, dropped, bytes held.
    pub(super) counters: [u64; 5],
    /// Per property: the smallest-key discovery of this level in this worker's share.
    pub(super) discoveries: Vec<Option<Sighting>>,
    /// [`StopReason::code`](crate::explore::report::StopReason::code) of a stop requested on this worker (0: none).
    pub(super) stop: u8,
    /// Whether a checkpoint is due by this worker's clock; worker 0's decides for everyone.
    pub(super) save_due: bool,
}

/// What each worker sends worker 0 at the end.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Final {
    pub(super) worker: u32,
    pub(super) counts: Vec<u64>,
    pub(super) first: Vec<u64>,
    pub(super) bytes_to_other_workers: u64,
    pub(super) bytes_to_other_processes: u64,
    pub(super) peak_rss: Option<u64>,
    pub(super) states: u64,
    pub(super) visited_bytes: u64,
    pub(super) parent_log_bytes: u64,
    pub(super) scratch_bytes: u64,
}

/// A message between workers; travels as `(target worker, message)`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Wire {
    Batch(Bytes),
    Summary(Summary),
    /// Worker 0 asks for the entry `index` of level `level` of the target's parent log,
    /// for the chain of property `slot`.
    Query {
        slot: u32,
        level: u32,
        index: u64,
    },
    /// The answer: the entry's key and parent reference.
    Answer {
        slot: u32,
        key: u64,
        parent: u32,
    },
    Final(Final),
    /// A worker wrote its part of a checkpoint (or could not: why).
    Saved {
        worker: u32,
        error: Option<String>,
    },
}

pub(super) type Envelope = (u32, Wire);
