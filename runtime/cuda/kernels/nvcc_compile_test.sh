#!/usr/bin/env bash
# nvcc_compile_test: the kernel library's headers compile with nvcc for sm_90.
#  1. each header alone (it includes what it uses), and included twice (guards);
#  2. kernel_instances.cu, every template instantiated for float and double as codegen
#     emits them, as an object (-c) and as PTX, with warnings as errors;
#  3. the PTX defines every entry point: each `extern "C" __global__` of
#     kernel_instances.cu and executor.cuh's static ones.
# Fails on the first error, printing nvcc's diagnostics.
set -u
dir=runtime/cuda/kernels
nvcc=/usr/local/cuda/bin/nvcc
tmp=${TEST_TMPDIR:-$(mktemp -d)}
flags=(-std=c++17 -arch=sm_90 -I "$dir" --Werror all-warnings)
fail() { echo "FAIL: $*"; exit 1; }

for h in "$dir"/*.cuh "$dir"/*.h; do
  name=$(basename "$h")
  printf '#include "%s"\n#include "%s"\n' "$name" "$name" >"$tmp/alone_$name.cu"
  "$nvcc" "${flags[@]}" -c "$tmp/alone_$name.cu" -o "$tmp/alone_$name.o" ||
    fail "$name does not compile alone"
done
echo "ok: each header compiles alone"

"$nvcc" "${flags[@]}" -c "$dir/kernel_instances.cu" -o "$tmp/instances.o" ||
  fail "kernel_instances.cu does not compile (-c)"
"$nvcc" "${flags[@]}" -ptx "$dir/kernel_instances.cu" -o "$tmp/instances.ptx" ||
  fail "kernel_instances.cu does not compile (-ptx)"
echo "ok: kernel_instances.cu compiles (object and PTX)"

# (An entry's attributes, __launch_bounds__(...) or __cluster_dims__(...), may stand
# between `void` and its name, the name on the next line.)
symbols=$(perl -0777 -ne \
  'print "$1\n" while /extern "C" __global__ void\s+(?:__\w+__\([^)]*\)\s*)*(\w+)\(/g' \
  "$dir/kernel_instances.cu" "$dir/executor.cuh")
count=0
for want in vouch_select_batch_f32 vouch_select_batch_f64 vouch_select_windows_f32 \
            vouch_select_windows_f64 vouch_optimizer_f32 vouch_optimizer_f64; do
  grep -qx "$want" <<<"$symbols" || fail "executor.cuh does not declare $want"
done
for sym in $symbols; do
  grep -q "^\.visible \.entry $sym(" "$tmp/instances.ptx" || fail "the PTX lacks entry $sym"
  count=$((count + 1))
done
[ "$count" -ge 38 ] || fail "only $count entry points found, want 38"
echo "ok: all $count entry points in the PTX"
