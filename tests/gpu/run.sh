#!/usr/bin/env bash
# The GPU suite runner: executes, on a machine with an NVIDIA GPU, every CUDA
# test and example packaged by tools/gpu_suite.sh, and ends with one line
# `gpu-suite: N passed, N failed`. Needs no Bazel; python3 for comparisons.
# A test that reports "SKIPPED (no CUDA device)" here counts as a failure.
set -u
cd "$(dirname "$0")"
# tools/gpu_suite.sh ships the executables compressed.
./unpack.sh || { echo "gpu-suite: cannot unpack binaries.tar.xz"; exit 1; }
export TEST_TMPDIR=${TMPDIR:-/tmp}/vouch-gpu-suite
rm -rf "$TEST_TMPDIR"; mkdir -p "$TEST_TMPDIR"
log=${OUT:-$TEST_TMPDIR}/gpu-suite.log
passed=0 failed=0
result() {  # name, status
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
expect_lines() {  # file, line...: fails, naming each, when a line is not in the file
  local file=$1 missing=0 want
  shift
  for want in "$@"; do
    grep -qF "$want" "$file" || { echo "missing: $want"; missing=1; }
  done
  return $missing
}
# A launch audit's lines (extended regexes): audit_has FILE PATTERN WHAT names WHAT as
# missing, audit_lacks FILE PATTERN WHAT names WHAT as found; either returns 1 then.
audit_has() { grep -qE "$2" "$1" || { echo "missing: $3"; return 1; }; }
audit_lacks() { ! grep -qE "$2" "$1" || { echo "$3"; return 1; }; }
check() {  # name, command...: passes when the command succeeds and skipped nothing
  local name=$1; shift
  local out="$TEST_TMPDIR/out.txt"
  "$@" >"$out" 2>&1
  local rc=$?
  if grep -q "SKIPPED (no CUDA device)" "$out"; then rc=99; fi
  [ $rc -eq 0 ] || tail -20 "$out"
  cat "$out" >>"$log"
  result "$name" $rc
}

echo "== device"
rt/cuda_info || { echo "no usable CUDA device"; }

echo "== runtime/cuda tests"
for t in rt/*_test; do check "runtime ${t#rt/}" "$t"; done
check "allocator: cap, unbounded, malformed, overflow (fresh processes)" \
  rt/allocator_stress_test.sh rt/allocator_stress

echo "== kernel library"
check "kernel lab: every kernel against its CPU reference (runtime/cuda/kernels)" rt/kernel_lab

# Fresh random params every run (the models initialise with uniform /
# xavier / kaiming / normal from this seed); printed so a failure can be
# replayed with VOUCH_GPU_SUITE_SEED.
seed=${VOUCH_GPU_SUITE_SEED:-$(( $(date +%s) % 100000 ))}
echo "== models: cuda against cpu (same executable, seed $seed, same data)"
for exe in bin/*; do
  name=$(basename "$exe")
  [ "$name" = wide_mlp ] && continue
  d="$TEST_TMPDIR/$name"; mkdir -p "$d"
  steps=30
  run() {  # tag, flags...
    local tag=$1; shift
    "$exe" --seed "$seed" --steps $steps --trace "$d/$tag.trace" --save-params "$d/$tag.st" "$@" \
      >"$d/$tag.out" 2>&1
  }
  run cpu64 --device cpu --dtype f64 &&
  run cuda64 --device cuda --dtype f64 &&
  run cuda32 --device cuda --dtype f32 &&
  run cuda32b --device cuda --dtype f32 &&
  run cuda32ng --device cuda --dtype f32 --no-cuda-graph
  rc=$?
  if [ $rc -ne 0 ]; then tail -5 "$d"/*.out; result "$name: all runs complete" 1; continue; fi
  result "$name: all runs complete" 0
  # Declared tolerances: f64 on the GPU vs the f64 reference kernels differs
  # only by summation order (cuBLAS / block trees vs left folds): 1e-12; f32
  # runs carry float32 rounding through 30 optimizer steps: 1e-5 (measured
  # on an H200: 1e-15 and 6e-7; docs/performance.md keeps the numbers).
  # The models whose rounding is amplified past those bounds, each with its own
  # declared, measured ones (one table; the defaults above hold every other model):
  #   f64_params    compare.py options for the cuda f64 params
  #   f32_params    the same for the cuda f32 params
  #   f32_forwards  1: the f32 run is held to 1e-5 / 1e-4 only on the forwards
  #                 before any update (mean_loss_before, step 0), not all steps
  #   f32_losses    with f32_forwards, an atol for all 30 steps' losses too (and,
  #                 where f32_params is set, the params at its bound; else unchecked)
  f64_params= f32_params= f32_forwards=0 f32_losses=
  case "$name" in
    ops_classifier)
      # Adam (lr 0.01) steps a weight whose gradient is near zero by up to lr on
      # f32 rounding alone; measured on an H200, 9 seeds: 2.6e-7 at most for
      # eight, 5.2e-4 at seed 10517 (its losses 9.9e-6 apart, within 1e-5):
      # declared params atol 2e-3, about 4x that.
      f32_params="--params-atol 2e-3" ;;
    ops_library|ops_library_bgradb)
      # The same effect (Adam lr 0.01): cuda f32 against cpu f64 2.58e-5 at seed
      # 73927 on an H100 (w2[7974]), cpu f32 against cpu f64 2.51e-5 at that
      # seed and at most 5.8e-7 at the 30 others (1..30): declared 1e-4.
      f32_params="--params-atol 1e-4" ;;
    ops_conv)
      # SGD with momentum through relus: where rounding puts a relu input on the
      # other side of 0 at some step, that unit's gradient switches and momentum
      # carries it. cpu f32 against cpu f64 (30 steps), seeds 1..150: at most
      # 7.3e-7 for 148 of them, 1.82e-5 at seed 37 and 5.83e-5 at seed 43381
      # (b1[0]; the losses 3.6e-6 apart, within 1e-5), where cuda f32 on an
      # H100 differed by the same 5.83e-5: declared params atol 2e-4.
      f32_params="--params-atol 2e-4" ;;
    batchnorm_mlp)
      # Its first linear feeds batch_norm, which cancels any change of that
      # weight's row scale, so Adam steps w1 (and bn1's running mean, the mean of
      # w1·x) on rounding noise alone: cuda f64 against cpu f64 differed by
      # 1.4e-10 in bn1.running_mean (5.3e-11 in w1) at seed 71628 and 4.4e-10 at
      # seed 1 on an H100, the losses by 9.7e-13 and 5.5e-12 (within 1e-12 +
      # 1e-11 relative): declared params atol 1e-8 (f32 rounding is amplified
      # the same way: cpu f32 vs cpu f64 reach 3.7e-2 over 26 seeds, ~6e5 ulps
      # per ulp; 1e-16 x 6e5 = 6e-11 per ulp of f64 difference). Its f32 losses:
      # cpu f32 vs cpu f64 over 26 seeds (30 steps) differ by 6e-7 at step 0
      # and 4.4e-4 at most after (5 seeds past 1e-5 / 1e-4, first at steps 12,
      # 17, 21, 24, 25): held strictly on the forwards, at 2e-3 on all 30
      # steps' losses, params unchecked.
      f64_params="--params-atol 1e-8" f32_forwards=1 f32_losses=2e-3 ;;
    ops_batchnorm)
      # The same amplification (its first linear feeds batch_norm): cuda f32 on an
      # H100 against cpu f64 differed by 1.75e-4 in the losses, 2.2e-4 in the params
      # at seed 60811, where cpu f32 against cpu f64 differs by 1.64e-4 / 2.08e-4;
      # cpu f32 against cpu f64 over seeds 1..300: within 1e-5 / 1e-4 for 294 of
      # them, 5.5e-4 / 2.6e-4 at worst (seed 183), the forwards before any update
      # (seeds 183, 197, 60811) within 1.5e-7. Held strictly on the forwards, at
      # 2e-3 on all 30 steps' losses and 1e-3 on the params (about 4x the worst
      # measured of each); the f64 run and the bitwise checks hold every step and
      # param.
      f32_forwards=1 f32_losses=2e-3 f32_params="--params-atol 1e-3" ;;
    digits_cnn)
      # conv, batch_norm, relu and max_pool under SGD momentum: where rounding
      # flips a relu input's sign or a pooling window's maximum, the unit's
      # gradient switches and momentum carries it. cpu f32 against cpu f64 (30
      # steps), seeds 1..60: at most 8.1e-7 in the losses and 6.2e-6 in the
      # params for 58 of them; seed 44 1.5e-5 / 2.4e-4, seed 51 4.5e-3 /
      # 3.2e-2; seed 53722 3.3e-3 / 3.1e-2, where cuda f32 on an H100 differed
      # by the same (the failure that found it). Held strictly on the forwards,
      # at 1e-2 on all 30 steps' losses (about 2x the worst measured), params
      # unchecked; the f64 run and the bitwise checks hold every step.
      f32_forwards=1 f32_losses=1e-2 ;;
    resnet_small)
      # Its f32 run follows the f64 one to ~3e-7 until some step's rounding
      # puts one of its ~230k relu inputs per step on the other side of 0: that
      # unit's gradient switches on or off, the next losses move by ~1e-4, and
      # SGD momentum grows it (cpu f32 vs cpu f64: 3 of 10 seeds past 1e-5 /
      # 1e-4 within 10 steps, first at steps 6, 7, 6; 1 of 3 within 30 steps,
      # at step 8, 5e-2 by step 25). On those seeds the forwards agree to
      # 4.4e-7. The f64 run (rounding 1e-16) and the bitwise checks hold all
      # 30 steps.
      f32_forwards=1 ;;
  esac
  check "$name: cuda f64 vs cpu f64" python3 compare.py "$name cuda-f64 vs cpu-f64" \
    "$d/cuda64.trace" "$d/cuda64.st" "$d/cpu64.trace" "$d/cpu64.st" 1e-12 1e-11 $f64_params
  if [ $f32_forwards = 1 ]; then
    # The forwards before any update: the mean loss before training (batch_norm's
    # running statistics) and step 0's loss (batch statistics).
    for tag in cuda32 cpu64; do
      grep -E '^(mean_loss_before|step 0) ' "$d/$tag.trace" >"$d/$tag.forward.trace"
    done
    check "$name: cuda f32 vs cpu f64, forwards before any update" python3 compare.py \
      "$name cuda-f32 vs cpu-f64 forward" "$d/cuda32.forward.trace" "$d/cuda32.st" \
      "$d/cpu64.forward.trace" "$d/cpu64.st" 1e-5 1e-4 --losses-only
    [ -n "$f32_losses" ] &&
      check "$name: cuda f32 vs cpu f64, 30 steps' losses (declared $f32_losses${f32_params:+, params $f32_params})" \
        python3 compare.py "$name cuda-f32 vs cpu-f64 losses" "$d/cuda32.trace" "$d/cuda32.st" \
        "$d/cpu64.trace" "$d/cpu64.st" "$f32_losses" 0 ${f32_params:---losses-only}
  else
    check "$name: cuda f32 vs cpu f64" python3 compare.py "$name cuda-f32 vs cpu-f64" \
      "$d/cuda32.trace" "$d/cuda32.st" "$d/cpu64.trace" "$d/cpu64.st" 1e-5 1e-4 $f32_params
  fi
  check "$name: two cuda runs bitwise equal" python3 compare.py "$name cuda-f32 run 1 vs run 2" \
    "$d/cuda32.trace" "$d/cuda32.st" "$d/cuda32b.trace" "$d/cuda32b.st" 0 0
  check "$name: graph replay = no graph, bitwise" python3 compare.py "$name graph vs --no-cuda-graph" \
    "$d/cuda32.trace" "$d/cuda32.st" "$d/cuda32ng.trace" "$d/cuda32ng.st" 0 0
  # Every node of a step's CUDA graph is made by a launch the schedule names (and
  # each vouch kernel launch by that kernel), in both dtypes: 0 unreported.
  for dt in f32 f64; do
    "$exe" --device cuda --dtype $dt --steps 1 --audit-launches >"$d/audit$dt.out" 2>&1
    rc=$?
    grep -qE "^launch audit: [0-9]+ graph nodes, [0-9]+ made by named launches, 0 unreported, 0 not the kernel named$" \
      "$d/audit$dt.out" || rc=1
    [ $rc -eq 0 ] || cat "$d/audit$dt.out"
    cat "$d/audit$dt.out" >>"$log"
    result "$name: launch audit $dt, 0 unreported" $rc
  done
done

echo "== attention: the fused kernels (cuda) against the composed form (cpu f64)"
# bin/X runs scaled_dot_product_attention as flash_attention, bin/X_composed as
# batched products and a masked softmax; same seed, same init, same data: the
# fused cuda runs must match the composed cpu f64 reference as closely as any
# cuda run matches its own build's.
for composed in bin/*_composed; do
  [ -e "$composed" ] || continue
  fused=$(basename "$composed" _composed)
  check "$fused: fused cuda f64 vs composed cpu f64" python3 compare.py \
    "$fused fused cuda-f64 vs composed cpu-f64" \
    "$TEST_TMPDIR/$fused/cuda64.trace" "$TEST_TMPDIR/$fused/cuda64.st" \
    "$TEST_TMPDIR/${fused}_composed/cpu64.trace" "$TEST_TMPDIR/${fused}_composed/cpu64.st" 1e-12 1e-11
  check "$fused: fused cuda f32 vs composed cpu f64" python3 compare.py \
    "$fused fused cuda-f32 vs composed cpu-f64" \
    "$TEST_TMPDIR/$fused/cuda32.trace" "$TEST_TMPDIR/$fused/cuda32.st" \
    "$TEST_TMPDIR/${fused}_composed/cpu64.trace" "$TEST_TMPDIR/${fused}_composed/cpu64.st" 1e-5 1e-4
  bin/$fused --device cuda --steps 1 --show-backend >"$TEST_TMPDIR/$fused.show" 2>&1
  rc=$?
  # Its first two attentions take q, k, v out of one projection (qkv_attention),
  # the third is a flash_attention; the delta kernel is one for both.
  expect_lines "$TEST_TMPDIR/$fused.show" "flash_attention: native_cuda.flash_attention provider=native-cuda" \
              "flash_attention_grad: native_cuda.flash_attention_grad provider=native-cuda" \
              "qkv_attention: native_cuda.qkv_attention provider=native-cuda" \
              "qkv_attention_grad: native_cuda.qkv_attention_grad provider=native-cuda" \
              "vouch_attention_delta + vouch_qkv_attention_grad_dkdv + vouch_qkv_attention_grad_dq (qkv_attention_grad) [native_cuda.qkv_attention_grad]" \
              "vouch_attention_delta + vouch_flash_attention_grad_masked_dkdv + vouch_flash_attention_grad_masked_dq (flash_attention_grad) [native_cuda.flash_attention_grad]" || rc=1
  result "$fused --show-backend names the fused attention capsules" $rc
done

echo "== convolution: ops_conv's step names im2col, its cuBLAS products with their flags, col2im; resnet_small's col2im_matmul"
# The composed form on cuda: the windows by vouch's kernels (conv.cuh), every
# product a cuBLAS call through transpose flags (dW contracting over the batch's
# columns with transb=T, dx with transa=T; a grouped layer a strided batch)
# or vouch's small-product kernel, the fold by col2im; no other kernel does a
# convolution's work. ops_conv's images have at most 16 channels per group, so
# none of its dx is folded; resnet_small's 3x3 convs of 32-channel images are:
# each one col2im_matmul (col2im_matmul.cuh, its columns never stored).
if [ -e bin/ops_conv ]; then
  bin/ops_conv --device cuda --steps 1 --show-backend >"$TEST_TMPDIR/ops_conv.show" 2>&1
  rc=$?
  expect_lines "$TEST_TMPDIR/ops_conv.show" "im2col: native_cuda.im2col provider=native-cuda" \
              "col2im: native_cuda.col2im provider=native-cuda" \
              "matmul: cublas.matmul provider=cublas" \
              "vouch_im2col (im2col) [native_cuda.im2col]" \
              "vouch_col2im (col2im) [native_cuda.col2im]" || rc=1
  for want in 'cublasGemmEx\(transa=N, transb=T[^)]*\).*\(matmul\) \[cublas\.matmul\]' \
              'cublasGemmEx\(transa=T, transb=N[^)]*\).*\(matmul\) \[cublas\.matmul\]' \
              'cublasGemmStridedBatchedEx\(transa=N, transb=T[^)]*\).*\(matmul\) \[cublas\.matmul\]'; do
    grep -qE "$want" "$TEST_TMPDIR/ops_conv.show" || { echo "missing: $want"; rc=1; }
  done
  if grep -qF "col2im_matmul" "$TEST_TMPDIR/ops_conv.show"; then
    echo "a dx of at most 16 channels per group was folded"; rc=1
  fi
  [ $rc -eq 0 ] || tail -40 "$TEST_TMPDIR/ops_conv.show"
  result "ops_conv --show-backend names im2col, cuBLAS with flags, col2im" $rc
fi
if [ -e bin/resnet_small ]; then
  bin/resnet_small --device cuda --steps 1 --show-backend >"$TEST_TMPDIR/resnet_small.show" 2>&1
  rc=$?
  expect_lines "$TEST_TMPDIR/resnet_small.show" "col2im_matmul: native_cuda.col2im_matmul provider=native-cuda" \
              "vouch_col2im_matmul (col2im_matmul) [native_cuda.col2im_matmul]" || rc=1
  [ $rc -eq 0 ] || tail -40 "$TEST_TMPDIR/resnet_small.show"
  result "resnet_small --show-backend names col2im_matmul" $rc
fi

echo "== rounded products (checked_cuda+tf32, +bf16): the attention model, both forms, the cuBLAS model and the convolutions against cpu f64"
# TF32 rounds each product's operands to a 10-bit mantissa (relative 2^-11):
# declared tolerance atol 1e-3, rtol 1e-2 on 30 SGD steps' losses and the final
# params (f32 without rounding is held to 1e-5 above). bf16 keeps 8 bits
# (relative 2^-9, 4x TF32's): atol 4e-3, rtol 4e-2.
# The cuBLAS model (ops_library: its hidden layer's products in cuBLAS /
# cuBLASLt, rounded alike) trains with Adam, whose normalised update turns
# rounding-level gradient differences into lr-sized steps: losses only, over 5
# steps (measured on an H200 over 12 seeds: largest relative loss error tf32
# 6.1e-3, bf16 1.2e-2; over 30 steps 2.6e-2 and 6.8e-2, the trajectories
# apart). Declared: tf32 atol 1e-3 rtol 2e-2, bf16 atol 4e-3 rtol 4e-2.
mkdir -p "$TEST_TMPDIR/ops_library-5"
bin/ops_library --seed "$seed" --steps 5 --device cpu --dtype f64 \
  --trace "$TEST_TMPDIR/ops_library-5/cpu64.trace" \
  --save-params "$TEST_TMPDIR/ops_library-5/cpu64.st" >/dev/null 2>&1
for precision in tf32 bf16; do
  for exe in $precision/*; do
    [ -e "$exe" ] || continue
    name=$(basename "$exe")
    d="$TEST_TMPDIR/$precision-$name"; mkdir -p "$d"
    case $precision in tf32) atol=1e-3 rtol=1e-2 ;; bf16) atol=4e-3 rtol=4e-2 ;; esac
    # The reference: the attention model's composed cpu f64 run, else the model's own.
    steps=30 ref=$name only=
    case $name in
      ops_attention_*) ref=ops_attention_composed ;;
      ops_library|ops_library_bgradb)
        steps=5 ref=ops_library-5 only=--losses-only
        [ $precision = tf32 ] && rtol=2e-2 ;;
    esac
    "$exe" --seed "$seed" --steps $steps --device cuda --dtype f32 --trace "$d/cuda32.trace" \
      --save-params "$d/cuda32.st" >"$d/out.txt" 2>&1 || tail -5 "$d/out.txt"
    check "$name $precision: cuda f32 vs $ref cpu f64" python3 compare.py \
      "$name $precision cuda-f32 vs $ref cpu-f64" "$d/cuda32.trace" "$d/cuda32.st" \
      "$TEST_TMPDIR/$ref/cpu64.trace" "$TEST_TMPDIR/$ref/cpu64.st" $atol $rtol $only
    # Every graph node named, the bf16 rounding launches included.
    "$exe" --device cuda --steps 1 --audit-launches >"$d/audit.out" 2>&1
    rc=$?
    grep -qE "^launch audit: [0-9]+ graph nodes, [0-9]+ made by named launches, 0 unreported, 0 not the kernel named$" \
      "$d/audit.out" || rc=1
    # Under bf16, ops_library's operands are rounded once by vouch.round_bf16
    # steps and read in place (vouch-round-bf16-operands): the relu's kernel
    # stores its result as bf16, the weight's rounding is a kernel of its own;
    # ops_padded's, which their products pad, by the executor's
    # vouch_round_bf16_f32 copies.
    # Each model's expected launches: regex, what it names, in pairs; and
    # whether every operand was rounded by a vouch.round_bf16 step or stored
    # as bf16 by its producer, so that the executor copies none.
    expected=() no_copies=0
    case "$precision/$name" in
      bf16/ops_library)
        no_copies=1
        expected=(
          "vouch_pointwise_relu_round_bf16_f32 <- step [0-9]+ vouch_pointwise_relu_round_bf16 \[native_cuda.relu, native_cuda.round_bf16\]"
          "the relu's kernel storing bf16"
          "vouch_pointwise_round_bf16_f32 <- step [0-9]+ vouch_pointwise_round_bf16 \[native_cuda.round_bf16\]"
          "a vouch.round_bf16 launch"
          ", x read as bf16 in place \(buffer v[0-9]+\), W read as bf16 in place"
          "a linear reading bf16 operands in place") ;;
      # ops_head's dlogits and its layer_norm's y, which only its products read,
      # are stored as bf16 by cross_entropy_grad's and layer_norm's own kernels
      # (their bf16Result) and read in place.
      bf16/ops_head)
        no_copies=1
        expected=(
          "cross_entropy_grad_bf16_f32 <- step [0-9]+ vouch_cross_entropy_grad_bf16 \[native_cuda.cross_entropy_grad\]"
          "cross_entropy_grad storing its dlogits as bf16"
          "vouch_layer_norm_bf16_f32 <- step [0-9]+ vouch_layer_norm_bf16 \[native_cuda.layer_norm\]"
          "layer_norm storing its y as bf16"
          "bf16 in place \(vouch.layer_norm\)"
          "a product reading the layer_norm's bf16 y in place"
          "B bf16 in place \(vouch.cross_entropy_grad\)\) \[cublas.matmul\], lhs read as bf16 in place \(buffer v[0-9]+\), rhs read as bf16 in place"
          "a product reading bf16 operands in place") ;;
      # ops_attention's qkv_attentions (heads of at most 64: attention64.cuh)
      # read their qkv as bf16, rounded once where its linear leaves it, by
      # their bf16-input kernels.
      bf16/ops_attention_fused)
        expected=(
          "vouch_qkv_attention_bf16_f32 <- step [0-9]+ "
          "the causal qkv_attention's kernel reading bf16 qkv"
          "vouch_qkv_attention_masked_bf16_f32 <- step [0-9]+ "
          "the masked qkv_attention's kernel reading bf16 qkv"
          "vouch_qkv_attention_grad_bf16_dkdv_f32 <- step [0-9]+ "
          "its gradient's dk, dv kernel reading bf16 qkv"
          "vouch_qkv_attention_grad_masked_bf16_dq_f32 <- step [0-9]+ "
          "the masked gradient's dq kernel reading bf16 qkv") ;;
      bf16/ops_padded)
        expected=(
          "vouch_round_bf16_f32 <- step [0-9]+ vouch_round_bf16_f32 \([A-Za-z]+ of step"
          "a vouch_round_bf16_f32 launch") ;;
    esac
    a="$d/audit.out"
    for ((i = 0; i < ${#expected[@]}; i += 2)); do
      audit_has "$a" "${expected[i]}" "${expected[i + 1]}" || rc=1
    done
    if [ $no_copies = 1 ]; then
      audit_lacks "$a" "vouch_round_bf16_f32 <-" \
        "an executor rounding copy where the operands were already bf16" || rc=1
    fi
    # ops_padded's width 75 is padded: its operand and output copies are named.
    if [ "$name" = ops_padded ]; then
      audit_has "$a" "vouch_repitch_f32 <- step [0-9]+ vouch_repitch_f32 \([A-Za-z]+ of step" \
        "a vouch_repitch_f32 launch" || rc=1
    fi
    [ $rc -eq 0 ] || cat "$d/audit.out"
    cat "$d/audit.out" >>"$log"
    result "$name $precision: launch audit, 0 unreported" $rc
    # The executable says what its products compute in.
    "$exe" --device cuda --steps 1 --show-backend >"$d/show.txt" 2>&1
    rc=$?
    grep -q "profile checked_cuda+$precision" "$d/show.txt" || { echo "missing profile line"; rc=1; }
    if [ "$name" = ops_attention_fused ]; then
      for op in flash_attention qkv_attention; do
        grep -q "native_cuda.$op provider=native-cuda .* products=$precision" \
          "$d/show.txt" || { echo "missing: $op products=$precision"; rc=1; }
      done
    fi
    if [ "$name" = ops_library ]; then
      grep -q "cublas.matmul provider=cublas .* products=$precision" \
        "$d/show.txt" || { echo "missing: cublas.matmul products=$precision"; rc=1; }
    fi
    if [ "$name" = ops_library_bgradb ]; then
      grep -q "cublaslt.linear_weight_grad provider=cublaslt .* products=$precision" \
        "$d/show.txt" || { echo "missing: cublaslt.linear_weight_grad products=$precision"; rc=1; }
    fi
    result "$name $precision: --show-backend states products=$precision" $rc
  done
done

echo "== storage reuse: shared-storage builds (bin/) = --no-buffer-reuse builds (sep/), bitwise"
# Same executable source, same seed, same data; the cuda runs above used the
# step's CUDA graph (launches side by side, ordered by the storage they touch).
for exe in sep/*; do
  [ -e "$exe" ] || continue
  name=$(basename "$exe")
  d="$TEST_TMPDIR/sep-$name"; mkdir -p "$d"
  for dt in f32 f64; do
    "$exe" --seed "$seed" --steps 30 --device cuda --dtype $dt --trace "$d/cuda$dt.trace" \
      --save-params "$d/cuda$dt.st" >"$d/out$dt.txt" 2>&1 || tail -5 "$d/out$dt.txt"
  done
  check "$name: shared storage = separate storage, cuda f32 bitwise" python3 compare.py \
    "$name shared vs separate storage (cuda f32)" "$TEST_TMPDIR/$name/cuda32.trace" \
    "$TEST_TMPDIR/$name/cuda32.st" "$d/cudaf32.trace" "$d/cudaf32.st" 0 0
  check "$name: shared storage = separate storage, cuda f64 bitwise" python3 compare.py \
    "$name shared vs separate storage (cuda f64)" "$TEST_TMPDIR/$name/cuda64.trace" \
    "$TEST_TMPDIR/$name/cuda64.st" "$d/cudaf64.trace" "$d/cudaf64.st" 0 0
  # And it holds less device memory at its peak.
  shared_peak=$(bin/$name --device cuda --steps 2 --mem-stats 2>&1 | sed -nE 's/.*peak_live_bytes=([0-9]+).*/\1/p' | head -1)
  separate_peak=$("$exe" --device cuda --steps 2 --mem-stats 2>&1 | sed -nE 's/.*peak_live_bytes=([0-9]+).*/\1/p' | head -1)
  echo "$name: peak live bytes ${shared_peak:-?} shared, ${separate_peak:-?} separate"
  [ -n "$shared_peak" ] && [ -n "$separate_peak" ] && [ "$shared_peak" -lt "$separate_peak" ]
  result "$name: shared storage lowers the peak (${shared_peak:-?} < ${separate_peak:-?} bytes)" $?
done

echo "== the tiny GPT (examples/tiny_gpt.vouch, AdamW) at fp32, tf32, bf16 against cpu f64"
# Losses only (compare.py --losses-only): AdamW's normalised update makes params
# no measure of accuracy (measured on an H200 over 30 steps, 3 seeds: fp32
# losses 3.8e-7 apart while params 2e-2). Declared loss tolerances, about 3x the
# largest measured (fp32 3.8e-7, tf32 4.5e-3, bf16 5.5e-3): fp32 atol 1e-5
# rtol 1e-4; tf32 and bf16 atol 1.5e-2 rtol 1e-2.
gpt_ref="$TEST_TMPDIR/tiny_gpt-cpu64"
gpt/tiny_gpt_fp32 --seed "$seed" --steps 30 --device cpu --dtype f64 --trace "$gpt_ref.trace" \
  --save-params "$gpt_ref.st" >"$gpt_ref.out" 2>&1 || tail -5 "$gpt_ref.out"
for precision in fp32 tf32 bf16; do
  case $precision in fp32) atol=1e-5 rtol=1e-4 ;; *) atol=1.5e-2 rtol=1e-2 ;; esac
  d="$TEST_TMPDIR/tiny_gpt-$precision"; mkdir -p "$d"
  gpt/tiny_gpt_$precision --seed "$seed" --steps 30 --device cuda --dtype f32 \
    --trace "$d/cuda32.trace" --save-params "$d/cuda32.st" >"$d/out.txt" 2>&1 || tail -5 "$d/out.txt"
  check "tiny_gpt $precision: cuda f32 vs cpu f64 (losses)" python3 compare.py \
    "tiny_gpt $precision cuda-f32 vs cpu-f64" "$d/cuda32.trace" "$d/cuda32.st" \
    "$gpt_ref.trace" "$gpt_ref.st" $atol $rtol --losses-only
