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
use crate::error::{ErrorKind, UserError};
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

/// A reader of the body that knows how many bytes are left, so that no length read from the
/// file can make it allocate more than the file holds.
struct In {
    r: BufReader<File>,
    left: u64,
}

impl In {
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, String> {
        if n > self.left {
            return Err("a section runs past the end of the file".into());
        }
        let mut v = vec![0u8; n as usize];
        self.r
            .read_exact(&mut v)
            .map_err(|e| format!("read failed: {e}"))?;
        self.left -= n;
        Ok(v)
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.bytes(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(&b);
        Ok(u64::from_le_bytes(w))
    }
    /// A count of items of `width` bytes each that must fit in what is left.
    fn count(&mut self, width: u64) -> Result<usize, String> {
        let n = self.u64()?;
        if !matches!(n.checked_mul(width), Some(b) if b <= self.left) {
            return Err(format!("a count of {n} does not fit in the file"));
        }
        usize::try_from(n).map_err(|_| format!("a count of {n} does not fit in memory"))
    }
    fn u64s(&mut self, n: usize) -> Result<Vec<u64>, String> {
        let b = self.bytes(n as u64 * 8)?;
        Ok(b.chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect())
    }
    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, String> {
        let b = self.bytes(n as u64 * 4)?;
        Ok(b.chunks_exact(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w.copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect())
    }
}

/// Reads the checkpoint in `dir`, checking its format, version, tool and checksum; see the
/// [module documentation](self). A run on threads leaves one file ([`FILE_NAME`]); a run
/// over processes one part per worker ([`part_name`]), of which the newest level whose
/// parts are all there is read, and the parts are put together as one checkpoint (so a
/// checkpoint written over processes resumes on threads, and the other way round).
///
/// # Errors
///
/// A one-line [`UserError`]: no checkpoint there, not a checkpoint, another format version or
/// memtx version, a damaged or truncated file, or parts that do not belong together.
pub fn load(dir: &Path) -> Result<Checkpoint, UserError> {
    let single = file_in(dir);
    let single_level = single.is_file().then(|| peek_level(&single));
    // Per (level, parts): the parts found, by number. Nothing is allocated by the number a
    // file name claims (an empty file named `…-of-18446744073709551615.memtx` made `resume`
    // panic with a capacity overflow; `…-of-10000000000000` aborted on a 240 TB allocation):
    // a set is complete when it holds as many parts as it names.
    type Parts = std::collections::BTreeMap<usize, PathBuf>;
    let mut groups: std::collections::BTreeMap<(usize, usize), Parts> =
        std::collections::BTreeMap::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if let Some((level, part, parts)) = parse_part_name(&name.to_string_lossy()) {
                groups
                    .entry((level, parts))
                    .or_default()
                    .insert(part, entry.path());
            }
        }
    }
    let complete = groups
        .iter()
        .filter(|(&(_, parts), found)| found.len() == parts)
        .map(|(&(level, parts), found)| (level, parts, found.values().cloned().collect()))
        .max_by_key(|&(level, parts, _): &(usize, usize, Vec<PathBuf>)| (level, parts));
    match (single_level, complete) {
        (Some(level), Some((parts_level, parts, paths))) if parts_level > level.unwrap_or(0) => {
            load_parts(dir, parts_level, parts, &paths)
        }
        (Some(_), _) => {
            let (_, checkpoint) = load_file(&single)?;
            verify(checkpoint, &single.display().to_string())
        }
        (None, Some((level, parts, paths))) => load_parts(dir, level, parts, &paths),
        (None, None) => {
            let shown = dir.display();
            let what = match groups.iter().next_back() {
                Some(((level, parts), found)) => format!(
                    "{shown} holds only an incomplete checkpoint over processes ({} of {parts} parts at level {level})",
                    found.len()
                ),
                None => format!("there is no checkpoint in {shown}"),
            };
            Err(UserError::with_fix(
                ErrorKind::Io,
                what,
                "give the directory that `memtx check --checkpoint DIR` wrote",
            ))
        }
    }
}

/// The `level` of a checkpoint file's header, if it can be read (a damaged file is reported
/// when it is loaded).
fn peek_level(path: &Path) -> Option<usize> {
    let file = File::open(path).ok()?;
    let mut line = Vec::new();
    BufReader::new(file)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut line)
        .ok()?;
    let header: serde_json::Value = serde_json::from_slice(&line).ok()?;
    usize::try_from(header.get("level")?.as_u64()?).ok()
}

