//! Operation families: the fifteen kinds of [`Op`], one per operation of docs/protocol.md §5,
//! and sets of them. [`crate::machine::candidate_ops_of`] proposes the operations of chosen
//! families only, so that a random walk that first picks a family (`memtx simulate`'s swarm)
//! does not enumerate every operation of the state to take one.

use super::Op;

/// The kind of an [`Op`], without its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Family {
    /// [`Op::Tick`].
    Tick,
    /// [`Op::Observe`].
    Observe,
    /// [`Op::Begin`].
    Begin,
    /// [`Op::Stage`].
    Stage,
    /// [`Op::Adopt`].
    Adopt,
    /// [`Op::Commit`].
    Commit,
    /// [`Op::Abort`].
    Abort,
    /// [`Op::CallTool`].
    CallTool,
    /// [`Op::RequestRevocation`].
    RequestRevocation,
    /// [`Op::ApplyRevocation`].
    ApplyRevocation,
    /// [`Op::Revalidate`].
    Revalidate,
    /// [`Op::Rebuild`].
    Rebuild,
    /// [`Op::Read`].
    Read,
    /// [`Op::EndSession`].
    EndSession,
    /// [`Op::Resolve`].
    Resolve,
}

impl Family {
    /// Every family, in the order of [`Op`]'s variants (a family's index is its position).
    pub const ALL: [Family; 15] = [
        Family::Tick,
        Family::Observe,
        Family::Begin,
        Family::Stage,
        Family::Adopt,
        Family::Commit,
        Family::Abort,
        Family::CallTool,
        Family::RequestRevocation,
        Family::ApplyRevocation,
        Family::Revalidate,
        Family::Rebuild,
        Family::Read,
        Family::EndSession,
        Family::Resolve,
    ];

    /// The family's position in [`Family::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl Op {
    /// The operation's family.
    pub fn family(&self) -> Family {
        match self {
            Op::Tick => Family::Tick,
            Op::Observe { .. } => Family::Observe,
            Op::Begin { .. } => Family::Begin,
            Op::Stage { .. } => Family::Stage,
            Op::Adopt { .. } => Family::Adopt,
            Op::Commit { .. } => Family::Commit,
            Op::Abort { .. } => Family::Abort,
            Op::CallTool { .. } => Family::CallTool,
            Op::RequestRevocation { .. } => Family::RequestRevocation,
            Op::ApplyRevocation { .. } => Family::ApplyRevocation,
            Op::Revalidate { .. } => Family::Revalidate,
            Op::Rebuild { .. } => Family::Rebuild,
            Op::Read { .. } => Family::Read,
            Op::EndSession { .. } => Family::EndSession,
            Op::Resolve { .. } => Family::Resolve,
        }
    }
}

/// A set of families (one bit each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Families(u16);

impl Families {
    /// No family.
    pub const NONE: Families = Families(0);
    /// Every family.
    pub const ALL: Families = Families((1 << Family::ALL.len()) - 1);

    /// The set holding `f` alone.
    pub const fn only(f: Family) -> Families {
        Families(1 << f as u16)
    }

    /// Does the set hold `f`?
    #[inline]
    pub fn contains(self, f: Family) -> bool {
        self.0 & (1 << f as u16) != 0
    }

    /// This set with `f` added.
    pub const fn with(self, f: Family) -> Families {
        Families(self.0 | (1 << f as u16))
    }

    /// This set without `f`.
    pub const fn without(self, f: Family) -> Families {
        Families(self.0 & !(1 << f as u16))
    }

    /// The families of this set not in `other`.
    pub fn minus(self, other: Families) -> Families {
        Families(self.0 & !other.0)
    }

    /// Is the set empty?
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set's families, in the order of [`Family::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Family> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            Family::ALL.get(i).copied()
        })
    }

    /// The families in both sets.
    pub fn intersection(self, other: Families) -> Families {
        Families(self.0 & other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_its_position_and_sets_hold_what_was_put_in() {
        for (i, f) in Family::ALL.into_iter().enumerate() {
            assert_eq!(f.index(), i);
            assert!(Families::ALL.contains(f));
            assert!(!Families::NONE.contains(f));
            assert_eq!(Families::only(f).iter().collect::<Vec<_>>(), vec![f]);
            assert!(!Families::ALL.without(f).contains(f));
            assert_eq!(Families::ALL.without(f).iter().count(), 14);
            // Adding a family the set holds, or removing one it does not, changes nothing
            // (a swarm step adds each proposed operation's family, most of them twice).
            assert_eq!(Families::only(f).with(f), Families::only(f));
            assert_eq!(Families::ALL.with(f), Families::ALL);
            assert_eq!(Families::NONE.without(f), Families::NONE);
        }
        let two = Families::NONE.with(Family::Stage).with(Family::Tick);
        assert_eq!(
            two.iter().collect::<Vec<_>>(),
            vec![Family::Tick, Family::Stage]
        );
        assert_eq!(
            two.minus(Families::only(Family::Tick)),
            Families::only(Family::Stage)
        );
        assert!(two.minus(two).is_empty());
        assert_eq!(
            two.intersection(Families::only(Family::Tick)),
            Families::only(Family::Tick)
        );
        assert_eq!(
            Families::ALL.iter().collect::<Vec<_>>(),
            Family::ALL.to_vec()
        );
        assert_eq!(Families::NONE.iter().count(), 0);
        assert_eq!(Op::Commit { agent: 1 }.family(), Family::Commit);
    }
}
