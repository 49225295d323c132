//! Reading a checkpoint: one file, or the parts of a run over processes put together. Every
//! length read from a file is checked against what the file still holds before anything is
//! allocated (see the [format](super)).

use super::*;

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
/// [module documentation](super). A run on threads leaves one file ([`FILE_NAME`]); a run
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
