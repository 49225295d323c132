//! placeholder
pub mod bench;
pub mod explore;
pub mod two_phase_commit;
