#!/usr/bin/env bash
# The reference interpreter's float64 forward pass against PyTorch on the
# same seeded params (tolerance 1e-12).
# usage: interpreter_forward_test.sh VOUCH MODEL_FILE MODEL_NAME REFERENCE SEED
set -euo pipefail
vouch=$1 model=$2 name=$3 reference=$4 seed=$5
dir=${TEST_TMPDIR:-$(mktemp -d)}
"$vouch" run --interpret --precise --seed "$seed" --save-params "$dir/params.safetensors" \
    "$model" | tee "$dir/out.txt"
/usr/bin/python3 "$reference" --forward "$name" "$dir/params.safetensors" "$dir/out.txt"
