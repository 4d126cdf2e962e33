#!/usr/bin/env bash
# Held-out accuracy of a trained classifier: the example's executable trains
# its full train clause on cpu (f64) with a fixed seed, evaluates the held-out
# rows after training (its eval clause's "accuracy=" line), and the test fails
# when that accuracy is below the floor the README states.
# usage: accuracy_test.sh EXECUTABLE SEED MIN_PERCENT TRAIN_X,TRAIN_Y TEST_X,TEST_Y
set -euo pipefail
exe=$1 seed=$2 floor=$3 train=$4 held_out=$5
out=${TEST_TMPDIR:-$(mktemp -d)}/accuracy.txt
"$exe" --device cpu --dtype f64 --seed "$seed" --data "$train" --eval "$held_out" | tee "$out"
line=$(grep '^eval after training: ' "$out") || { echo "FAIL: no 'eval after training' line"; exit 1; }
accuracy=$(sed -n 's/.* accuracy=\([0-9.]*\)%.*/\1/p' <<<"$line")
[ -n "$accuracy" ] || { echo "FAIL: no accuracy in: $line"; exit 1; }
if awk -v a="$accuracy" -v f="$floor" 'BEGIN { exit !(a >= f) }'; then
  echo "held-out accuracy $accuracy% >= $floor% (seed $seed): ok"
else
  echo "FAIL: held-out accuracy $accuracy% < $floor% (seed $seed)"
  exit 1
fi