/// Reads the `parts` parts of the checkpoint at `level` and puts them together.
fn load_parts(
    dir: &Path,
    level: usize,
    parts: usize,
    paths: &[PathBuf],
) -> Result<Checkpoint, UserError> {
    let shown = format!("{} (level {level}, {parts} parts)", dir.display());
    let mismatch = |what: String| {
        UserError::with_fix(
            ErrorKind::Malformed,
            format!("checkpoint {shown}: the parts do not belong together ({what})"),
            "remove the parts of other runs from the directory, or run the check again",
        )
    };
    let mut whole: Option<Checkpoint> = None;
    for (i, path) in paths.iter().enumerate() {
        let (header, part) = load_file(path)?;
        let field = |key: &str| header.get(key).and_then(serde_json::Value::as_u64);
        if field("part") != Some(i as u64) || field("parts") != Some(parts as u64) {
            return Err(mismatch(format!(
                "{} does not say it is part {i} of {parts}",
                path.display()
            )));
        }
        if part.shards != 1 || part.level != level {
            return Err(mismatch(format!(
                "{} holds {} shards at level {}",
                path.display(),
                part.shards,
                part.level
            )));
        }
        let Some(w) = whole.as_mut() else {
            whole = Some(part);
            continue;
        };
        let same = w.run == part.run
            && w.discoveries == part.discoveries
            && w.states_per_depth == part.states_per_depth
            && (w.generated, w.distinct, w.expanded, w.max_depth)
                == (part.generated, part.distinct, part.expanded, part.max_depth);
        if !same {
            return Err(mismatch(format!(
                "{} describes another run or another moment of it",
                path.display()
            )));
        }
        w.shards += 1;
        w.logs.extend(part.logs);
        w.frontiers.extend(part.frontiers);
        w.elapsed = w.elapsed.max(part.elapsed);
        part.tally.merge_into(&mut w.tally);
    }
    let whole = whole.ok_or_else(|| mismatch("no parts".to_string()))?;
    verify(whole, &shown)
}

/// Checks that the levels add up to the counts (a whole checkpoint, after its parts are
/// put together).
fn verify(checkpoint: Checkpoint, shown: &str) -> Result<Checkpoint, UserError> {
    let stored: usize = checkpoint.logs.iter().flatten().map(|(k, _)| k.len()).sum();
    if checkpoint.states_per_depth.len() != checkpoint.level + 1
        || checkpoint.states_per_depth.iter().sum::<u64>() != checkpoint.distinct
        || stored as u64 != checkpoint.distinct
    {
        return Err(UserError::with_fix(
            ErrorKind::Malformed,
            format!("checkpoint {shown} is damaged (the levels and the counts disagree)"),
            "resume from an intact copy, or run the check again",
        ));
    }
    Ok(checkpoint)
}

/// Reads one checkpoint file (a whole checkpoint or one part): its header and body.
fn load_file(path: &Path) -> Result<(serde_json::Value, Checkpoint), UserError> {
    let path = path.to_path_buf();
    let shown = path.display().to_string();
    let damaged = |what: String| {
        UserError::with_fix(
            ErrorKind::Malformed,
            format!("checkpoint {shown} is damaged ({what})"),
            "resume from an intact copy, or run the check again",
        )
    };
    let file = File::open(&path).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read the checkpoint {shown}: {e}"),
            "give the directory that `memtx check --checkpoint DIR` wrote",
        )
    })?;
    let size = file
        .metadata()
        .map_err(|e| UserError::io("read", &path, &e))?
        .len();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    (&mut reader)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut line)
        .map_err(|e| UserError::io("read", &path, &e))?;
    if line.last() != Some(&b'\n') {
        return Err(damaged("no complete header line".into()));
    }
    let header: serde_json::Value = serde_json::from_slice(&line).map_err(|_| {
        UserError::with_fix(
            ErrorKind::WrongFormat,
            format!("{shown} is not a memtx checkpoint (its header is not JSON)"),
            "give the directory that `memtx check --checkpoint DIR` wrote",
        )
    })?;
    if header.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
        return Err(UserError::with_fix(
            ErrorKind::WrongFormat,
            format!("{shown} is not a memtx checkpoint (format is not {FORMAT:?})"),
            "give the directory that `memtx check --checkpoint DIR` wrote",
        ));
    }
    let version = header.get("version").and_then(|v| v.as_u64());
    if version != Some(VERSION) {
        return Err(UserError::with_fix(
            ErrorKind::UnknownVersion,
            format!(
                "checkpoint {shown} has format version {}, this memtx reads version {VERSION}",
                version.map_or("(none)".to_string(), |v| v.to_string())
            ),
            "resume it with the memtx that wrote it, or run the check again",
        ));
    }
    let by = header.get("tool").and_then(|v| v.as_str()).unwrap_or("?");
    if by != tool() {
        return Err(UserError::with_fix(
            ErrorKind::UnknownVersion,
            format!(
                "checkpoint {shown} was written by {}, this is {}",
                crate::input::cut(by),
                tool()
            ),
            "resume it with the memtx that wrote it, or run the check again",
        ));
    }
    let run = header
        .get("run")
        .cloned()
        .ok_or_else(|| damaged("the header has no \"run\"".into()))?;

    // The checksum, over everything but its own 8 bytes.
    let header_len = line.len() as u64;
    if size < header_len + 8 {
        return Err(damaged("truncated".into()));
    }
    let mut sum = Checksum::default();
    sum.update(&line);
    let mut body = (&mut reader).take(size - header_len - 8);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = body
            .read(&mut buffer)
            .map_err(|e| UserError::io("read", &path, &e))?;
        if n == 0 {
            break;
        }
        sum.update(&buffer[..n]);
    }
    let mut stored = [0u8; 8];
    reader
        .read_exact(&mut stored)
        .map_err(|_| damaged("truncated".into()))?;
    if u64::from_le_bytes(stored) != sum.finish() {
        return Err(damaged("checksum mismatch: truncated or altered".into()));
    }

    // The body, again from the start of the file (the checksum is known good).
    let file = File::open(&path).map_err(|e| UserError::io("read", &path, &e))?;
    let mut input = In {
        r: BufReader::with_capacity(1 << 20, file),
        left: size - 8,
    };
    input.bytes(header_len).map_err(damaged)?;
    let checkpoint = read_body(&mut input, run).map_err(damaged)?;
    Ok((header, checkpoint))
}

