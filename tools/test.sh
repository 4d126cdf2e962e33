#!/usr/bin/env bash
# Builds everything and runs every test: GoogleTest and shell tests through
# `bazel test //...` (the differential test among them), then the lit +
# FileCheck suite, the capsule evidence, the quickstart in a fresh clone, the
# sanitizer subset (--config=asan) and each libFuzzer target for a bounded time
# (VOUCH_FUZZ_SECONDS, default 60). Ends with one line `summary: N passed, N
# failed`. Exit status non-zero on any failure. docs/testing.md.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Each stage's wall time, printed before the summary (CI's budget: 90 minutes).
times=()
stage_start=$SECONDS
timed() { times+=("$1 $((SECONDS - stage_start)) s"); stage_start=$SECONDS; }

# One disk cache for this tree and the fresh clone below, so the clone's
# build is mostly cache hits.
disk_cache=${VOUCH_BAZEL_DISK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vouch/bazel-disk}
mkdir -p "$disk_cache"

echo "== bazel test //... (GoogleTest, shell tests)"
bazel test //... --disk_cache="$disk_cache" --test_summary=short 2>&1 | tee "$log"
bazel_rc=${PIPESTATUS[0]}
bazel_pass=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
bazel_fail=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" || true)
if [ "$bazel_rc" -ne 0 ] && [ "$bazel_fail" -eq 0 ]; then
  bazel_fail=1   # the build itself failed
fi
timed bazel

echo "== lit (FileCheck) tests/lit"
/usr/bin/python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv tests/lit 2>&1 | tee "$log"
lit_rc=${PIPESTATUS[0]}
lit_pass=$(sed -nE 's/^ *Passed *: *([0-9]+).*/\1/p' "$log" | tail -1)
lit_fail=$(sed -nE 's/^ *Failed *: *([0-9]+).*/\1/p' "$log" | tail -1)
lit_pass=${lit_pass:-0}; lit_fail=${lit_fail:-0}
if [ "$lit_rc" -ne 0 ] && [ "$lit_fail" -eq 0 ]; then lit_fail=1; fi
timed lit

echo "== capsule evidence: every cited test exists and exercises the capsule citing it"
tools/check_evidence.sh
evidence_rc=$?
evidence_pass=$((evidence_rc == 0 ? 1 : 0))
evidence_fail=$((evidence_rc == 0 ? 0 : 1))
timed evidence

echo "== the quickstart as a newcomer runs it: a fresh clone, tools/quickstart.sh"
tools/fresh_clone_quickstart.sh "$disk_cache"
clone_rc=$?
clone_pass=$((clone_rc == 0 ? 1 : 0))
clone_fail=$((clone_rc == 0 ? 0 : 1))
timed "fresh clone"

echo "== ASan + LSan + UBSan: bazel test --config=asan //:asan_subset (docs/testing.md)"
# The frontend's seeded-mutation test at a tenth of its mutants: an import is
# ten times slower under the sanitizers (the libFuzzer target searches further).
bazel test --config=asan //:asan_subset --disk_cache="$disk_cache" --test_summary=short \
    --test_env=VOUCH_FUZZ_MUTANTS_PER_FILE=1000 2>&1 | tee "$log"
asan_rc=${PIPESTATUS[0]}
asan_pass=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
asan_fail=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" || true)
if [ "$asan_rc" -ne 0 ] && [ "$asan_fail" -eq 0 ]; then asan_fail=1; fi
timed asan

echo "== libFuzzer: tools/fuzz.sh --time ${VOUCH_FUZZ_SECONDS:-60} (each target; docs/testing.md)"
tools/fuzz.sh --time "${VOUCH_FUZZ_SECONDS:-60}" 2>&1 | tee "$log"
fuzz_rc=${PIPESTATUS[0]}
fuzz_pass=$(grep -cE '^fuzz [a-z_]+: ok' "$log" || true)
fuzz_fail=$(grep -cE '^fuzz [a-z_]+: FAILED' "$log" || true)
if [ "$fuzz_rc" -ne 0 ] && [ "$fuzz_fail" -eq 0 ]; then fuzz_fail=1; fi
timed fuzz

echo "times: $(printf '%s, ' "${times[@]}")total $SECONDS s"

echo "bazel: $bazel_pass passed, $bazel_fail failed; lit: $lit_pass passed, $lit_fail failed;" \
     "evidence: $evidence_pass passed, $evidence_fail failed; fresh clone: $clone_pass passed, $clone_fail failed;" \
     "asan: $asan_pass passed, $asan_fail failed; fuzz: $fuzz_pass passed, $fuzz_fail failed"
echo "summary: $((bazel_pass + lit_pass + evidence_pass + clone_pass + asan_pass + fuzz_pass)) passed," \
     "$((bazel_fail + lit_fail + evidence_fail + clone_fail + asan_fail + fuzz_fail)) failed"
[ "$bazel_rc" -eq 0 ] && [ "$lit_rc" -eq 0 ] && [ "$evidence_rc" -eq 0 ] && [ "$clone_rc" -eq 0 ] &&
  [ "$asan_rc" -eq 0 ] && [ "$fuzz_rc" -eq 0 ]
