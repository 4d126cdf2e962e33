#!/usr/bin/env bash
# Storage reuse changes no result: a model built with buffers sharing storage
# (vouch build's default, codegen/StoragePlan.h) and the same model built with
# --no-buffer-reuse train from the same params to bitwise the same step
# losses (the trace), printed lines and final params. The generated sources
# show that the first really shares (its tables have storage slots) and the
# second does not: the tables are a blob in a string literal
# (runtime/model_tables.h), where the string "storage0" is its length, 8,
# written \010, then its bytes.
# usage: storage_reuse_test.sh SHARED_EXE SHARED_CPP SEPARATE_EXE SEPARATE_CPP STEPS SEED [DATA]
set -euo pipefail
shared=$1 shared_cpp=$2 separate=$3 separate_cpp=$4 steps=$5 seed=$6 data=${7:-}
dir=${TEST_TMPDIR:-$(mktemp -d)}
# The literal's lines joined (`"` newline `  "` dropped), so that no string is
# cut where the literal breaks a line.
joined() { tr -d '\n' <"$1" | sed 's/"  "//g' >"$2"; }
joined "$shared_cpp" "$dir/shared.cpp.joined"
joined "$separate_cpp" "$dir/separate.cpp.joined"
grep -qF '\010storage0' "$dir/shared.cpp.joined" ||
  { echo "FAIL: $shared_cpp has no storage slot: nothing shares, nothing is tested"; exit 1; }
if grep -qF 'storage0' "$dir/separate.cpp.joined"; then
  echo "FAIL: $separate_cpp shares storage although built with --no-buffer-reuse"; exit 1
fi
data_flag=()
[ -n "$data" ] && data_flag=(--data "$data")
"$shared" --init-only --seed "$seed" --save-params "$dir/init.safetensors" >/dev/null
run() {  # tag, executable
  "$2" --device cpu --seed "$seed" --steps "$steps" --load-params "$dir/init.safetensors" \
    --trace "$dir/$1.trace" --save-params "$dir/$1.safetensors" --no-eval "${data_flag[@]}" \
    >"$dir/$1.stdout"
}
run shared "$shared"
run separate "$separate"
for f in trace stdout safetensors; do
  cmp "$dir/shared.$f" "$dir/separate.$f" ||
    { echo "FAIL: the $f of the shared-storage build differs from the separate one's"; exit 1; }
done
echo "ok: $(grep -c '^step ' "$dir/shared.trace") steps, losses, output and params bitwise equal" \
     "with and without storage reuse"
