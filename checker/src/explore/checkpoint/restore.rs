//! Restoring a checkpoint for a new run: re-dealing its states to the new thread (or worker)
//! count so that every reference, and so every rebuilt path, is the uninterrupted run's (see
//! the [module documentation](super)).

use super::*;

/// The shards of a resumed run on `threads` workers, and its discoveries so far; see the
/// [module documentation](super). `unpacks` says whether packed bytes are a state of the
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
