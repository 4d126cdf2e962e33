#!/usr/bin/env bash
# How long `vouch build` takes (runs here, no GPU): the quickstart and a
# 100-block residual MLP (H = 64), for cpu and cuda, and GPT-2 124M for
# cuda, with the kernel cache cold (no cubin cached) and warm (the same
# kernels built before). The runtime archive is built once first, as on any
# machine after its first build. Prints one line per case (GPT-2 also with
# --f64-kernels) and the phases of the 100-block and GPT-2 cuda builds.
# Targets (issue 8, 2 cores): 100-block cuda <= 10 s cold, <= 3 s warm;
# 100-block cpu <= 5 s; quickstart cuda <= 3 s; GPT-2 cuda <= 5 s cold and
# warm.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //tools:vouch >/dev/null 2>&1
vouch=$PWD/bazel-bin/tools/vouch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VOUCH_CACHE_DIR=$work/cache
sed -e 's/^config H = 16$/config H = 64/' -e 's/repeat 3 {/repeat 100 {/' \
  examples/residual_mlp.vouch >"$work/residual100.vouch"
grep -q 'repeat 100' "$work/residual100.vouch" || { echo "could not make the 100-block model"; exit 1; }
# The runtime, once (not timed).
"$vouch" build examples/quickstart_mlp.vouch --target cuda -o "$work/warmup" >/dev/null 2>&1

seconds() { # command... -> wall seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
row() { printf '%-26s %-5s %-5s %6.2f s\n' "$1" "$2" "$3" "$4"; }
printf '%-26s %-5s %-5s %8s\n' model target cache time
for model in examples/quickstart_mlp.vouch "$work/residual100.vouch"; do
  name=$(basename "$model" .vouch)
  row "$name" cpu - "$(seconds "$vouch" build "$model" -o "$work/$name.cpu")"
  rm -rf "$VOUCH_CACHE_DIR"/cubin-*
  row "$name" cuda cold "$(seconds "$vouch" build "$model" --target cuda -o "$work/$name.cuda")"
  row "$name" cuda warm "$(seconds "$vouch" build "$model" --target cuda -o "$work/$name.cuda")"
done
# GPT-2's kernels are in no cache entry yet: its first build is cold.
for cache in cold warm; do
  row gpt2_124m cuda "$cache" "$(seconds "$vouch" build examples/gpt2_124m.vouch --target cuda -o "$work/gpt2" -v)"
  cp "$work/last.err" "$work/gpt2.$cache.err"
done
# With the kernels' f64 entry points too (programs of other sources: cold).
row gpt2_124m+f64-kernels cuda cold \
  "$(seconds "$vouch" build examples/gpt2_124m.vouch --target cuda --f64-kernels -o "$work/gpt2")"
phases() { grep -E '^vouch: [a-zA-Z]' | grep -v "^vouch: g++\|^vouch: ar "; }
echo "phases of the 100-block cuda build (warm):"
"$vouch" build "$work/residual100.vouch" --target cuda -o "$work/r.cuda" -v 2>&1 | phases
for cache in cold warm; do
  echo "phases of the GPT-2 cuda build ($cache):"
  phases <"$work/gpt2.$cache.err"
done
