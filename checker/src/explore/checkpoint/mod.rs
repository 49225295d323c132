//! Checkpoints: saving an exploration at a level boundary and resuming it, on any number of
//! threads, with the same result as a run that was never interrupted.
//!
//! # When
//!
//! With [`super::ExploreOptions::checkpoint`] the coordinator decides, when a level ends and
//! the run continues, whether a checkpoint is due (the interval since the last one has
//! passed; an interval of zero saves at every level boundary). Then every worker lends what
//! it holds (its closed levels, shared without a copy, the level just closed as packed
//! states, and a copy of its coverage tally), worker 0 writes the file between two
//! barriers while the others wait, and the next level starts. A run that stops (a limit,
//! an interrupt, the last level) writes nothing: a checkpoint always holds complete levels,
//! and an interrupted level never replaces the last checkpoint.
//!
//! # What, and why it does not depend on the thread count
//!
//! Which worker owns a state depends on the thread count (and on the locality key of its
//! packed bytes), and the parent log stores parent *references* `index · shards + shard`
//! whose values depend on the thread count and on timing (see `path.rs`). The file
//! therefore records the shards as they are, with their number, and a resume re-deals the
//! states to the new thread count:
//!
//! * the levels before the last one are sorted by key; the state of rank `j` goes to shard
//!   `j mod T` at index `j div T`, so its reference is `j` on any thread count `T`, and each
//!   state's parent reference becomes its parent's rank. What a reference points at (the
//!   smallest-key parent) is unchanged, so every key chain, and so every rebuilt path, is
//!   the same. Their keys go into one read-only visited table shared by every shard
//!   (their owners cannot be computed without their packed bytes, which are not saved);
//! * the last level (the frontier, still to be expanded) is saved with its packed states,
//!   so each state goes to its owner for the new thread count, as in a run on that many
//!   threads;
//! * discoveries are saved as (key, level) and found again by key.
//!
//! Everything else is a property of the levels, not of the schedule: counts per level,
//! generated states, coverage tallies (counts add up; first steps take the minimum), the
//! smallest-key discovery of the first level that has one. A resumed run continues with
//! exactly the levels the uninterrupted run would expand.
//!
//! # Format (version 1)
//!
//! One file, `checkpoint.memtx` in the checkpoint directory:
//!
//! 1. a JSON header line: `format` (`memtx-checkpoint`), `version`, `tool` (`memtx X.Y.Z`),
//!    `run` (the caller's description of the run: configuration, properties, options) and a
//!    few fields for readers (`level`, `unique_states`, `threads`);
//! 2. the body, little-endian: a magic word, the shard count, the level count, the
//!    discoveries, states per level, counters, elapsed time, the coverage tally, then per
//!    shard per level the keys (8 bytes each) and parent references (4 bytes each), and per
//!    shard the frontier (each state's length, then the bytes), and an end marker;
//! 3. a 64-bit checksum of everything before it ([`Checksum`]: word-wise multiply-rotate
//!    and `fmix64`; any change of one 8-byte word changes it, and the length is mixed in).
//!
//! The file is written as `.checkpoint.memtx.<pid>.tmp` beside the previous one, `fsync`ed,
//! renamed over it and the directory `fsync`ed: a kill at any moment leaves the last
//! complete checkpoint, and the disk holds at most two while one is written. Reading checks
//! the header (format, version, tool) first, then the checksum, then every length against
//! the file's size, so a damaged or truncated file is a one-line error.
//!
//! # Over processes: one part per worker
//!
//! A run over timely workers ([`super::timely`]) has no process that holds every shard, so
//! each worker writes its own shard as a file of the same format holding one shard, named
//! `L<level>-part-<worker>-of-<workers>.memtx` ([`part_name`]), with `part` and `parts` in
//! its header; the run's counts, discoveries and levels are in every part (each worker's
//! replica of the coordinator holds them), its own coverage tally in each (worker 0's also
//! carries the tally of the run before a resume). Each part is written atomically as above.
//! The checkpoint is complete when every part is: the workers tell each other, and only
//! then is the previous checkpoint's set removed. A kill at any moment therefore leaves the
//! previous set or the new one complete, and [`load`] reads the newest level whose parts
//! are all there, checks that they describe the same run at the same moment, and puts them
//! together as one checkpoint with one shard per old worker. From there, `restore` is the
//! same for both: a checkpoint written over processes resumes on threads, and one written on
//! threads resumes over any number of processes. On a cluster each process writes into the
//! directory it sees; to resume, every part must be in the directory each process reads
//! (a shared file system, or copies).
//!
//! Exact mode is refused: its visited sets would need every packed state.

