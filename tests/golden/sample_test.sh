#!/usr/bin/env bash
# --sample against PyTorch: the tiny GPT trained 60 steps (cpu, f64), then 30
# tokens generated greedily and at temperature 1.3 (past the context of 8, so
# the window slides), each token equal to torch_reference.py's generation
# from the same params with the same draws; a second run with the same seed
# prints the same tokens.
# usage: sample_test.sh EXECUTABLE REFERENCE DATA
set -euo pipefail
exe=$1 reference=$2 data=$3
dir=${TEST_TMPDIR:-$(mktemp -d)}
"$exe" --device cpu --seed 4 --steps 60 --data "$data" --save-params "$dir/trained.st" >/dev/null
for args in "0 0" "1.3 5"; do
  set -- $args
  "$exe" --device cpu --steps 0 --load-params "$dir/trained.st" --data "$data" \
    --sample 30 --temperature "$1" --seed "$2" >"$dir/sample.txt"
  /usr/bin/python3 "$reference" --sample tiny_gpt "$dir/trained.st" "$dir/sample.txt" 30 "$1" "$2"
  "$exe" --device cpu --steps 0 --load-params "$dir/trained.st" --data "$data" \
    --sample 30 --temperature "$1" --seed "$2" >"$dir/again.txt"
  cmp <(grep -A1 '^sample:' "$dir/sample.txt") <(grep -A1 '^sample:' "$dir/again.txt")
done
echo "sample: matches torch, reproducible by seed"