done
# The bf16 tiny GPT's qkv linears store their qkv as bf16 themselves, beside
# their bias rounded to bf16 (cuBLASLt's D and bias; the rounding folded into
# the call by vouch-round-bf16-operands): the audit names that call, and no
# linear fell back to the f32 linear and a rounding launch (`y of step N`).
d="$TEST_TMPDIR/tiny_gpt-bf16"
gpt/tiny_gpt_bf16 --device cuda --steps 1 --audit-launches >"$d/audit.out" 2>&1
rc=$?
a="$d/audit.out"
grep -qE "^launch audit: [0-9]+ graph nodes, [0-9]+ made by named launches, 0 unreported, 0 not the kernel named$" \
  "$a" || rc=1
audit_has "$a" "<- step [0-9]+ cublasLtMatmul\(transa=T, transb=N, A=weight, B=input, epilogue=BIAS, .*bias bf16, D bf16\) \[cublaslt.linear\]" \
  "a qkv linear storing bf16 beside a bf16 bias" || rc=1
audit_lacks "$a" "FELL BACK" "a linear fell back (FELL BACK in the audit)" || rc=1
audit_lacks "$a" "\(y of step" "a rounding launch after a bf16-result linear" || rc=1
[ $rc -eq 0 ] || cat "$a"
cat "$a" >>"$log"
result "tiny_gpt bf16: its qkv linears store bf16 beside a bf16 bias (cuBLASLt, no fallback)" $rc
# Its layer_norm_grads store the bf16 twin of dx that the previous linears'
# products read (the rounding fused with them: the op table's bf16Twin), under
# both capsules' names; the GPU suite's tiny_gpt bf16 losses above are those
# runs' (the kernel lab checks the twin bitwise against dx rounded).
rc=0
audit_has "$a" "vouch_layer_norm_grad_[a-z_]*bf16_twin_f32 <- step [0-9]+ .*\[native_cuda.layer_norm_grad, native_cuda.round_bf16\]" \
  "a layer_norm_grad storing dx's bf16 twin" || rc=1
