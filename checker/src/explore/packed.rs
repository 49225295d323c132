//! Byte encoding of states for the frontier (the [`PackedState`] trait).
//!
//! The explorer never keeps a `Vec<M::State>` of pending states. A BFS level can hold
//! millions of states, and a Rust state value usually owns heap memory (vectors, maps,
//! boxed messages): one allocation per state plus allocator overhead per allocation. Instead
//! each state is *packed* into a run of bytes appended to one large `Vec<u8>` per level and
//! shard, and *unpacked* again, into a reused value where possible, when its turn comes.
//! The same bytes travel between worker threads when a successor belongs to another shard,
//! and in exact mode they are what the visited set compares to tell two states apart.
//!
//! The contract is on [`PackedState`].

/// A state that can be stored in the explorer's frontier as bytes.
///
/// The contract is small:
///
/// * `pack` appends (never clears) an encoding of `self` to `out`;
/// * `unpack(bytes)` returns the value that was packed, given exactly the bytes `pack`
///   appended; `None` means "these bytes are not an encoding", which the explorer treats as
///   a bug in the implementation;
/// * equal states must pack to equal bytes and different states to different bytes (the
///   encoding is injective and canonical). Exact mode relies on this to compare states.
///
/// The explorer checks the round trip `unpack(pack(s)) == s` on every initial state before
/// it starts, which catches the most common mistakes cheaply.
///
/// Implementations exist for the fixed-width unsigned integers, `bool`, pairs, and `Vec<u8>`,
/// which is convenient for small test models.
pub trait PackedState: Sized {
    /// Appends the encoding of `self` to `out` (without clearing `out`).
    fn pack(&self, out: &mut Vec<u8>);

    /// Decodes a value from exactly the bytes that [`PackedState::pack`] appended.
    ///
    /// Returns `None` if `bytes` is not a valid encoding.
    fn unpack(bytes: &[u8]) -> Option<Self>;

    /// Decodes into an existing value, reusing its allocations where the implementation
    /// can. Returns `false` if `bytes` is not a valid encoding (then `self` is unspecified).
    ///
    /// The default implementation calls [`PackedState::unpack`] and assigns.
    fn unpack_into(&mut self, bytes: &[u8]) -> bool {
        match Self::unpack(bytes) {
            Some(value) => {
                *self = value;
                true
            }
            None => false,
        }
    }
}

macro_rules! packed_uint {
    ($($t:ty),*) => {$(
        impl PackedState for $t {
            fn pack(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn unpack(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}

packed_uint!(u8, u16, u32, u64, u128);

impl PackedState for bool {
    fn pack(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }

    fn unpack(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl PackedState for Vec<u8> {
    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }

    fn unpack(bytes: &[u8]) -> Option<Self> {
        Some(bytes.to_vec())
    }

    fn unpack_into(&mut self, bytes: &[u8]) -> bool {
        self.clear();
        self.extend_from_slice(bytes);
        true
    }
}

/// Pairs are encoded as a 4-byte little-endian length of the first part, then both parts.
impl<A: PackedState, B: PackedState> PackedState for (A, B) {
    fn pack(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        self.0.pack(out);
        let first_len = u32::try_from(out.len() - start - 4)
            .expect("[memtx internal bug] packed pair component longer than 4 GiB");
        out[start..start + 4].copy_from_slice(&first_len.to_le_bytes());
        self.1.pack(out);
    }

    fn unpack(bytes: &[u8]) -> Option<Self> {
        let (len, rest) = bytes.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
        if len > rest.len() {
            return None;
        }
        let (first, second) = rest.split_at(len);
        Some((A::unpack(first)?, B::unpack(second)?))
    }
}

#[cfg(test)]
mod tests {
    use super::PackedState;

    fn round_trip<T: PackedState + PartialEq + std::fmt::Debug>(value: T) {
        let mut bytes = Vec::new();
        value.pack(&mut bytes);
        assert_eq!(T::unpack(&bytes), Some(value));
    }

    #[test]
    fn primitives_round_trip() {
        round_trip(7u8);
        round_trip(0xBEEFu16);
        round_trip(u64::MAX);
        round_trip(true);
        round_trip(vec![1u8, 2, 3]);
        round_trip((3u8, (4u32, vec![9u8])));
        assert_eq!(u32::unpack(&[1, 2]), None);
        assert_eq!(bool::unpack(&[2]), None);
    }
}
