#!/usr/bin/env bash
# Packages the CNN race into .cnn-race/ (git-ignored; no Bazel needed to run
# it): tools/bench/resnet18_cifar.vouch built for cuda twice (--precision fp32
# and tf32), its synthetic CIFAR-shaped data (tools/data/cifar_synthetic.py),
# tools/bench/cnn.py, and the per-conv-shape lab (tools/bench/conv_shapes.py:
# one executable per convolution of the network and precision). The
# executables travel as bin.tar.xz (about 25 MB instead of 100), unpacked by
# run.sh. On the GPU host:
#   .cnn-race/run.sh [--steps N]   # vouch vs torch eager (cuDNN) vs torch.compile,
#                                  # then each conv shape's fwd/dx/dW vs cuDNN's
# Extra arguments of this script go to `vouch build` (of the ResNet-18).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh
bazel build //tools:vouch
out=.cnn-race
rm -rf "$out"; mkdir -p "$out/data/cifar" "$out/bin"
vouch=bazel-bin/tools/vouch
"$vouch" build tools/bench/resnet18_cifar.vouch --target cuda -o "$out/bin/resnet18" "$@"
"$vouch" build tools/bench/resnet18_cifar.vouch --target cuda --precision tf32 \
  -o "$out/bin/resnet18_tf32" "$@"
/usr/bin/python3 tools/bench/conv_shapes.py package "$out/bin/conv_shapes" --vouch "$vouch"
/usr/bin/python3 tools/data/cifar_synthetic.py "$out/data/cifar" 512
cp tools/bench/cnn.py tools/bench/conv_shapes.py tools/bench/race_common.py "$out/"
tar -C "$out" -cf - bin | xz -T0 -6 >"$out/bin.tar.xz"
rm -rf "$out/bin"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The CNN race (tools/bench/cnn.py); writes race.json beside it.
cd "$(dirname "$0")"
export NCCL_NVLS_ENABLE=0
[ -d bin ] || python3 -c "import tarfile; tarfile.open('bin.tar.xz').extractall()" ||
  { echo "cannot unpack bin.tar.xz"; rm -rf bin; exit 1; }
python3 cnn.py --exe bin/resnet18 --exe-tf32 bin/resnet18_tf32 \
  --data data/cifar/x.npy,data/cifar/labels.npy --out race.json "$@"
# Where vouch's step goes: step 2, by capsule (--profile).
echo "== resnet18_tf32 --profile"
bin/resnet18_tf32 --device cuda --steps 3 --log-every 3 --no-eval --profile \
  --data data/cifar/x.npy,data/cifar/labels.npy | sed -n '/^profile of/,$p'
echo "== each conv shape: vouch's fwd, dx, dW against cuDNN's (conv_shapes.py)"
python3 conv_shapes.py run bin/conv_shapes --json conv_shapes.json --markdown conv_shapes.md
RUN
chmod +x "$out/run.sh"
du -sh "$out"
