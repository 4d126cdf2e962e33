#!/usr/bin/env bash
# Builds vouch, checks the quickstart model, compiles it to an executable and
# trains it (TorchLean's quickstart_mlp: 200 steps, seed 0).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:vouch
model=examples/quickstart_mlp.vouch
out=bazel-bin/examples/quickstart_mlp.exe
bazel-bin/tools/vouch check "$model"
bazel-bin/tools/vouch build "$model" -o "$out"
"$out" --device auto