fn read_body(input: &mut In, run: serde_json::Value) -> Result<Checkpoint, String> {
    if input.bytes(8)? != MAGIC {
        return Err("no body marker".into());
    }
    let shards = input.count(1)?;
    let levels = input.count(1)?;
    if shards == 0 || levels < 2 {
        return Err(format!("{shards} shards, {levels} levels"));
    }
    let properties = input.count(24)?;
    let mut discoveries = Vec::with_capacity(properties);
    for _ in 0..properties {
        let (present, key, level) = (input.u64()?, input.u64()?, input.u64()?);
        discoveries.push(match present {
            0 => None,
            1 if level < levels as u64 - 1 => Some((key, level as usize)),
            _ => return Err("a discovery out of range".into()),
        });
    }
    let depths = input.count(8)?;
    let states_per_depth = input.u64s(depths)?;
    let generated = input.u64()?;
    let distinct = input.u64()?;
    let expanded = input.u64()?;
    let max_depth = input.u64()? as usize;
    let elapsed = Duration::from_nanos(input.u64()?);
    let mut counts = [0u64; 128];
    counts.copy_from_slice(&input.u64s(128)?);
    let mut first = [usize::MAX; 128];
    for (slot, v) in first.iter_mut().zip(input.u64s(128)?) {
        *slot = usize::try_from(v).unwrap_or(usize::MAX);
    }
    let mut logs = Vec::with_capacity(shards);
    let mut frontiers = Vec::with_capacity(shards);
    for _ in 0..shards {
        let mut shard = Vec::with_capacity(levels);
        for _ in 0..levels {
            let n = input.count(12)?;
            let keys = input.u64s(n)?;
            let parents = input.u32s(n)?;
            shard.push((keys, parents));
        }
        let n = input.count(4)?;
        if Some(n) != shard.last().map(|(k, _)| k.len()) {
            return Err("a frontier and its level differ in size".into());
        }
        let lengths = input.u32s(n)?;
        let bytes = input.count(1)?;
        if lengths.iter().map(|&l| l as u64).sum::<u64>() != bytes as u64 {
            return Err("frontier lengths do not add up".into());
        }
        let bytes = input.bytes(bytes as u64)?;
        let mut frontier = Frontier::default();
        let mut at = 0;
        for len in lengths {
            frontier.push(&bytes[at..at + len as usize]);
            at += len as usize;
        }
        logs.push(shard);
        frontiers.push(frontier);
    }
    if input.bytes(8)? != END || input.left != 0 {
        return Err("no end marker where expected".into());
    }
    if states_per_depth.len() != levels {
        return Err("the levels and the counts disagree".into());
    }
    Ok(Checkpoint {
        run,
        shards,
        logs,
        frontiers,
        discoveries,
        states_per_depth,
        generated,
        distinct,
        expanded,
        max_depth,
        level: levels - 1,
        elapsed,
        tally: Tally::from_raw(counts, first),
    })
}

