#!/usr/bin/env bash
# The cuda target without a GPU (CI): `vouch build --target cuda` compiles
# the kernels with NVRTC and links static cudart + cuBLAS; the executable
# starts, trains on the CPU under --device auto, and refuses --device cuda
# with the "no usable CUDA device" message (exit 3), never running elsewhere.
# On a machine with a usable GPU the last check expects a CUDA run instead.
# usage: cuda_target_test.sh VOUCH MODEL LIBRARY_MODEL
set -u
vouch=$1 model=$2 library=$3
dir=${TEST_TMPDIR:-$(mktemp -d)}
export VOUCH_CACHE_DIR=$dir/cache
fail() { echo "FAIL: $*"; exit 1; }
# The generated sources of directory $1 as one text: model.cpp with its string
# literals' lines joined (`"` newline `  "` dropped) and the binaries beside it
# (the tables blobs, runtime/model_tables.h, which hold the schedule as a string:
# an executable's model.cpp includes them through the assembler).
joined() { cat "$1/model.cpp" "$1"/*.bin | tr -d '\n' | sed 's/"  "//g' >"$1/all.joined"; }
# Fails unless the joined sources of directory $1 hold every line after $2 (what
# the sources are, for the message).
schedule_has() {
  local src=$1 what=$2 want
  shift 2
  for want in "$@"; do
    grep -aqF "$want" "$src/all.joined" || fail "$what lacks: $want"
  done
}
"$vouch" build "$model" --target cuda -o "$dir/q" --emit-dir "$dir/src" 2>"$dir/build.err" ||
  { cat "$dir/build.err"; fail "vouch build --target cuda"; }
joined "$dir/src"
grep -q '#include "executor.cuh"' "$dir/src/kernels.cu" ||
  fail "kernels.cu does not include the executor's kernels"
grep -q 'vouch::pointwise_kernel<1, 2>(vouch_pointwise_step_mul_op{}' "$dir/src/kernels.cu" ||
  fail "kernels.cu lacks the fused relu VJP instantiation"
# --show-backend on cuda prints the step's schedule: fused groups and, for
# the quickstart's small products, vouch's product kernels (checked here in
# the source, since only a GPU host can print it).
schedule_has "$dir/src" "schedule" "= fused sub scale fill mul" \
            "vouch_pointwise_step_mul = fused step mul" \
            "vjp n0 vouch_small_product (matmul) [native_cuda.matmul]" \
            "forward vouch_small_linear (linear) [native_cuda.linear]"
grep -aq "cublas" "$dir/src/all.joined" && fail "the quickstart calls cuBLAS for a small product"
# A model with large products: cuBLAS calls with their transpose flags.
"$vouch" build "$library" --target cuda -o "$dir/lib" --emit-dir "$dir/libsrc" 2>"$dir/lib.err" ||
  { cat "$dir/lib.err"; fail "vouch build --target cuda $library"; }
joined "$dir/libsrc"
schedule_has "$dir/libsrc" "ops_library schedule" "forward cublasLtMatmul(transa=T, transb=N, A=weight, B=input, epilogue=BIAS) (linear) [cublaslt.linear]" \
            "cublasGemmEx(transa=N, transb=T, A=rhs, B=lhs) (matmul) [cublas.matmul]"
# --bias-grad-epilogue: the large layer's weight and bias gradients are one
# cuBLASLt call (BGRADB).
"$vouch" build "$library" --target cuda --bias-grad-epilogue -o "$dir/libg" \
  --emit-dir "$dir/libgsrc" 2>"$dir/libg.err" ||
  { cat "$dir/libg.err"; fail "vouch build --target cuda --bias-grad-epilogue $library"; }
joined "$dir/libgsrc"
schedule_has "$dir/libgsrc" "ops_library --bias-grad-epilogue schedule" "cublasGemmEx(transa=N, transb=N, A=rhs, B=lhs) (matmul) [cublas.matmul]" \
            "cublasLtMatmul(transa=N, transb=T, A=input, B=grad, epilogue=BGRADB) (linear_weight_grad) [cublaslt.linear_weight_grad]"
"$dir/q" --device auto --steps 5 >"$dir/auto.out" 2>&1 || { cat "$dir/auto.out"; fail "--device auto"; }
grep -q '^mean_loss(after) = ' "$dir/auto.out" || fail "no training output"
"$dir/q" --device cuda --steps 1 >"$dir/cuda.out" 2>&1
rc=$?
if grep -q "no usable CUDA device is visible" "$dir/cuda.out"; then
  [ $rc -eq 3 ] || fail "exit $rc, want 3"
  grep -q "will not fall back to the CPU" "$dir/cuda.out" || fail "message"
  echo "no GPU here: --device cuda refused as it must be"
else
  [ $rc -eq 0 ] || { cat "$dir/cuda.out"; fail "--device cuda with a device: exit $rc"; }
fi
"$dir/q" --device rocm >"$dir/rocm.out" 2>&1 && fail "--device rocm ran"
grep -q 'device `rocm` has no maintained runtime profile' "$dir/rocm.out" || fail "rocm message"
echo "ok"
