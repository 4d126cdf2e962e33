#!/usr/bin/env bash
# The token stream end to end on the cpu: tiny_tokens (data tokens, order =
# sequential) must train exactly as its twin tiny_tokens_npy (data npy) fed the
# same windows as rows, which numpy cuts here from the same token stream, with
# llm.c's rule (window n = tokens[n*T, n*T + T], the input its first T, the
# target its last T): every traced loss (mean losses, steps, held-out) and the
# final params equal bit for bit, for the stream as an llm.c uint16 shard, an
# llm.c uint32 shard and a 1-D .npy. And order = random: the windows of the
# documented formula (an independent Python implementation), a pure function
# of the seed (two runs equal), not the sequential ones.
# usage: tokens_test.sh TOKENS_EXE RANDOM_EXE NPY_EXE REFERENCE_PY
set -euo pipefail
tokens=$1 random=$2 npy=$3 reference=$4
dir=${TEST_TMPDIR:-$(mktemp -d)}
# N = 100 tokens, T = 8: W = floor(99 / 8) = 12 windows, 3 batches of 4 (the
# npy model's epoch, which the 25 steps go round 8 times and a bit).
/usr/bin/python3 - "$dir" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
N, T, V = 100, 8, 11
x, toks = 12345, []
for _ in range(N):  # a fixed LCG, not numpy's generators
    x = (1103515245 * x + 12345) % 2**31
    toks.append((x >> 16) % V)
toks = np.array(toks)
def shard(path, magic, version, dtype):
    header = np.zeros(256, np.int32)
    header[:3] = magic, version, N
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(toks.astype(dtype).tobytes())
shard(d + "/stream.bin", 20240520, 1, "<u2")
shard(d + "/stream32.bin", 20240801, 7, "<u4")
np.save(d + "/stream.npy", toks.astype("<u2"))
W = (N - 1) // T
windows = np.stack([toks[n * T:n * T + T + 1] for n in range(W)])
np.save(d + "/idx.npy", windows[:, :-1].astype(np.int32))
np.save(d + "/next.npy", windows[:, 1:].astype(np.int32))
PY
run() {  # exe, tag, data, eval, flags...
  local exe=$1 tag=$2 data=$3 eval=$4; shift 4
  "$exe" --device cpu --seed 7 --trace "$dir/$tag.trace" --save-params "$dir/$tag.st" \
    --data "$data" --eval "$eval" "$@" >"$dir/$tag.out"
}
run "$npy" npy "$dir/idx.npy,$dir/next.npy" "$dir/idx.npy,$dir/next.npy"
for stream in stream.bin stream32.bin stream.npy; do
  run "$tokens" "$stream" "$dir/$stream" "$dir/$stream"
  cmp "$dir/npy.trace" "$dir/$stream.trace" ||
    { echo "FAIL: $stream: losses differ from the npy rows'"; diff "$dir/npy.trace" "$dir/$stream.trace"; exit 1; }
  cmp "$dir/npy.st" "$dir/$stream.st" || { echo "FAIL: $stream: params differ"; exit 1; }
done
grep -q "^token data: .*stream.bin, 100 tokens (llm.c shard, magic 20240520 (uint16 tokens)), 12 windows of 8 + 1, order sequential$" \
  "$dir/stream.bin.out" || { echo "FAIL: no token data line"; cat "$dir/stream.bin.out"; exit 1; }
[ "$(grep -c '^step ' "$dir/npy.trace")" -eq 25 ] || { echo "FAIL: not 25 steps traced"; exit 1; }
# The held-out loss (after training, printed, not traced): the stream's
# sequential windows as the npy rows.
grep -q '^eval after training: loss=' "$dir/npy.out" || { echo "FAIL: no held-out loss"; exit 1; }
for stream in stream.bin stream32.bin stream.npy; do
  cmp <(grep '^eval after' "$dir/npy.out") <(grep '^eval after' "$dir/$stream.out") ||
    { echo "FAIL: $stream: held-out loss differs"; exit 1; }
done

# order = random: tiny_tokens_random's step k reads the windows that
# tools/data/token_windows_reference.py (an independent implementation of the
# documented formula) draws for step k; fed those windows as its batch k, the
# npy twin trains to the same step losses and params (the mean losses differ:
# the stream's are over its first sequential batches).
/usr/bin/python3 - "$dir" "$reference" <<'PY'
import importlib.util, sys
import numpy as np
d, ref = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("ref", ref)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
toks = np.load(d + "/stream.npy").astype(np.int64)
N, T, B, steps, seed = len(toks), 8, 4, 25, 7
starts = [m.random_start(N, T, seed, k, r) for k in range(steps) for r in range(B)]
windows = np.stack([toks[s:s + T + 1] for s in starts])
np.save(d + "/ridx.npy", windows[:, :-1].astype(np.int32))
np.save(d + "/rnext.npy", windows[:, 1:].astype(np.int32))
PY
run "$npy" rnpy "$dir/ridx.npy,$dir/rnext.npy" "$dir/idx.npy,$dir/next.npy"
run "$random" random "$dir/stream.bin" "$dir/stream.bin"
run "$random" random2 "$dir/stream.bin" "$dir/stream.bin"
cmp <(grep '^step ' "$dir/rnpy.trace") <(grep '^step ' "$dir/random.trace") ||
  { echo "FAIL: random windows: losses differ from the reference's windows"; exit 1; }
cmp "$dir/rnpy.st" "$dir/random.st" || { echo "FAIL: random windows: params differ"; exit 1; }
cmp "$dir/random.trace" "$dir/random2.trace" || { echo "FAIL: random: two runs differ"; exit 1; }
if cmp -s <(grep '^step ' "$dir/npy.trace") <(grep '^step ' "$dir/random.trace"); then
  echo "FAIL: random windows train as the sequential ones"; exit 1
fi
echo "PASS: tokens == npy rows (uint16 shard, uint32 shard, npy; sequential and random), 25 steps, eval"