[ $rc -eq 0 ] || cat "$a"
result "tiny_gpt bf16: its layer_norm_grads store dx's bf16 twin" $rc

echo "== results recomputed in the backward pass (gelus, layer_norm outputs) change no bit"
# gpt/tiny_gpt_<p>_recompute (--recompute-min-elements 1 --recompute-layer-norm):
# the backward pass computes every gelu again and normalises each layer_norm's
# x again (the fused residual form's sum alone) instead of keeping the
# results; the kernel lab holds the fused and plain kernels' y bitwise equal,
# so the whole run must be bitwise the default build's.
for precision in fp32 bf16; do
  d="$TEST_TMPDIR/tiny_gpt-$precision"
  gpt/tiny_gpt_${precision}_recompute --seed "$seed" --steps 30 --device cuda --dtype f32 \
    --trace "$d/recompute.trace" --save-params "$d/recompute.st" >"$d/recompute.txt" 2>&1 ||
    tail -5 "$d/recompute.txt"
  check "tiny_gpt $precision: gelus and layer_norms recomputed in the backward = kept, cuda bitwise" \
    python3 compare.py "tiny_gpt $precision recompute vs default" "$d/recompute.trace" \
    "$d/recompute.st" "$d/cuda32.trace" "$d/cuda32.st" 0 0
