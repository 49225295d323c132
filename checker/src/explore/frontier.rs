//! Packed frontiers and the batches that carry successors between shards.
//!
//! A [`Frontier`] is the part of one BFS level that one shard owns: every state packed
//! back to back in a single `Vec<u8>` and the end offset of each state. Two flat vectors,
//! whatever the number of states, and no per-state allocation. The `i`-th state's key is
//! the `i`-th key of the same level in the shard's parent log ([`super::path`]), which
//! is filled in the same order, so the frontier does not store keys again.
//!
//! A *batch* is a `Vec<u8>` of successor records travelling from the worker that generated
//! them to the worker that owns their fingerprint (possibly itself). A record is
//! `fingerprint: u64 | parent key: u64 | parent reference: u32 | length: u32 | packed state`,
//! little-endian. The parent key decides which of several same-level parents is kept; the
//! parent reference (the parent's place in its level, see [`super::path::parent_ref`]) is
//! what the parent log stores. The
//! sender packs the successor once into a scratch buffer, fingerprints it, and copies it
//! into the batch of its owner (the fingerprint or the locality key picks the owner); the owner decodes the records, looks them up in its visited table, and copies the bytes of the new
//! ones into its next frontier. It never needs to unpack them.

/// Size of a record header: fingerprint, parent key, parent reference and length.
pub(crate) const RECORD_HEADER: usize = 8 + 8 + 4 + 4;

/// One shard's share of a BFS level, stored as packed bytes; see the
/// [module documentation](self).
#[derive(Default)]
pub(crate) struct Frontier {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Frontier {
    /// Number of states.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends a state given its packed bytes.
    #[inline]
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.ends.push(self.bytes.len());
    }

    /// The packed bytes of the `index`-th state.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> &[u8] {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.bytes[start..self.ends[index]]
    }

    /// The packed bytes of all states back to back, and each state's end offset in them.
    pub(crate) fn raw(&self) -> (&[u8], &[usize]) {
        (&self.bytes, &self.ends)
    }

    /// Removes every state, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Bytes held (allocated capacity).
    pub(crate) fn bytes(&self) -> u64 {
        (self.bytes.capacity() + self.ends.capacity() * 8) as u64
    }
}

/// Starts a record for a successor with fingerprint `fp` reached from the state with key
/// `parent` and parent reference `parent_ref`; the caller then packs the state onto `batch`
/// and calls [`finish_record`] with the returned mark.
#[inline]
pub(crate) fn begin_record(batch: &mut Vec<u8>, fp: u64, parent: u64, parent_ref: u32) -> usize {
    let mut header = [0u8; RECORD_HEADER];
    header[..8].copy_from_slice(&fp.to_le_bytes());
    header[8..16].copy_from_slice(&parent.to_le_bytes());
    header[16..20].copy_from_slice(&parent_ref.to_le_bytes());
    batch.extend_from_slice(&header);
    batch.len()
}

/// Writes the length of the state packed since `mark` into the record header.
#[inline]
pub(crate) fn finish_record(batch: &mut [u8], mark: usize) {
    let len = u32::try_from(batch.len() - mark)
        .expect("[memtx internal bug] packed state longer than 4 GiB");
    batch[mark - 4..mark].copy_from_slice(&len.to_le_bytes());
}

/// A decoded record header: fingerprint, parent key, parent reference and the state's byte
/// range in the batch.
#[derive(Clone, Copy)]
pub(crate) struct Record {
    pub(crate) fp: u64,
    pub(crate) parent: u64,
    pub(crate) parent_ref: u32,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Decodes the record starting at byte `at` of `batch`; `None` at the end of the batch.
#[inline]
pub(crate) fn read_record(batch: &[u8], at: usize) -> Option<Record> {
    let header = batch.get(at..at + RECORD_HEADER)?;
    let word = |from: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&header[from..from + 8]);
        u64::from_le_bytes(b)
    };
    let half = |from: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&header[from..from + 4]);
        u32::from_le_bytes(b)
    };
    let start = at + RECORD_HEADER;
    let end = start + half(20) as usize;
    assert!(
        end <= batch.len(),
        "[memtx internal bug] truncated successor batch"
    );
    Some(Record {
        fp: word(0),
        parent: word(8),
        parent_ref: half(16),
        start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_and_batches_round_trip() {
        let mut frontier = Frontier::default();
        frontier.push(b"ab");
        frontier.push(b"");
        frontier.push(b"xyz");
        assert_eq!(frontier.len(), 3);
        assert_eq!(frontier.get(0), &b"ab"[..]);
        assert_eq!(frontier.get(1), &b""[..]);
        assert_eq!(frontier.get(2), &b"xyz"[..]);

        let mut batch = Vec::new();
        for (fp, parent, bytes) in [(1u64, 2u64, &b"hello"[..]), (3, 4, b"")] {
            let mark = begin_record(&mut batch, fp, parent, parent as u32 + 10);
            batch.extend_from_slice(bytes);
            finish_record(&mut batch, mark);
        }
        let first = read_record(&batch, 0).expect("a record");
        let second = read_record(&batch, first.end).expect("a record");
        assert!(read_record(&batch, second.end).is_none());
        let records = [first, second];
        assert_eq!((records[0].fp, records[0].parent), (1, 2));
        assert_eq!((records[0].parent_ref, records[1].parent_ref), (12, 14));
        assert_eq!(&batch[records[0].start..records[0].end], b"hello");
        assert_eq!((records[1].fp, records[1].parent), (3, 4));
        assert_eq!(records[1].start, records[1].end);
    }
}