/// The shards of a resumed run on `threads` workers, and its discoveries so far; see the
/// [module documentation](self). `unpacks` says whether packed bytes are a state of the
/// model. Only the shards in `mine` (the workers of this process) get their states; the
/// others are left empty, for the processes that own them. Every process keeps the keys of
/// every saved level before the frontier, in one read-only table shared by its shards.
///
/// # Errors
///
/// A message if the checkpoint does not fit together (it was not written for this model).
pub(crate) fn restore(
    ck: &Checkpoint,
    threads: usize,
    locality: Option<Locality>,
    properties: usize,
    unpacks: &dyn Fn(&[u8]) -> bool,
    mine: std::ops::Range<usize>,
) -> Result<(Vec<Shard>, Vec<Found>), String> {
    let bad = |what: &str| format!("the checkpoint does not fit this model: {what}");
    if ck.discoveries.len() != properties {
        return Err(bad(&format!(
            "{} properties saved, {properties} now",
            ck.discoveries.len()
        )));
    }
    let old = ck.shards;
    let levels = ck.level + 1;
    let mut shards: Vec<Shard> = (0..threads).map(|_| Shard::new(false)).collect();
    let before: usize = ck
        .logs
        .iter()
        .map(|shard| {
            shard[..ck.level]
                .iter()
                .map(|(k, _)| k.len())
                .sum::<usize>()
        })
        .sum();
    let mut restored = VisitedTable::for_keys(before);
    let mut found: Vec<Found> = vec![None; properties];
    // Per old shard and index: the new reference of the previous level's states.
    let mut previous: Vec<Vec<u32>> = Vec::new();
    for level in 0..levels {
        let size: usize = ck.logs.iter().map(|s| s[level].0.len()).sum();
        let mut entries: Vec<(u64, u32, u32, u32)> = Vec::with_capacity(size);
        for (s, shard) in ck.logs.iter().enumerate() {
            let (keys, parents) = &shard[level];
            for (i, (&key, &reference)) in keys.iter().zip(parents.iter()).enumerate() {
                let parent = if level == 0 {
                    if reference != NO_PARENT_REF {
                        return Err(bad("an initial state with a parent"));
                    }
                    NO_PARENT_REF
                } else {
                    let (ps, pi) = (reference as usize % old, reference as usize / old);
                    *previous
                        .get(ps)
                        .and_then(|v| v.get(pi))
                        .ok_or_else(|| bad("a parent reference out of range"))?
                };
                entries.push((key, parent, s as u32, i as u32));
            }
        }
        entries.sort_unstable_by_key(|e| e.0);
        if entries.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad("a key twice in one level"));
        }
        let mut refs: Vec<Vec<u32>> = ck.logs.iter().map(|s| vec![0; s[level].0.len()]).collect();
        let mut keys: Vec<Vec<u64>> = vec![Vec::new(); threads];
        let mut parents: Vec<Vec<u32>> = vec![Vec::new(); threads];
        if level < ck.level {
            for (j, &(key, parent, s, i)) in entries.iter().enumerate() {
                if restored.contains(key) {
                    return Err(bad("a key in two levels"));
                }
                restored.add_growing(key);
                if mine.contains(&(j % threads)) {
                    keys[j % threads].push(key);
                    parents[j % threads].push(parent);
                }
                refs[s as usize][i as usize] = parent_ref(j, 0, 1);
            }
            for (p, saved) in ck.discoveries.iter().enumerate() {
                if let Some((key, at)) = *saved {
                    if at == level {
                        let j = entries
                            .binary_search_by_key(&key, |e| e.0)
                            .map_err(|_| bad("a discovery not in its level"))?;
                        found[p] = Some(((key, parent_ref(j, 0, 1)), level));
                    }
                }
            }
        } else {
            for &(key, parent, s, i) in &entries {
                let bytes = ck.frontiers[s as usize].get(i as usize);
                if fingerprint_packed(bytes) != key || !unpacks(bytes) {
                    return Err(bad("a frontier state that is not the model's"));
                }
                if restored.contains(key) {
                    return Err(bad("a key in two levels"));
                }
                let owner = owner_of(bytes, key, locality, threads);
                if !mine.contains(&owner) {
                    continue;
                }
                let shard = &mut shards[owner];
                keys[owner].push(key);
                parents[owner].push(parent);
                shard.current.push(bytes);
                shard.table.add_growing(key);
            }
        }
        for (shard, (k, p)) in shards.iter_mut().zip(keys.into_iter().zip(parents)) {
            shard.log.push_closed_level(k, p);
        }
        previous = refs;
    }
    if found
        .iter()
        .zip(&ck.discoveries)
        .any(|(f, d)| f.is_some() != d.is_some())
    {
        return Err(bad("a discovery not in its level"));
    }
    let restored = Arc::new(restored);
    for (t, shard) in shards.iter_mut().enumerate() {
        shard.restored = Some(Arc::clone(&restored));
        shard.counts_restored = t == mine.start;
    }
    Ok((shards, found))
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
