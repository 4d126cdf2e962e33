#!/usr/bin/env bash
# The README's first command, as a newcomer runs it: clones this repository's
# HEAD into a temporary directory and runs tools/quickstart.sh there, then
# checks the training lines it prints. A green suite has hidden a broken
# quickstart before; this is the test that would have caught it.
# usage: fresh_clone_quickstart.sh [BAZEL_DISK_CACHE]
set -uo pipefail
cd "$(dirname "$0")/.."
disk_cache=${1:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/vouch-clone.XXXXXX")
log=$dir/quickstart.log
cleanup() {
  # The clone's own Bazel output base goes with it (its server stops too).
  (cd "$dir/vouch" 2>/dev/null && bazel clean --expunge >/dev/null 2>&1)
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "fresh clone: FAIL: $*"; [ -f "$log" ] && tail -40 "$log"; exit 1; }

git clone -q "$PWD" "$dir/vouch" || fail "git clone"
[ -n "$disk_cache" ] && echo "build --disk_cache=$disk_cache" >"$dir/vouch/user.bazelrc"
(cd "$dir/vouch" && tools/quickstart.sh) >"$log" 2>&1 || fail "tools/quickstart.sh exited non-zero"
for line in '^backend: (cpu|cuda), profile checked_(cpu|cuda)' '^mean_loss\(before\) = [0-9.]+$' \
            '^step 0: loss=[0-9.]+$' '^step 175: loss=[0-9.]+$' '^mean_loss\(after\) = [0-9.]+$' \
            '^steps=200 loss0=[0-9.]+ loss1=[0-9.]+$' '^predict\(heldout\) = \[[-0-9.]+\]$'; do
  grep -qE "$line" "$log" || fail "no line matching /$line/"
done
# The executable it built reproduces TorchLean's documented numbers on the
# CPU at seed 2026 (f64), whatever device the quickstart itself ran on.
bars=$("$dir/vouch/out/quickstart_mlp" --device cpu --seed 2026 2>&1) || fail "out/quickstart_mlp --device cpu"
for line in 'mean_loss(before) = 0.761530' 'mean_loss(after) = 0.003234' 'predict(heldout) = [0.210239]'; do
  grep -qxF "$line" <<<"$bars" || { echo "$bars"; fail "seed 2026 lacks '$line'"; }
done
echo "fresh clone: tools/quickstart.sh ok ($(grep -c '^step ' "$log") loss lines)"
