#!/usr/bin/env bash
# Run one benchmark against two revisions in turn, in one run, and print both tables.
#
#   bench/before_after.sh REV 'forget_latency.py --facts 20000 --users 20' [rounds]
#
# REV is checked out into a temporary worktree; each round runs the old tree's copy of
# the benchmark with the old sources, then this tree's with these sources.
set -euo pipefail
rev="$1"; bench="$2"; rounds="${3:-1}"
here="$(cd "$(dirname "$0")/.." && pwd)"
python="$here/.venv/bin/python"
export ARCHIVIST_SHARED="${ARCHIVIST_SHARED:-$here/../shared}"  # the old tree lives elsewhere
old="$(mktemp -d)/before"
git -C "$here" worktree add -q --detach "$old" "$rev"
trap 'git -C "$here" worktree remove --force "$old"' EXIT
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    if [ "$side" = before ]; then tree="$old"; else tree="$here"; fi
    echo "### round $round, $side ($( [ "$side" = before ] && echo "$rev" || git -C "$here" rev-parse --short HEAD))"
    (cd "$tree/bench" && PYTHONPATH="$tree/src" "$python" $bench)
  done
done