done

echo "== an f64 run on cuda where the executable has none: refused with the reason"
# The tiny GPTs are built without --f64-kernels (vouch build's default), the
# tf32 / bf16 ones with products that round: each refuses --dtype f64 on cuda
# (exit 2, before any launch) and says why.
for precision in fp32 tf32 bf16; do
  case $precision in
    fp32) why="rebuild with --f64-kernels" ;;
    *) why="built with --precision $precision" ;;
  esac
  out="$TEST_TMPDIR/tiny_gpt-$precision-f64.out"
  gpt/tiny_gpt_$precision --device cuda --dtype f64 --steps 1 >"$out" 2>&1
  rc=$?
  cat "$out" >>"$log"
  [ $rc -eq 2 ] && grep -q -- "--dtype f64: .*$why" "$out"
  result "tiny_gpt $precision: --dtype f64 on cuda refused (exit $rc): $why" $?
done

echo "== padded classes (vouch-pad-classes): the prediction read through its padding"
# ops_classes_padded's logits are 5004 a row, its output their first 5001: the
# cuda executor downloads the rows without the padding (cudaMemcpy2DAsync). Its
# --predict file on cuda against cpu's (f64: 1e-12), and the padded cpu run's
# against the unpadded model's (bitwise: the cpu sums are the same).
d="$TEST_TMPDIR/ops_classes-predict"; mkdir -p "$d"
rc=0
for run in "padded cuda" "padded cpu" "plain cpu"; do
  set -- $run
  exe=bin/ops_classes; [ "$1" = padded ] && exe=bin/ops_classes_padded
  "$exe" --device "$2" --dtype f64 --steps 0 --seed "$seed" \
    --predict tests/gpu/data/tokens/ids.npy --predict-out "$d/$1-$2.npy" >"$d/$1-$2.out" 2>&1 ||
    { tail -3 "$d/$1-$2.out"; rc=1; }
