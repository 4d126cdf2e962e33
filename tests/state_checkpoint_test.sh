#!/usr/bin/env bash
# The model's state in checkpoints (runtime/train_main.cc, docs/language.md):
# examples/batchnorm_mlp.vouch's running statistics are saved after its params,
# loaded back (evaluation then gives what the trained run gave), and a checkpoint
# of params only (as written before the model had state) loads its params and
# starts the statistics fresh with a warning; a checkpoint with some of the
# state, state of another shape, a negative variance, a non-finite statistic, a
# truncated file, or state a model does not have is refused (exit 4) with the
# reason.
# usage: state_checkpoint_test.sh BATCHNORM_EXE DIGITS_MLP_EXE DATA
set -uo pipefail
exe=$1 other=$2 data=$3
dir=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*"; exit 1; }
run() { "$exe" --device cpu --no-eval --data "$data" "$@"; }

# Rewrites a checkpoint: python3 edit.py IN OUT 'statements on t (name -> (shape,
# values), in file order)'; OUT - only runs them (checks).
cat >"$dir/edit.py" <<'EOF'
import json, struct, sys
def load(path):
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    t = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F64": "d", "F32": "f"}[e["dtype"]]
        b, end = e["data_offsets"]
        t[name] = (e["shape"], list(struct.unpack("<%d%s" % ((end - b) // struct.calcsize(fmt), fmt),
                                                 blob[8 + n + b:8 + n + end])))
    return t
def save(path, t):
    header, data = {}, b""
    for name, (shape, values) in t.items():
        raw = struct.pack("<%dd" % len(values), *values)
        header[name] = {"dtype": "F64", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)
t = load(sys.argv[1])
exec(sys.argv[3])
if sys.argv[2] != "-":
    save(sys.argv[2], t)
EOF
edit() { /usr/bin/python3 "$dir/edit.py" "$@" || fail "edit.py $*"; }

stats="bn0.running_mean bn0.running_var bn1.running_mean bn1.running_var"

# 1. A trained checkpoint: the params, then the running statistics, trained away
# from their start (mean 0, variance 1).
run --seed 3 --steps 40 --save-params "$dir/trained.st" --trace "$dir/trained.trace" \
  >"$dir/trained.out" || fail "training run"
edit "$dir/trained.st" - '
want = ["bn0", "w1", "bn1", "bn1_shift", "w2", "b2",
        "bn0.running_mean", "bn0.running_var", "bn1.running_mean", "bn1.running_var"]
assert list(t) == want, list(t)
for name in want[6:]:
    start = 0.0 if name.endswith("mean") else 1.0
    assert any(abs(v - start) > 1e-3 for v in t[name][1]), name + " was not updated"
    assert name.endswith("mean") or min(t[name][1]) > 0, name'
echo "ok: the trained checkpoint holds the params, then $stats"

# 2. Loaded back: evaluation (mean_loss(before) of a run of 0 steps) is the
# trained run's evaluation after training, and saving again writes the same bytes.
# (The traces print 17 significant digits.)
loss() { sed -n "s/^$2 //p" "$1"; }
after=$(loss "$dir/trained.trace" mean_loss_after)
run --steps 0 --load-params "$dir/trained.st" --save-params "$dir/resaved.st" \
  --trace "$dir/eval.trace" >"$dir/eval.out" || fail "loading the trained checkpoint"
before=$(loss "$dir/eval.trace" mean_loss_before)
[ -n "$after" ] && [ "$before" = "$after" ] ||
  fail "evaluation after loading: mean_loss $before, the trained run's $after"
cmp -s "$dir/trained.st" "$dir/resaved.st" || fail "a loaded checkpoint saved again differs"
echo "ok: loaded back, evaluation $before as after training; saved again byte for byte"

# 3. Params only (no state): loaded with a warning naming the statistics, which
# start fresh: evaluation equals that of the trained params with statistics 0 / 1.
edit "$dir/trained.st" "$dir/params_only.st" \
  't = {k: v for k, v in t.items() if ".running_" not in k}'
edit "$dir/trained.st" "$dir/fresh.st" '
for k, (shape, v) in list(t.items()):
    if ".running_" in k: t[k] = (shape, [0.0 if k.endswith("mean") else 1.0] * len(v))'
run --steps 0 --load-params "$dir/params_only.st" --trace "$dir/po.trace" >"$dir/po.out" \
  2>"$dir/po.err" ||
  fail "a params-only checkpoint is refused: $(cat "$dir/po.err")"
grep -q "^warning: --load-params: .*params_only.st holds the params but none of the model's state" \
  "$dir/po.err" || fail "no warning for a params-only checkpoint: $(cat "$dir/po.err")"
for s in $stats; do grep -q "$s" "$dir/po.err" || fail "the warning does not name $s"; done
run --steps 0 --load-params "$dir/fresh.st" --trace "$dir/fresh.trace" >"$dir/fresh.out" \
  2>"$dir/fresh.err" || fail "fresh.st"
[ ! -s "$dir/fresh.err" ] || fail "a checkpoint with its state warns: $(cat "$dir/fresh.err")"
fresh=$(loss "$dir/fresh.trace" mean_loss_before)
[ -n "$fresh" ] && [ "$(loss "$dir/po.trace" mean_loss_before)" = "$fresh" ] &&
  [ "$fresh" != "$before" ] || fail "params-only: the statistics did not start fresh"
echo "ok: a params-only checkpoint loads, warns, and starts the statistics fresh"

# 4. Refusals, exit 4 and the reason.
refused() {  # file, expected text
  run --steps 0 --load-params "$1" >"$dir/r.out" 2>"$dir/r.err"
  local rc=$?
  [ $rc -eq 4 ] || fail "$(basename "$1"): exit $rc, want 4 ($(cat "$dir/r.err"))"
  grep -qF "$2" "$dir/r.err" || fail "$(basename "$1"): want '$2', got: $(cat "$dir/r.err")"
  echo "ok: $(basename "$1") refused: $2"
}
edit "$dir/trained.st" "$dir/partial.st" 'del t["bn1.running_var"]'
refused "$dir/partial.st" "missing state 'bn1.running_var' (the checkpoint holds some of the model's running statistics, not all)"
edit "$dir/trained.st" "$dir/negative.st" 't["bn0.running_var"][1][2] = -1.0'
refused "$dir/negative.st" "state 'bn0.running_var' element 2 is -1 (a variance: finite and >= 0)"
edit "$dir/trained.st" "$dir/nan.st" 't["bn1.running_mean"][1][5] = float("nan")'
refused "$dir/nan.st" "state 'bn1.running_mean' element 5 is nan (not finite)"
edit "$dir/trained.st" "$dir/shape.st" 't["bn1.running_mean"] = ([31], t["bn1.running_mean"][1][:31])'
refused "$dir/shape.st" "state 'bn1.running_mean' has shape [31], the model expects [32]"
head -c 200 "$dir/trained.st" >"$dir/truncated.st"
refused "$dir/truncated.st" "error: --load-params: "
# State a model does not have (digits_mlp has no batch_norm).
"$other" --init-only --save-params "$dir/other.st" >/dev/null || fail "digits_mlp --init-only"
edit "$dir/other.st" "$dir/other_state.st" 't["gain.running_mean"] = ([64], [0.0] * 64)'
"$other" --steps 0 --no-eval --data "$data" --load-params "$dir/other_state.st" >/dev/null \
  2>"$dir/o.err"
rc=$?
[ $rc -eq 4 ] && grep -qF "unexpected parameter 'gain.running_mean'" "$dir/o.err" ||
  fail "state in a model without it: exit $rc: $(cat "$dir/o.err")"
echo "ok: state a model does not have refused"

# 5. --init-only writes the fresh statistics.
run --init-only --save-params "$dir/init.st" >/dev/null || fail "--init-only"
edit "$dir/init.st" - '
for k, (shape, v) in t.items():
    if ".running_" in k:
        assert v == [0.0 if k.endswith("mean") else 1.0] * len(v), k'
echo "ok: --init-only saves the statistics at 0 / 1"
echo "PASS"