use super::coordinator::Found;
use super::coverage::Tally;
use super::frontier::Frontier;
use super::path::{parent_ref, SharedLevel, NO_PARENT_REF};
use super::shard::{owner_of, Shard};
use super::visited::{fingerprint_packed, fmix64, VisitedTable};
use super::Locality;

mod read;
mod restore;
use crate::error::{ErrorKind, UserError};
pub use read::load;
pub(crate) use restore::restore;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The `format` field of a checkpoint's header.
pub const FORMAT: &str = "memtx-checkpoint";
/// The format version this memtx writes and reads.
pub const VERSION: u64 = 1;
/// The checkpoint file's name inside the checkpoint directory.
pub const FILE_NAME: &str = "checkpoint.memtx";
/// The longest header line read.
const MAX_HEADER: u64 = 16 << 20;
const MAGIC: &[u8; 8] = b"MTXCKPT1";
const END: &[u8; 8] = b"MTXCKEND";

/// What one worker lends to the checkpoint being written.
pub(crate) struct ShardSnapshot {
    /// Its closed levels: keys and parent references.
    pub(crate) levels: Vec<SharedLevel>,
    /// Its part of the level just closed, packed.
    pub(crate) frontier: Frontier,
    /// Its coverage tally so far.
    pub(crate) tally: Tally,
}

/// Where and how often checkpoints are written; see [`super::ExploreOptions::checkpoint`].
#[derive(Clone, Debug)]
pub struct CheckpointPlan {
    /// The checkpoint directory (created if missing).
    pub dir: PathBuf,
    /// The least time between two checkpoints (zero: at every level boundary).
    pub every: Duration,
    /// The caller's description of the run, stored in the header (e.g. the configuration).
    pub run: serde_json::Value,
}

/// Everything the coordinator saves besides the shards.
pub(crate) struct SaveData<'x> {
    pub(crate) run: &'x serde_json::Value,
    pub(crate) shards: &'x [&'x ShardSnapshot],
    pub(crate) discoveries: Vec<Option<(u64, usize)>>,
    pub(crate) states_per_depth: &'x [u64],
    pub(crate) generated: u64,
    pub(crate) distinct: u64,
    pub(crate) expanded: u64,
    pub(crate) max_depth: usize,
    pub(crate) level: usize,
    pub(crate) elapsed: Duration,
    pub(crate) tally: &'x Tally,
}

/// A checkpoint read back by [`load`]: what [`super::ExploreOptions::resume_from`] continues.
pub struct Checkpoint {
    run: serde_json::Value,
    shards: usize,
    /// `[shard][level]`: keys and parent references.
    logs: Vec<Vec<(Vec<u64>, Vec<u32>)>>,
    frontiers: Vec<Frontier>,
    discoveries: Vec<Option<(u64, usize)>>,
    states_per_depth: Vec<u64>,
    pub(crate) generated: u64,
    pub(crate) distinct: u64,
    pub(crate) expanded: u64,
    pub(crate) max_depth: usize,
    level: usize,
    pub(crate) elapsed: Duration,
    pub(crate) tally: Tally,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("level", &self.level)
            .field("unique_states", &self.distinct)
            .field("shards", &self.shards)
            .finish_non_exhaustive()
    }
}