done
[ $rc -eq 0 ] && python3 - "$d" <<'PY' || rc=1
import sys, numpy as np
d = sys.argv[1]
cuda, cpu, plain = (np.load(f"{d}/{n}.npy") for n in ("padded-cuda", "padded-cpu", "plain-cpu"))
print("shapes", cuda.shape, cpu.shape, plain.shape)
assert cuda.shape == cpu.shape == plain.shape and cuda.shape[-1] == 5001
err = float(np.max(np.abs(cuda - cpu) / np.maximum(1, np.abs(cpu))))
print(f"cuda vs cpu max rel err {err:.3g} (tol 1e-12)")
assert err <= 1e-12
assert np.array_equal(cpu, plain), "padded cpu prediction differs from the unpadded model's"
PY
result "ops_classes_padded: --predict without the padding, cuda = cpu = the unpadded model" $rc

echo "== the token stream on cuda (tests/gpu/ops_tokens.vouch): the file read in place"
# cuda == cpu for its random windows is checked above with every model; here, how
# the device reads the token file: its mapping registered (cudaHostRegister, read
# in place), or copied into mapped pinned memory where registering is refused.
bin/ops_tokens --device cuda --steps 3 --mem-stats >"$TEST_TMPDIR/tokens.txt" 2>&1
rc=$?
line=$(grep '^tokens: ' "$TEST_TMPDIR/tokens.txt")
echo "${line:-no tokens line}"
grep -q '^cuda graph: .* for a token stream$' "$TEST_TMPDIR/tokens.txt" || rc=1
[ -n "$line" ] || rc=1
cat "$TEST_TMPDIR/tokens.txt" >>"$log"
[ $rc -eq 0 ] || tail -5 "$TEST_TMPDIR/tokens.txt"
result "ops_tokens on cuda: --mem-stats names how the tokens are read" $rc

