#!/usr/bin/env bash
# Builds memtx at an earlier commit, for `memtx bench --baseline-binary PATH`, and prints PATH.
#
#   scripts/build-baseline.sh [COMMIT]
#
# COMMIT defaults to 564f87b, the last commit before revision 3 of the protocol (issue 35 measures
# revision 3's cost against it). The commit's tree is exported with `git archive` into a scratch
# folder under target/baseline/ (no worktree is registered, nothing outside target/ is touched)
# and built there with its own target folder, offline when the registry cache allows. Needs the
# repository's history (a shallow clone lacks old commits: `git fetch --unshallow`).
set -euo pipefail
commit="${1:-564f87b}"
root="$(git rev-parse --show-toplevel)"
full="$(git -C "$root" rev-parse --verify --quiet "${commit}^{commit}")" || {
  echo "build-baseline: no commit ${commit} in this repository" >&2
  exit 2
}
short="${full:0:7}"
dir="$root/target/baseline/$short"
bin="$dir/target/release/memtx"
if [[ ! -x "$bin" ]]; then
  rm -rf "$dir/src"
  mkdir -p "$dir/src"
  git -C "$root" archive "$full" | tar -x -C "$dir/src"
  echo "build-baseline: building memtx at ${short} in ${dir} (about 2 minutes)" >&2
  (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" cargo build --release --quiet --bin memtx)
fi
echo "$bin"
