#!/usr/bin/env bash
# Builds vouch, checks the quickstart model, compiles it (cuda target: the
# executable carries CPU reference kernels and NVRTC-compiled CUDA kernels)
# and trains it: on CUDA when a GPU is visible, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:vouch
model=examples/quickstart_mlp.vouch
out=bazel-bin/examples/quickstart_mlp.exe
bazel-bin/tools/vouch check "$model"
bazel-bin/tools/vouch build "$model" --target cuda -o "$out"
"$out" --device auto --show-backend | grep -E '^backend:'
"$out" --device auto