impl Checkpoint {
    /// The caller's description of the run, as given to [`CheckpointPlan::run`].
    pub fn run(&self) -> &serde_json::Value {
        &self.run
    }

    /// The 0-based index of the level the resumed run expands first.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The keys of the states of `level` (`0..=level()`), every shard's.
    pub(crate) fn level_keys(&self, level: usize) -> impl Iterator<Item = u64> + '_ {
        self.logs
            .iter()
            .filter_map(move |shard| shard.get(level))
            .flat_map(|(keys, _)| keys.iter().copied())
    }

    /// Distinct states found before the checkpoint.
    pub fn unique_states(&self) -> u64 {
        self.distinct
    }

    /// Distinct states per level before the checkpoint.
    pub fn states_per_depth(&self) -> &[u64] {
        &self.states_per_depth
    }

    /// Number of properties the checkpoint has a discovery slot for.
    pub fn properties(&self) -> usize {
        self.discoveries.len()
    }

    /// Time the run had taken when the checkpoint was written.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

/// A 64-bit checksum that does not depend on how the bytes are split into calls: the bytes
/// are taken as little-endian 8-byte words, each mixed in by `h = (rotl(h, 5) ^ w) · K`
/// (odd `K`, so every step is a bijection of `h` and a changed word always changes the
/// result), and the total length and MurmurHash3's `fmix64` finish it.
#[derive(Clone, Default)]
pub struct Checksum {
    h: u64,
    pending: [u8; 8],
    filled: usize,
    len: u64,
}

impl Checksum {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    #[inline]
    fn mix(&mut self, word: u64) {
        self.h = (self.h.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }

    /// Adds `bytes`.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.filled > 0 {
            let take = (8 - self.filled).min(bytes.len());
            self.pending[self.filled..self.filled + take].copy_from_slice(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled < 8 {
                return;
            }
            self.mix(u64::from_le_bytes(self.pending));
            self.filled = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// The checksum of everything added.
    pub fn finish(&self) -> u64 {
        let mut copy = self.clone();
        if copy.filled > 0 {
            copy.pending[copy.filled..].fill(0);
            copy.mix(u64::from_le_bytes(copy.pending));
        }
        copy.mix(copy.len);
        fmix64(copy.h)
    }
}

/// A buffered writer that checksums what it writes.
struct Out {
    w: BufWriter<File>,
    sum: Checksum,
    scratch: Vec<u8>,
}

impl Out {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.sum.update(b);
        self.w.write_all(b)
    }
    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }
    fn words<T: Copy>(
        &mut self,
        items: &[T],
        width: usize,
        le: fn(T, &mut [u8]),
    ) -> std::io::Result<()> {
        for chunk in items.chunks(8192) {
            self.scratch.clear();
            self.scratch.resize(chunk.len() * width, 0);
            for (item, out) in chunk.iter().zip(self.scratch.chunks_exact_mut(width)) {
                le(*item, out);
            }
            let scratch = std::mem::take(&mut self.scratch);
            let result = self.bytes(&scratch);
            self.scratch = scratch;
            result?;
        }
        Ok(())
    }
}

/// The path of the checkpoint file of a run on threads in `dir`.
pub fn file_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// The name of worker `part`'s file of a checkpoint at `level` of a run over `parts` timely
/// workers (`write_part`).
pub fn part_name(level: usize, part: usize, parts: usize) -> String {
    format!("L{level:04}-part-{part:04}-of-{parts:04}.memtx")
}

/// `(level, part, parts)` of a file named by [`part_name`].
fn parse_part_name(name: &str) -> Option<(usize, usize, usize)> {
    let rest = name.strip_prefix('L')?.strip_suffix(".memtx")?;
    let (level, rest) = rest.split_once("-part-")?;
    let (part, parts) = rest.split_once("-of-")?;
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(level) && all_digits(part) && all_digits(parts)) {
        return None;
    }
    let (level, part, parts) = (level.parse().ok()?, part.parse().ok()?, parts.parse().ok()?);
    (part < parts).then_some((level, part, parts))
}

