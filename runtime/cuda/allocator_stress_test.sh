#!/bin/bash
# allocator_stress_test.sh: the cache cap read from the environment, in fresh
# processes (it is read once per process): unset, 0, a finite cap, a malformed value
# and an overflowing one; each bad value gives exactly one warning and an unbounded
# cache. Without a device the tool stops after the cap line (printing the SKIPPED
# line); with one it also runs its checks (exit 1 on failure).
set -u
BIN="$1"
fails=0
out="$TEST_TMPDIR/out"
err="$TEST_TMPDIR/err"

# run EXPECTED_CAP_LINE EXPECTED_WARNINGS [VALUE]: VALUE unset when absent.
run() {
  local want_cap="$1" want_warnings="$2"
  if [ $# -ge 3 ]; then
    TORCHLEAN_CUDA_CACHE_CAP_BYTES="$3" "$BIN" >"$out" 2>"$err"
  else
    env -u TORCHLEAN_CUDA_CACHE_CAP_BYTES "$BIN" >"$out" 2>"$err"
  fi
  local rc=$?
  local label="${3-<unset>}"
  if [ $rc -ne 0 ]; then
    echo "FAIL [$label]: exit $rc"; cat "$out" "$err"; fails=$((fails + 1)); return
  fi
  if ! grep -qxF "$want_cap" "$out"; then
    echo "FAIL [$label]: no line '$want_cap'"; cat "$out"; fails=$((fails + 1))
  fi
  local n
  n=$(grep -c "ignored; the cache is unbounded" "$err")
  if [ "$n" -ne "$want_warnings" ]; then
    echo "FAIL [$label]: $n warnings, expected $want_warnings"; cat "$err"; fails=$((fails + 1))
  fi
  if [ "$want_warnings" -eq 1 ] && ! grep -qF "TORCHLEAN_CUDA_CACHE_CAP_BYTES=\"$3\"" "$err"; then
    echo "FAIL [$label]: the warning does not name the value"; cat "$err"; fails=$((fails + 1))
  fi
  if ! grep -qxE "allocator_stress: ok|SKIPPED \(no CUDA device\): allocator stress" "$out"; then
    echo "FAIL [$label]: neither ok nor SKIPPED"; cat "$out"; fails=$((fails + 1))
  fi
  echo "ok [$label]: $(head -1 "$out")"
}

run "cap_bytes=0 (unbounded)" 0
run "cap_bytes=0 (unbounded)" 0 "0"
run "cap_bytes=8388608 (bounded)" 0 "8388608"
run "cap_bytes=0 (unbounded)" 1 "12abc"
run "cap_bytes=0 (unbounded)" 1 ""
run "cap_bytes=0 (unbounded)" 1 " 5"
run "cap_bytes=0 (unbounded)" 1 "-1"
run "cap_bytes=0 (unbounded)" 1 "99999999999999999999"
run "cap_bytes=18446744073709551615 (bounded)" 0 "18446744073709551615"

# --require-device: exit 3 exactly when there is no device.
"$BIN" --require-device >"$out" 2>"$err"
rc=$?
if grep -qF "SKIPPED (no CUDA device)" "$out"; then
  [ $rc -eq 3 ] || { echo "FAIL [--require-device]: exit $rc without a device"; fails=$((fails + 1)); }
else
  [ $rc -eq 0 ] || { echo "FAIL [--require-device]: exit $rc with a device"; cat "$out" "$err"; fails=$((fails + 1)); }
fi

if [ $fails -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all allocator_stress checks passed"
