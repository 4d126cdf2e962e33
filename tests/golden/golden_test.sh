#!/usr/bin/env bash
# Golden test: a model's executable (built by the vouch_model Bazel macro)
# against the independent PyTorch float64 reference (torch_reference.py).
# usage: golden_test.sh MODEL_NAME EXECUTABLE REFERENCE_SCRIPT STEPS SEED [DATA]
# DATA: the .npy files (comma-separated) given to both as --data.
set -euo pipefail
name=$1 exe=$2 reference=$3 steps=$4 seed=$5 data=${6:-}
dir=${TEST_TMPDIR:-$(mktemp -d)}
data_flag=()
[ -n "$data" ] && data_flag=(--data "$data")
"$exe" --init-only --seed "$seed" --save-params "$dir/init.safetensors"
# --no-eval: an eval clause's files are the example's, not the test's data.
"$exe" --device cpu --seed "$seed" --steps "$steps" --trace "$dir/trace.txt" \
       --save-params "$dir/final.safetensors" --no-eval "${data_flag[@]}" | tee "$dir/stdout.txt"
grep -q '^mean_loss(after) = ' "$dir/stdout.txt"
/usr/bin/python3 "$reference" "$name" "$dir/init.safetensors" "$dir/trace.txt" \
    "$dir/final.safetensors" "$steps" "$seed" ${data:+"$data"}