/// Writes the checkpoint of a run on threads into `dir` atomically (see the [module
/// documentation](self)); then removes the parts of any checkpoint over processes left there.
pub(crate) fn write(dir: &Path, data: &SaveData<'_>) -> Result<(), String> {
    write_file(dir, FILE_NAME, None, data)?;
    remove_obsolete(dir, None);
    Ok(())
}

/// Writes worker `part`'s share of a checkpoint of a run over `parts` timely workers into
/// `dir` atomically, as [`part_name`]. The checkpoint is complete once every worker's part is
/// (the caller's barrier), and only then may [`remove_obsolete`] remove the previous one.
pub(crate) fn write_part(
    dir: &Path,
    part: usize,
    parts: usize,
    data: &SaveData<'_>,
) -> Result<(), String> {
    write_file(
        dir,
        &part_name(data.level, part, parts),
        Some((part, parts)),
        data,
    )
}

/// Removes from `dir` every checkpoint file but those of the checkpoint just completed:
/// `keep` is `(level, parts)` of a checkpoint over processes, `None` for the single file of a
/// run on threads. Files already gone (another process of the run removed them) are fine.
pub(crate) fn remove_obsolete(dir: &Path, keep: Option<(usize, usize)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let obsolete = match parse_part_name(&name) {
            Some((level, _, parts)) => keep != Some((level, parts)),
            None => name == FILE_NAME && keep.is_some(),
        };
        if obsolete {
            let _ = fs::remove_file(entry.path());
        }
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn write_file(
    dir: &Path,
    name: &str,
    part: Option<(usize, usize)>,
    data: &SaveData<'_>,
) -> Result<(), String> {
    let fail = |what: &str, e: std::io::Error| {
        format!(
            "cannot write a checkpoint in {}: {what}: {e}",
            dir.display()
        )
    };
    fs::create_dir_all(dir).map_err(|e| fail("cannot create the directory", e))?;
    // A part's temporaries are named after its part, so that the processes of a run that
    // share the directory never remove each other's.
    let stem = match part {
        Some((p, n)) => format!("-part-{p:04}-of-{n:04}.memtx"),
        None => FILE_NAME.to_string(),
    };
    remove_stale_temporaries(dir, &stem);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let (mut guard, file) = crate::fsutil::TempGuard::create(
        temp.clone(),
        OpenOptions::new().write(true).create(true).truncate(true),
    )
    .map_err(|e| fail("cannot create the temporary file", e))?;
    let mut out = Out {
        w: BufWriter::with_capacity(1 << 20, file),
        sum: Checksum::default(),
        scratch: Vec::new(),
    };
    write_body(&mut out, data, part).map_err(|e| fail("write failed", e))?;
    let sum = out.sum.finish();
    out.w
        .write_all(&sum.to_le_bytes())
        .map_err(|e| fail("write failed", e))?;
    let file = out
        .w
        .into_inner()
        .map_err(|e| fail("write failed", e.into_error()))?;
    file.sync_all().map_err(|e| fail("fsync failed", e))?;
    drop(file);
    // Only over a regular file (or none): a FIFO or device named like the checkpoint is not
    // replaced (see crate::fsutil).
    if let Some(kind) = crate::fsutil::not_regular(&dir.join(name)) {
        return Err(format!(
            "cannot write a checkpoint in {}: {name} there is {kind}",
            dir.display()
        ));
    }
    fs::rename(&temp, dir.join(name)).map_err(|e| fail("rename failed", e))?;
    guard.disarm();
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes temporaries of checkpoint writes that a killed run left behind: those whose name
/// ends with `stem` and `.<pid>.tmp`.
fn remove_stale_temporaries(dir: &Path, stem: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
            continue;
        };
        if rest
            .rsplit_once('.')
            .is_some_and(|(file, _pid)| file.ends_with(stem))
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn write_body(
    out: &mut Out,
    d: &SaveData<'_>,
    part: Option<(usize, usize)>,
) -> std::io::Result<()> {
    let mut header = serde_json::json!({
        "format": FORMAT,
        "version": VERSION,
        "tool": tool(),
        "level": d.level,
        "unique_states": d.distinct,
        "threads": part.map_or(d.shards.len(), |(_, parts)| parts),
        "run": d.run,
    });
    if let Some((p, n)) = part {
        header["part"] = serde_json::json!(p);
        header["parts"] = serde_json::json!(n);
    }
    let mut line = serde_json::to_string(&header).map_err(std::io::Error::other)?;
    line.push('\n');
    out.bytes(line.as_bytes())?;
    out.bytes(MAGIC)?;
    out.u64(d.shards.len() as u64)?;
    let levels = d.level + 1;
    out.u64(levels as u64)?;
    out.u64(d.discoveries.len() as u64)?;
    for found in &d.discoveries {
        match found {
            Some((key, level)) => {
                out.u64(1)?;
                out.u64(*key)?;
                out.u64(*level as u64)?;
            }
            None => {
                out.u64(0)?;
                out.u64(0)?;
                out.u64(0)?;
            }
        }
    }
    out.u64(d.states_per_depth.len() as u64)?;
    out.words(d.states_per_depth, 8, |v, b| {
        b.copy_from_slice(&v.to_le_bytes())
    })?;
    out.u64(d.generated)?;
    out.u64(d.distinct)?;
    out.u64(d.expanded)?;
    out.u64(d.max_depth as u64)?;
    out.u64(u64::try_from(d.elapsed.as_nanos()).unwrap_or(u64::MAX))?;
    let (counts, first) = d.tally.raw();
    out.words(&counts[..], 8, |v, b| b.copy_from_slice(&v.to_le_bytes()))?;
    out.words(&first[..], 8, |v, b| {
        b.copy_from_slice(&u64::try_from(v).unwrap_or(u64::MAX).to_le_bytes())
    })?;
    for shard in d.shards {
        if shard.levels.len() != levels {
            return Err(std::io::Error::other(format!(
                "[memtx internal bug] a shard has {} closed levels, the coordinator {levels}",
                shard.levels.len()
            )));
        }
        for (keys, parents) in &shard.levels {
            out.u64(keys.len() as u64)?;
            out.words(keys, 8, |v, b| b.copy_from_slice(&v.to_le_bytes()))?;
            out.words(parents, 4, |v, b| b.copy_from_slice(&v.to_le_bytes()))?;
        }
        let (bytes, ends) = shard.frontier.raw();
        out.u64(ends.len() as u64)?;
        let mut start = 0;
        let mut lengths = Vec::with_capacity(ends.len());
        for &end in ends {
            lengths.push(u32::try_from(end - start).unwrap_or(u32::MAX));
            start = end;
        }
        out.words(&lengths, 4, |v, b| b.copy_from_slice(&v.to_le_bytes()))?;
        out.u64(bytes.len() as u64)?;
        out.bytes(bytes)?;
    }
    out.bytes(END)
}

/// This memtx, as a checkpoint's `tool` field names it.
fn tool() -> String {
    format!("memtx {}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_ignores_how_bytes_are_split_and_sees_any_change() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = Checksum::default();
        whole.update(&data);
        for split in [1, 3, 8, 13, 999] {
            let mut parts = Checksum::default();
            for chunk in data.chunks(split) {
                parts.update(chunk);
            }
            assert_eq!(parts.finish(), whole.finish(), "split {split}");
        }
        for at in [0, 7, 8, 500, 999] {
            let mut changed = data.clone();
            changed[at] ^= 1;
            let mut other = Checksum::default();
            other.update(&changed);
            assert_ne!(other.finish(), whole.finish(), "byte {at}");
        }
        let mut shorter = Checksum::default();
        shorter.update(&data[..999]);
        assert_ne!(shorter.finish(), whole.finish());
    }
}