echo "== the digits classifiers on cuda: held-out accuracy (examples/digits_*.vouch)"
# Their full training runs in f32 on the GPU, evaluated on the 357 held-out rows
# (their eval clauses): the README states >= 95%, and >= 97% for the CNN
# (digits_cnn: 97.48% at seed 0 on cpu, f64 and f32). resnet_small (97.76% and
# 98.88% at seeds 0 and 1 on cpu f64) is held to 95%: its f32 training takes
# another path than f64 after a few steps (see its comparison above).
for entry in digits_mlp:95 digits_rnn:95 batchnorm_mlp:95 digits_cnn:97 resnet_small:95; do
  name=${entry%:*} floor=${entry#*:}
  d="$TEST_TMPDIR/$name-accuracy"; mkdir -p "$d"
  bin/$name --device cuda >"$d/out.txt" 2>&1
  rc=$?
  acc=$(sed -nE 's/^eval after training: .*accuracy=([0-9.]+)%.*/\1/p' "$d/out.txt")
  python3 -c "import sys; sys.exit(0 if float('${acc:-0}') >= $floor else 1)" || rc=1
  cat "$d/out.txt" >>"$log"
  [ $rc -eq 0 ] || tail -5 "$d/out.txt"
  echo "$name cuda f32 held-out accuracy: ${acc:-none}%"
  result "$name on cuda: held-out accuracy ${acc:-?}% >= $floor%" $rc
done

echo "== batch_norm's state on cuda (tests/gpu/ops_batchnorm.vouch)"
# The models loop above compared ops_batchnorm's cuda runs with the cpu f64 run:
# their checkpoints hold the running statistics after the params, so compare.py
# held those to the same tolerances (checked here to be in the files), and the
# traces' mean_loss(before / after) are evaluation forwards through them. Here:
# the running statistics a cuda run saved, loaded back (--steps 0), evaluate on
# cuda as on cpu; the launches are the batch-norm kernels (a cluster of 8 blocks
# per channel for the [12, 2, 4096] one), and the tape names the state.
d="$TEST_TMPDIR/ops_batchnorm"
rc=0
python3 -c "
import sys; sys.path.insert(0, '.'); import compare
names = compare.params(sys.argv[1]).keys()
want = ['g1.running_mean', 'g1.running_var', 'g3.running_var', 's4.running_mean',
        'batch_norm.0.running_var', 'gbig.running_mean']
missing = [n for n in want if n not in names]
print('ops_batchnorm checkpoint: running statistics', 'missing %s' % missing if missing else 'present')
sys.exit(1 if missing else 0)" "$d/cuda32.st" || rc=1
result "ops_batchnorm: the checkpoints compared above hold the running statistics" $rc
for dev in cpu cuda; do
  bin/ops_batchnorm --device $dev --dtype f64 --steps 0 --load-params "$d/cuda64.st" \
    --trace "$d/eval-$dev.trace" --save-params "$d/eval-$dev.st" >"$d/eval-$dev.out" 2>&1 ||
    tail -5 "$d/eval-$dev.out"
done
check "ops_batchnorm: a cuda checkpoint evaluates on cuda as on cpu (f64, --steps 0)" \
  python3 compare.py "ops_batchnorm eval cuda vs cpu" "$d/eval-cuda.trace" "$d/eval-cuda.st" \
  "$d/eval-cpu.trace" "$d/eval-cpu.st" 1e-12 1e-11
bin/ops_batchnorm --device cuda --steps 1 --show-backend --show-tape >"$d/show.txt" 2>&1
rc=$?
expect_lines "$d/show.txt" "batch_norm: native_cuda.batch_norm provider=native-cuda" \
            "batch_norm_grad: native_cuda.batch_norm_grad provider=native-cuda" \
            "vouch_batch_norm_w_cluster (batch_norm) [native_cuda.batch_norm]" \
            "vouch_batch_norm_grad_w_dw_cluster (batch_norm_grad) [native_cuda.batch_norm_grad]" \
            "state=[g1.running_mean f32[24] 96 B, g1.running_var f32[24] 96 B]" || rc=1
[ $rc -eq 0 ] || cat "$d/show.txt"
result "ops_batchnorm --show-backend / --show-tape: its capsules, the cluster kernels, the state" $rc

echo "== deterministic: the wide model built --deterministic (cuBLAS(Lt) products gated library-fixed)"
# Its 4096-wide products run in cuBLASLt (forward) and cuBLAS (VJPs); the last
# layer's weight gradient (m = 1, n = 4096, k = 4096) is the shape split-K is
# for. Two runs must agree bit for bit: a reduction whose order changed run to
# run (atomics, an in-place split-K, a re-chosen algorithm) would show here.
d="$TEST_TMPDIR/det"; mkdir -p "$d"
det/wide_mlp --device cuda --steps 2 --show-backend >"$d/show.txt" 2>&1
rc=$?
expect_lines "$d/show.txt" "built --deterministic)" "linear: cublaslt.linear provider=cublaslt" \
            "matmul: cublas.matmul provider=cublas" || rc=1
[ "$(grep -c 'reduce=library-fixed]' "$d/show.txt")" -ge 2 ] || { echo "missing: reduce=library-fixed"; rc=1; }
[ $rc -eq 0 ] || cat "$d/show.txt"
result "wide_mlp built --deterministic: cuBLAS(Lt) capsules reduce=library-fixed" $rc
for run in 1 2; do
  det/wide_mlp --device cuda --dtype f32 --deterministic --seed "$seed" --steps 20 \
    --trace "$d/run$run.trace" --save-params "$d/run$run.st" >"$d/run$run.out" 2>&1 ||
    { tail -5 "$d/run$run.out"; }
done
check "wide_mlp --deterministic: two runs bitwise equal" python3 compare.py \
  "wide_mlp --deterministic run 1 vs run 2" \
  "$d/run1.trace" "$d/run1.st" "$d/run2.trace" "$d/run2.st" 0 0

echo "== deterministic: pooling backward (tests/gpu/ops_pool.vouch built --deterministic)"
# The gate accepts the pooling gradients under --deterministic (each input
# element gathers its windows in ascending order: reduce=left-fold, no
# atomics); two runs agree bit for bit, and with the default build's (the
# same kernels: determinism changes no pooling launch).
d="$TEST_TMPDIR/det-pool"; mkdir -p "$d"
det/ops_pool --device cuda --steps 2 --show-backend >"$d/show.txt" 2>&1
rc=$?
expect_lines "$d/show.txt" "built --deterministic)" \
            "max_pool_grad: native_cuda.max_pool_grad provider=native-cuda" \
            "avg_pool_grad: native_cuda.avg_pool_grad provider=native-cuda" \
            "smooth_max_pool_grad: native_cuda.smooth_max_pool_grad provider=native-cuda" || rc=1
[ "$(grep -E '^(max|avg|smooth_max)_pool_grad: ' "$d/show.txt" | grep -c 'reduce=left-fold]')" -eq 3 ] ||
  { echo "missing: reduce=left-fold on the three pooling gradients"; rc=1; }
[ $rc -eq 0 ] || cat "$d/show.txt"
result "ops_pool built --deterministic: pooling gradients reduce=left-fold" $rc
for run in 1 2; do
  det/ops_pool --device cuda --dtype f32 --deterministic --seed "$seed" --steps 30 \
    --trace "$d/run$run.trace" --save-params "$d/run$run.st" >"$d/run$run.out" 2>&1 ||
    { tail -5 "$d/run$run.out"; }
done
check "ops_pool --deterministic: two runs bitwise equal" python3 compare.py \
  "ops_pool --deterministic run 1 vs run 2" \
  "$d/run1.trace" "$d/run1.st" "$d/run2.trace" "$d/run2.st" 0 0
check "ops_pool --deterministic = the default build, bitwise" python3 compare.py \
  "ops_pool --deterministic vs default build" \
  "$d/run1.trace" "$d/run1.st" "$TEST_TMPDIR/ops_pool/cuda32.trace" "$TEST_TMPDIR/ops_pool/cuda32.st" 0 0

echo "== report of a cuda run"
bin/quickstart_mlp --device cuda --steps 2 --show-backend --mem-stats >"$TEST_TMPDIR/show.txt" 2>&1
rc=$?
# The quickstart's products are small: vouch's own product kernels.
expect_lines "$TEST_TMPDIR/show.txt" "backend: cuda, profile checked_cuda" "linear: native_cuda.linear provider=native-cuda" \
            "relu: native_cuda.relu provider=native-cuda" "mse_loss: native_cuda.mse_loss" \
            "  ran: vouch_small_linear" "  ran: vouch_pointwise_relu" \
            "= fused sub scale fill mul [native_cuda.fill, native_cuda.mul, native_cuda.scale, native_cuda.sub]" \
            "vouch_small_product (matmul) [native_cuda.matmul]" \
            "  batch selection vouch_select_batch_<t> [native_cuda.select_batch]" \
            "  optimizer adam vouch_optimizer_<t> [native_cuda.adam_step]: one launch for every parameter" \
            "adam_step: native_cuda.adam_step provider=native-cuda" \
            "select_batch: native_cuda.select_batch provider=native-cuda" \
            "one training step (captured in a CUDA graph, replayed for every batch)" || rc=1
grep -qE "live|cache" "$TEST_TMPDIR/show.txt" || { echo "missing: allocator stats"; rc=1; }
[ $rc -eq 0 ] || cat "$TEST_TMPDIR/show.txt"
result "--show-backend names capsules, kernels; --mem-stats" $rc
bin/ops_library --device cuda --steps 2 --show-backend >"$TEST_TMPDIR/show_library.txt" 2>&1
rc=$?
# Its middle layer is too large for the rule: cuBLASLt forward, cuBLAS VJP.
expect_lines "$TEST_TMPDIR/show_library.txt" "linear: cublaslt.linear provider=cublaslt" "linear: native_cuda.linear" \
            "  ran: cublasLtMatmul(transa=T, transb=N, A=weight, B=input, epilogue=BIAS)" \
            "cublasGemmEx(transa=N, transb=T, A=rhs, B=lhs) (matmul) [cublas.matmul]" \
            "vouch_small_product (matmul) [native_cuda.matmul]" || rc=1
[ $rc -eq 0 ] || cat "$TEST_TMPDIR/show_library.txt"
result "--show-backend names cuBLAS calls with their flags (ops_library)" $rc
# --bias-grad-epilogue: that layer's dW and db are one cuBLASLt call (BGRADB).
bin/ops_library_bgradb --device cuda --steps 2 --show-backend >"$TEST_TMPDIR/show_bgradb.txt" 2>&1
rc=$?
expect_lines "$TEST_TMPDIR/show_bgradb.txt" "linear_weight_grad: cublaslt.linear_weight_grad provider=cublaslt" \
            "cublasGemmEx(transa=N, transb=N, A=rhs, B=lhs) (matmul) [cublas.matmul]" \
            "cublasLtMatmul(transa=N, transb=T, A=input, B=grad, epilogue=BGRADB) (linear_weight_grad) [cublaslt.linear_weight_grad]" || rc=1
[ $rc -eq 0 ] || cat "$TEST_TMPDIR/show_bgradb.txt"
result "--show-backend names the BGRADB call (ops_library --bias-grad-epilogue)" $rc

echo "== one CUDA graph for every batch (and one of 8 steps); losses read only at log points"
bin/quickstart_mlp --device cuda --steps 100 --mem-stats >"$TEST_TMPDIR/graph.txt" 2>&1
rc=$?
# Flushes at 0, 25, 50, 75, 99: enqueued as 1, 25, 25, 25, 24 steps = 12 x 8 + 4 x 1.
grep -qF "cuda graph: 2 captured, 12 launches of 8 steps and 4 of 1 for 25 batches" \
  "$TEST_TMPDIR/graph.txt" || rc=1
[ $rc -eq 0 ] || cat "$TEST_TMPDIR/graph.txt"
result "25 batches, 100 steps: two graphs captured (1 step, 8 steps), 16 launches" $rc
bin/quickstart_mlp --device cuda --steps 60 --log-every 1 --trace "$TEST_TMPDIR/every.trace" >/dev/null 2>&1 &&
bin/quickstart_mlp --device cuda --steps 60 --log-every 50 --trace "$TEST_TMPDIR/some.trace" >/dev/null 2>&1 &&
cmp -s "$TEST_TMPDIR/every.trace" "$TEST_TMPDIR/some.trace"
result "per-step losses identical whether read every step or at log points" $?

echo "== compute-sanitizer (memcheck)"
if command -v compute-sanitizer >/dev/null; then
  for exe in bin/quickstart_mlp bin/ops_shape bin/ops_matmul bin/ops_library bin/ops_attention; do
    check "memcheck $(basename $exe)" compute-sanitizer --tool memcheck --error-exitcode 1 \
      "$exe" --device cuda --steps 3
  done
  check "memcheck runtime blas_test" compute-sanitizer --tool memcheck --report-api-errors no \
    --error-exitcode 1 rt/blas_test
else
  result "compute-sanitizer available" 1
fi

echo "(seed $seed)"
echo "gpu-suite: $passed passed, $failed failed"
[ $failed -eq 0 ]
