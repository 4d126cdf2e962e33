#!/usr/bin/env bash
# Installs what vouch needs on Debian 12, idempotently: nothing is fetched or
# reinstalled when everything is already there. The CUDA 13 toolkit itself
# is expected in /usr/local/cuda (it is not a Debian package).
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java            # Bazel 4.2.3 + rules_java
  libmlir-19-dev mlir-19-tools                # MLIR 19: libMLIR.so, mlir-tblgen-19
  llvm-19-dev llvm-19-tools                   # LLVM 19, FileCheck-19, lit
  googletest libgtest-dev                     # GoogleTest
  python3-torch python3-numpy                 # independent references for golden tests
  python3-sklearn                             # the 8x8 digits (tools/data/digits.py)
  fortunes                                    # English text (tools/data/fortunes.py)
  xz-utils                                    # the GPU suite's archive (tools/gpu_suite.sh)
  clang                                       # vouch build --cxx clang++ (lit build-clang.test);
                                              # clang 14 builds the fuzz targets (tools/fuzz.sh)
  libclang-rt-14-dev                          # libFuzzer and clang's sanitizer runtimes (only
                                              # recommended by clang, which --no-install-recommends skips)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -f /usr/local/cuda/lib64/libnvrtc.so ]; then
  echo "setup: error: the CUDA 13 toolkit is expected in /usr/local/cuda (nvcc, NVRTC, cuBLAS); it is not there" >&2
  exit 1
fi

# The digits of the examples (examples/digits_mlp.vouch reads them), from the
# python3-sklearn package: no network needed.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -f "$root/examples/data/digits/test_y.npy" ]; then
  /usr/bin/python3 "$root/tools/data/digits.py" "$root/examples/data/digits"
fi

# The character tokens of examples/char_gpt.vouch, from the fortunes package.
if [ ! -f "$root/examples/data/fortunes/vocab.json" ]; then
  /usr/bin/python3 "$root/tools/data/fortunes.py" "$root/examples/data/fortunes" >/dev/null
fi

# TorchLean's 4x4 band images of examples/quickstart_cnn.vouch.
if [ ! -f "$root/examples/data/bands/labels.npy" ]; then
  /usr/bin/python3 "$root/tools/data/bands.py" "$root/examples/data/bands"
fi
