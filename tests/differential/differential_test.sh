#!/usr/bin/env bash
# The CI-sized differential test (difftest.py): generated models compiled for
# cpu and trained in float64 against the reference interpreter.
# usage: differential_test.sh VOUCH REFERENCE DIFFTEST_PY SEEDS
set -euo pipefail
vouch=$1 reference=$2 difftest=$3 seeds=$4
work=${TEST_TMPDIR:-$(mktemp -d)}/difftest
exec /usr/bin/python3 "$difftest" --vouch "$vouch" --reference "$reference" \
    --seeds "$seeds" --work "$work"
