#!/usr/bin/env bash
# Packages the GPU suite into .gpu-suite/ (git-ignored, no Bazel needed to
# run it): cuda-target executables of the examples, the per-op test models
# and the benchmark model (also built --deterministic: packaging fails if the
# gate refuses its cuBLAS products); the CUDA runtime's test binaries; the kernel lab
# (runtime/cuda/kernels/kernel_lab.cu, built by nvcc); the runner
# (tests/gpu/run.sh) and the benchmark (tools/bench/bench.py). On a GPU host:
#   .gpu-suite/run.sh            # ends with "gpu-suite: N passed, N failed"
#   .gpu-suite/bench.sh          # the performance race (ends with kernels.sh)
#   .gpu-suite/kernels.sh        # the kernel speed lab alone: vouch vs torch per kernel
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:vouch //runtime/cuda/...
out=.gpu-suite
rm -rf "$out"; mkdir -p "$out/bin" "$out/rt" "$out/det"
# The classifier models read the digits (tools/data/digits.py) from
# tests/gpu/data, relative to the suite's folder where they run.
/usr/bin/python3 tools/data/digits.py "$out/tests/gpu/data/digits"
# ops_embedding reads synthetic token ids (tools/data/tokens.py).
/usr/bin/python3 tools/data/tokens.py "$out/tests/gpu/data/tokens"
# ops_mask reads features with numpy-bool masks (tools/data/masks.py).
/usr/bin/python3 tools/data/masks.py "$out/tests/gpu/data/masks"
# ops_attention reads padded token sequences and their attention mask
# (tools/data/sequences.py).
/usr/bin/python3 tools/data/sequences.py "$out/tests/gpu/data/sequences"
# ops_tokens streams llm.c token shards (tools/data/token_stream.py).
/usr/bin/python3 tools/data/token_stream.py "$out/tests/gpu/data/tokens/stream.bin" 50000 64
/usr/bin/python3 tools/data/token_stream.py "$out/tests/gpu/data/tokens/stream_val.bin" 2000 64 7
/usr/bin/python3 tools/data/digits.py "$out/examples/data/digits"
for model in examples/quickstart_mlp.vouch examples/residual_mlp.vouch examples/digits_mlp.vouch \
             examples/digits_rnn.vouch examples/batchnorm_mlp.vouch \
             examples/digits_cnn.vouch examples/resnet_small.vouch \
             tests/gpu/*.vouch \
             tools/bench/wide_mlp.vouch; do
  name=$(basename "$model" .vouch)
  # bin/'s executables run f64 on cuda too (run.sh's cuda64 runs): --f64-kernels.
  bazel-bin/tools/vouch build "$model" --target cuda --f64-kernels -o "$out/bin/$name"
  # Attention runs fused on cuda by default; the composed form is checked too.
  if grep -q scaled_dot_product_attention "$model"; then
    bazel-bin/tools/vouch build "$model" --target cuda --f64-kernels --attention composed \
      -o "$out/bin/${name}_composed"
  fi
done
# Rounded products (the profiles checked_cuda+tf32 and +bf16): the attention
# model in both forms, the cuBLAS model (ops_library: its products in
# cuBLAS / cuBLASLt), its odd-width twin (ops_padded: its products padded),
# the convolutions (ops_conv: im2col, col2im and its products rounded) and
# the LM head (ops_classes: its classes padded by vouch-pad-classes; ops_head:
# without a bias, its dlogits stored as bf16 by cross_entropy_grad under bf16),
# compared with the cpu f64 reference under each precision's declared
# tolerance.
for precision in tf32 bf16; do
  mkdir -p "$out/$precision"
  for form in composed fused; do
    bazel-bin/tools/vouch build tests/gpu/ops_attention.vouch --target cuda \
      --precision "$precision" --attention "$form" -o "$out/$precision/ops_attention_$form"
  done
  for model in ops_library ops_padded ops_conv ops_classes ops_head; do
    bazel-bin/tools/vouch build tests/gpu/$model.vouch --target cuda \
      --precision "$precision" -o "$out/$precision/$model"
  done
  bazel-bin/tools/vouch build tests/gpu/ops_library.vouch --target cuda --bias-grad-epilogue \
    --precision "$precision" -o "$out/$precision/ops_library_bgradb"
done
# --bias-grad-epilogue: the large linears' weight and bias gradients as one
# cuBLASLt call (BGRADB), against the cpu f64 run of the same executable (whose
# cpu plan has the separate product and sums).
for model in tests/gpu/ops_library.vouch examples/digits_mlp.vouch; do
  bazel-bin/tools/vouch build "$model" --target cuda --f64-kernels --bias-grad-epilogue \
    -o "$out/bin/$(basename "$model" .vouch)_bgradb"
done
# The LM head's classes padded (vouch-pad-classes, as tf32 and bf16 builds do)
# under fp32 products: the padded cross_entropy kernels held to f32 tolerances.
bazel-bin/tools/vouch build tests/gpu/ops_classes.vouch --target cuda --f64-kernels --pad-classes 4 \
  -o "$out/bin/ops_classes_padded"
# The tiny GPT (examples/tiny_gpt.vouch, AdamW) at each precision against its
# cpu f64 run; it reads counting sequences from examples/data/sequences. Built
# without --f64-kernels (vouch build's default): run.sh checks that each
# refuses an f64 run on cuda with its reason.
/usr/bin/python3 tools/data/sequences.py "$out/examples/data/sequences"
mkdir -p "$out/gpt"
for precision in fp32 tf32 bf16; do
  bazel-bin/tools/vouch build examples/tiny_gpt.vouch --target cuda --precision "$precision" \
    -o "$out/gpt/tiny_gpt_$precision"
done
# Every gelu and layer_norm output recomputed in the backward pass (run.sh:
# bitwise the default build's run).
for precision in fp32 bf16; do
  bazel-bin/tools/vouch build examples/tiny_gpt.vouch --target cuda --precision "$precision" \
    --recompute-min-elements 1 --recompute-layer-norm -o "$out/gpt/tiny_gpt_${precision}_recompute"
done
bazel-bin/tools/vouch build tools/bench/wide_mlp.vouch --target cuda --deterministic \
  -o "$out/det/wide_mlp"
# Pooling backward under --deterministic (the seed's deterministic-mode case):
# its gradients gather in a fixed order, with no atomics to replace.
bazel-bin/tools/vouch build tests/gpu/ops_pool.vouch --target cuda --deterministic \
  -o "$out/det/ops_pool"
# Storage reuse changes no result (codegen/StoragePlan.h): the attention
# model (embedding, layer_norm, slices, permutes, fused attention, a tied head,
# cross_entropy, whose dlogits the shared build writes over the logits in
# place) again with every value in storage of its own, compared bitwise
# on the GPU, where a captured step's launches run side by side and only their
# order by storage keeps a slot's next occupant from overwriting a value still
# read. (One model: the folder must stay under the device tool's 64 MiB.)
mkdir -p "$out/sep"
for model in tests/gpu/ops_attention.vouch; do
  bazel-bin/tools/vouch build "$model" --target cuda --f64-kernels --no-buffer-reuse \
    -o "$out/sep/$(basename "$model" .vouch)"
done
for t in bazel-bin/runtime/cuda/*_test bazel-bin/runtime/cuda/allocator_stress \
         bazel-bin/runtime/cuda/cuda_info; do
  [ -f "$t" ] && [ ! -L "$t" ] || continue
  case "$t" in *.sh) continue ;; esac
  head -c 2 "$t" | grep -q '#!' && continue   # sh_test wrappers: copied below
  cp "$t" "$out/rt/"
done
cp runtime/cuda/allocator_stress_test.sh "$out/rt/"
cp bazel-bin/runtime/cuda/kernels/kernel_lab "$out/rt/"
# What a CUDA graph node costs on the GPU host (docs/performance.md).
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 tools/bench/graph_overhead.cu -o "$out/rt/graph_overhead"
# What cuBLAS's f32 compute modes cost and round to at GPT-2's shapes.
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 tools/bench/gemm_modes.cu -lcublas -o "$out/rt/gemm_modes"
# What an odd row pitch costs GPT-2's LM head, and the copies that pad it.
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 tools/bench/lm_head_pitch.cu -lcublas -o "$out/rt/lm_head_pitch"
# Whether cuBLASLt's bf16 output keeps the bits of an f32 linear then round_bf16.
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -I . tools/bench/linear_bf16_out.cu -lcublasLt -lcublas \
  -o "$out/rt/linear_bf16_out"
cp tests/gpu/run.sh tests/gpu/compare.py tools/bench/bench.py "$out/"
# The kernel speed lab (tools/bench/kernels): vouch's kernels against torch's ops.
# sm_90 code only, its fatbin compressed (the lab and it add ~1 MB together).
/usr/local/cuda/bin/nvcc -std=c++17 -O2 -gencode arch=compute_90,code=sm_90 \
  -Xfatbin=-compress-all -I runtime/cuda/kernels \
  tools/bench/kernels/kernels.cu -o "$out/rt/bench_kernels"
cp tools/bench/kernels/kernels.py "$out/"
cat > "$out/kernels.sh" <<'KERNELS'
#!/usr/bin/env bash
# The kernel speed lab: one table, vouch vs torch (tools/bench/kernels/README.md).
cd "$(dirname "$0")"
./unpack.sh || exit 1
python3 kernels.py --bin rt/bench_kernels --markdown kernels.md "$@"
KERNELS
chmod +x "$out/kernels.sh"
cat > "$out/bench.sh" <<'BENCH'
#!/usr/bin/env bash
cd "$(dirname "$0")"
./unpack.sh || exit 1
python3 bench.py quickstart_mlp bin/quickstart_mlp 4000
python3 bench.py wide_mlp bin/wide_mlp 60
rt/kernel_lab --bench | grep -E '^BENCH|checks'
rt/graph_overhead
rt/gemm_modes
rt/lm_head_pitch
rt/linear_bf16_out
./kernels.sh
BENCH
chmod +x "$out/bench.sh"
# Symbols are not needed on the GPU machine; the folder must stay under the
# device tool's 64 MiB.
for f in "$out"/bin/* "$out"/det/* "$out"/rt/* "$out"/tf32/* "$out"/bf16/* "$out"/gpt/* "$out"/sep/*; do
  head -c 4 "$f" | grep -qa ELF && strip "$f"
done
# Compressed (the executables embed their kernels' PTX and cubins, which xz
# shrinks about 7x, gzip only 2x: 29 MB against 66 MB for 252 MB of files):
# the runners unpack binaries.tar.xz on first use (unpack.sh: xz, else
# python3's lzma).
tar -C "$out" -cf - bin det rt tf32 bf16 gpt sep | xz -T0 -6 >"$out/binaries.tar.xz"
cat > "$out/unpack.sh" <<'UNPACK'
#!/usr/bin/env bash
# Unpacks binaries.tar.xz beside it, once (xz where installed, else python3).
cd "$(dirname "$0")"
[ -d bin ] && exit 0
if command -v xz >/dev/null; then
  xz -dc binaries.tar.xz | tar -xf -
else
  python3 -c "import tarfile; tarfile.open('binaries.tar.xz').extractall()"
fi || { echo "cannot unpack binaries.tar.xz"; rm -rf bin; exit 1; }
UNPACK
chmod +x "$out/unpack.sh"
rm -rf "$out/bin" "$out/det" "$out/rt" "$out/tf32" "$out/bf16" "$out/gpt" "$out/sep"
du -sh "$out"
