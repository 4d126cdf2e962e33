#!/bin/bash
# cuda_info_test.sh: cuda_info's exit status and message (3 and the "no usable CUDA
# device" reason without a device; 0 and the device with one), and the deterministic
# reduction mode read from the environment in a fresh process.
set -u
BIN="$1"
fails=0
out="$TEST_TMPDIR/out"
err="$TEST_TMPDIR/err"
fail() { echo "FAIL: $*"; cat "$out" "$err"; fails=$((fails + 1)); }

env -u TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS -u TORCHLEAN_CUDA_CACHE_CAP_BYTES "$BIN" >"$out" 2>"$err"
rc=$?
if grep -qx "cuda runtime: native-with-device" "$out"; then
  [ $rc -eq 0 ] || fail "exit $rc with a device"
  grep -q "compute capability" "$out" || fail "no compute capability line"
else
  grep -qx "cuda runtime: native-no-device" "$out" || fail "no runtime state line"
  [ $rc -eq 3 ] || fail "exit $rc without a device (expected 3)"
  grep -qF "error: device \`cuda\` requested, but no usable CUDA device is visible (cudaGetDeviceCount: " "$err" \
    || fail "no 'no usable CUDA device' message"
  grep -qF "this executable will not fall back to the CPU" "$err" || fail "no CPU fallback sentence"
fi
grep -q "^  deterministic=not required (reductions are fixed-order either way" "$out" || fail "default deterministic= is not 'not required'"
grep -qx "  cache_cap_bytes=0 (unbounded)" "$out" || fail "default cap is not unbounded"

# Any non-empty value other than 0 turns the mode on, without a warning.
for value in 1 yes false " 0"; do
  TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS="$value" "$BIN" >"$out" 2>"$err"
  grep -q "^  deterministic=required " "$out" || fail "TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS='$value' is not required"
  grep -q "warning" "$err" && fail "TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS='$value' printed a warning"
done
for value in 0 ""; do
  TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS="$value" "$BIN" >"$out" 2>"$err"
  grep -q "^  deterministic=not required " "$out" || fail "TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS='$value' should be off"
done

if [ $fails -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all cuda_info checks passed"
