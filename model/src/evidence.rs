//! Evidence levels and the evidence threshold (docs/protocol.md §1, §6 check 1).
//!
//! The paper states its thresholds numerically (confidence ≥ 0.6, authority ≥ 0.9). The model
//! discretises both scales into a few levels; this module is the **one place** that maps levels to
//! numbers and compares them with the thresholds, so a finer discretisation changes one table.

use serde::{Deserialize, Serialize};

/// The paper's threshold on writer confidence: a write this confident passes the evidence check.
pub const CONFIDENCE_THRESHOLD: f32 = 0.6;
/// The paper's threshold on source authority: a source this authoritative passes on its own.
pub const AUTHORITY_THRESHOLD: f32 = 0.9;

/// Authority of a source, fixed per source by the configuration (docs/protocol.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Authority {
    /// 0.5
    Low,
    /// 0.8
    Mid,
    /// 0.95
    High,
}

impl Authority {
    /// The numeric authority this level stands for.
    pub fn value(self) -> f32 {
        match self {
            Authority::Low => 0.5,
            Authority::Mid => 0.8,
            Authority::High => 0.95,
        }
    }
    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Authority::Low => "low",
            Authority::Mid => "mid",
            Authority::High => "high",
        }
    }
}

/// Writer confidence attached to a staged write (docs/protocol.md §1).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// 0.4
    #[default]
    Low,
    /// 0.8
    High,
}

impl Confidence {
    /// The numeric confidence this level stands for.
    pub fn value(self) -> f32 {
        match self {
            Confidence::Low => 0.4,
            Confidence::High => 0.8,
        }
    }
}

/// The evidence check's rule: confidence ≥ 0.6 or authority ≥ 0.9.
pub fn evidence_suffices(confidence: Confidence, authority: Authority) -> bool {
    confidence.value() >= CONFIDENCE_THRESHOLD || authority.value() >= AUTHORITY_THRESHOLD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_authority_alone_suffices_and_mid_authority_needs_confidence() {
        assert!(evidence_suffices(Confidence::Low, Authority::High));
        assert!(!evidence_suffices(Confidence::Low, Authority::Mid));
        assert!(!evidence_suffices(Confidence::Low, Authority::Low));
        assert!(evidence_suffices(Confidence::High, Authority::Low));
    }
}
