//! [`Manifest`] (`reports/manifest.json`): the pinned state counts of each preset × variant.

use super::run::{RunReport, Verdict};
use crate::error::{ErrorKind, UserError};
use crate::fsutil::{json_pretty, read_text, write_atomic};
use memtx_model::Variant;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The `format` tag of a manifest.
pub const MANIFEST_FORMAT: &str = "memtx-manifest";

/// The manifest format version.
pub const MANIFEST_VERSION: u64 = 1;

/// The pinned counts of one preset × variant (× symmetry setting).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Preset name.
    pub preset: String,
    /// Variant.
    pub variant: Variant,
    /// Whether symmetry reduction was on (it changes `unique`).
    #[serde(default)]
    pub symmetry: bool,
    /// Distinct states.
    pub unique: u64,
    /// States generated, repeats included.
    pub total: u64,
    /// Maximum depth.
    pub depth: usize,
    /// Keys of the invariants violated (pinned too: a variant must keep breaking what it broke).
    #[serde(default)]
    pub violated: Vec<String>,
}

impl ManifestEntry {
    /// The entry of an exhaustive run (`None` for a run that stopped early: its counts are not
    /// a property of the model).
    pub fn from_report(r: &RunReport) -> Option<ManifestEntry> {
        r.coverage.is_exhaustive().then(|| ManifestEntry {
            preset: r.config.preset.clone(),
            variant: r.variant,
            symmetry: r.symmetry,
            unique: r.unique_states,
            total: r.total_states,
            depth: r.max_depth,
            violated: r
                .properties
                .iter()
                .filter(|p| p.verdict == Verdict::Violated)
                .map(|p| p.key.clone())
                .collect(),
        })
    }

    fn key(&self) -> (String, &'static str, bool) {
        (self.preset.clone(), self.variant.name(), self.symmetry)
    }

    fn label(&self) -> String {
        format!(
            "{} / {}{}",
            self.preset,
            self.variant.name(),
            if self.symmetry { " / symmetry" } else { "" }
        )
    }
}

/// A difference between pinned counts and a new run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// A count changed.
    Changed {
        /// The pinned entry.
        pinned: ManifestEntry,
        /// The new counts.
        now: ManifestEntry,
    },
    /// The new run has an entry the manifest does not pin (informational).
    NotPinned(ManifestEntry),
    /// The manifest pins an entry the new run did not produce (informational: the run may have
    /// covered only some presets).
    NotRun(ManifestEntry),
}

impl Drift {
    /// Is this a real drift (a count changed), as opposed to a coverage difference?
    pub fn is_failure(&self) -> bool {
        matches!(self, Drift::Changed { .. })
    }
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Changed { pinned, now } => {
                let mut parts = Vec::new();
                if pinned.unique != now.unique {
                    parts.push(format!("unique {} → {}", pinned.unique, now.unique));
                }
                if pinned.total != now.total {
                    parts.push(format!("total {} → {}", pinned.total, now.total));
                }
                if pinned.depth != now.depth {
                    parts.push(format!("depth {} → {}", pinned.depth, now.depth));
                }
                write!(f, "{}: {}", pinned.label(), parts.join(", "))
            }
            Drift::NotPinned(e) => write!(f, "{}: not pinned in the manifest", e.label()),
            Drift::NotRun(e) => write!(f, "{}: pinned but not run", e.label()),
        }
    }
}

/// The pinned state counts (`reports/manifest.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    #[serde(default = "manifest_format")]
    pub format: String,
    /// Always [`MANIFEST_VERSION`].
    #[serde(default = "manifest_version")]
    pub version: u64,
    /// The entries, sorted by preset, variant and symmetry when saved.
    pub entries: Vec<ManifestEntry>,
}

fn manifest_format() -> String {
    MANIFEST_FORMAT.to_string()
}

fn manifest_version() -> u64 {
    MANIFEST_VERSION
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            format: manifest_format(),
            version: MANIFEST_VERSION,
            entries: Vec::new(),
        }
    }
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Self {
        Manifest::default()
    }

    /// Reads a manifest; a missing file, bad JSON, a wrong format or version is a [`UserError`].
    pub fn load(path: &Path) -> Result<Manifest, UserError> {
        let text = read_text(path, "manifest")?;
        let origin = path.display();
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            let kind = if serde_json::from_str::<serde_json::Value>(&text).is_err() {
                ErrorKind::NotJson
            } else {
                ErrorKind::Malformed
            };
            UserError::with_fix(
                kind,
                format!("{origin} is not a valid memtx manifest ({e})"),
                "restore it from version control, or regenerate it with memtx",
            )
        })?;
        if m.format != MANIFEST_FORMAT {
            return Err(UserError::with_fix(
                ErrorKind::WrongFormat,
                format!(
                    "{origin} has format {:?}, not {MANIFEST_FORMAT:?}",
                    m.format
                ),
                "pass the manifest.json memtx writes",
            ));
        }
        if m.version != MANIFEST_VERSION {
            return Err(UserError::with_fix(
                ErrorKind::UnknownVersion,
                format!(
                    "{origin} is manifest version {}; this memtx reads version {MANIFEST_VERSION}",
                    m.version
                ),
                "regenerate it with this memtx",
            ));
        }
        Ok(m)
    }

    /// Writes the manifest atomically, entries sorted (so diffs in version control are minimal).
    pub fn save(&self, path: &Path) -> Result<(), UserError> {
        let mut sorted = self.clone();
        sorted.entries.sort_by_key(|e| e.key());
        write_atomic(path, json_pretty(&sorted).as_bytes())
    }

    /// The entry for `preset` × `variant` × `symmetry`, if pinned.
    pub fn get(&self, preset: &str, variant: Variant, symmetry: bool) -> Option<&ManifestEntry> {
        self.entries
            .iter()
            .find(|e| e.preset == preset && e.variant == variant && e.symmetry == symmetry)
    }

    /// Adds `entry`, replacing the entry with the same preset, variant and symmetry.
    pub fn upsert(&mut self, entry: ManifestEntry) {
        self.entries.retain(|e| e.key() != entry.key());
        self.entries.push(entry);
    }

    /// The drifts from this (pinned) manifest to `other` (a new run): changed counts first, then
    /// entries only `other` has ([`Drift::NotPinned`]) and entries only this one has
    /// ([`Drift::NotRun`]). Only [`Drift::Changed`] is a failure.
    pub fn compare(&self, other: &Manifest) -> Vec<Drift> {
        let mut changed = Vec::new();
        let mut not_pinned = Vec::new();
        for now in &other.entries {
            match self.get(&now.preset, now.variant, now.symmetry) {
                Some(pinned) if pinned != now => changed.push(Drift::Changed {
                    pinned: pinned.clone(),
                    now: now.clone(),
                }),
                Some(_) => {}
                None => not_pinned.push(Drift::NotPinned(now.clone())),
            }
        }
        let not_run = self
            .entries
            .iter()
            .filter(|e| other.get(&e.preset, e.variant, e.symmetry).is_none())
            .map(|e| Drift::NotRun(e.clone()));
        changed
            .into_iter()
            .chain(not_pinned)
            .chain(not_run)
            .collect()
    }
}
