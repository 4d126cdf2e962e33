#!/usr/bin/env bash
# Builds vouch, checks the quickstart model, compiles it (cuda target: the
# executable carries CPU reference kernels and NVRTC-compiled CUDA kernels)
# and trains it: on CUDA when a GPU is visible, else on the CPU. Works as the
# first command on a fresh clone; the executable is out/quickstart_mlp.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:vouch
model=examples/quickstart_mlp.vouch
exe=out/quickstart_mlp
bazel-bin/tools/vouch check "$model"
bazel-bin/tools/vouch build "$model" --target cuda -o "$exe"
"$exe" --device auto --show-backend --steps 1 | grep -E '^backend:'
"$exe" --device auto
