#!/usr/bin/env bash
# The differential test at any size (docs/testing.md): builds vouch and the
# float64 reference (tests/differential/reference.cpp), then runs
# tests/differential/difftest.py on the seeds asked for. CI runs seeds 1-30
# (//tests/differential:differential_test, in `bazel test //...`).
#
# usage: tools/difftest.sh [--seeds A-B|A,B,...] [--work DIR] [--keep] [--fd N]
#   (default --seeds 1-30). Ends "difftest: N models, N agree, N disagree";
#   exit status 1 if any disagrees (its directory is kept and named).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:vouch //tests/differential:reference 2>&1 | tail -1
exec /usr/bin/python3 tests/differential/difftest.py --vouch bazel-bin/tools/vouch \
    --reference bazel-bin/tests/differential/reference "$@"
