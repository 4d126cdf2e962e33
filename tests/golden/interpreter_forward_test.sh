#!/usr/bin/env bash
# The reference interpreter's float64 forward pass against PyTorch on the
# same seeded params (tolerance 1e-12).
# usage: interpreter_forward_test.sh VOUCH MODEL_FILE MODEL_NAME REFERENCE SEED [DATA]
# DATA: the .npy files (comma-separated) given to both, for models on files.
set -euo pipefail
vouch=$1 model=$2 name=$3 reference=$4 seed=$5 data=${6:-}
dir=${TEST_TMPDIR:-$(mktemp -d)}
data_flag=()
[ -n "$data" ] && data_flag=(--data "$data")
"$vouch" run --interpret --precise --seed "$seed" --save-params "$dir/params.safetensors" \
    "${data_flag[@]}" "$model" | tee "$dir/out.txt"
/usr/bin/python3 "$reference" --forward "$name" "$dir/params.safetensors" "$dir/out.txt" \
    ${data:+"$data"}
