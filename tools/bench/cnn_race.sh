#!/usr/bin/env bash
# Packages the CNN race into .cnn-race/ (git-ignored; no Bazel needed to run
# it): tools/bench/resnet18_cifar.vouch built for cuda twice (--precision fp32
# and tf32), its synthetic CIFAR-shaped data (tools/data/cifar_synthetic.py)
# and tools/bench/cnn.py. On the GPU host:
#   .cnn-race/run.sh [--steps N]   # vouch vs torch eager (cuDNN) vs torch.compile
# Extra arguments of this script go to `vouch build`.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh
bazel build //tools:vouch
out=.cnn-race
rm -rf "$out"; mkdir -p "$out/data/cifar"
vouch=bazel-bin/tools/vouch
"$vouch" build tools/bench/resnet18_cifar.vouch --target cuda -o "$out/resnet18" "$@"
"$vouch" build tools/bench/resnet18_cifar.vouch --target cuda --precision tf32 \
  -o "$out/resnet18_tf32" "$@"
/usr/bin/python3 tools/data/cifar_synthetic.py "$out/data/cifar" 512
cp tools/bench/cnn.py "$out/"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The CNN race (tools/bench/cnn.py); writes race.json beside it.
cd "$(dirname "$0")"
export NCCL_NVLS_ENABLE=0
python3 cnn.py --exe ./resnet18 --exe-tf32 ./resnet18_tf32 \
  --data data/cifar/x.npy,data/cifar/labels.npy --out race.json "$@"
# Where vouch's step goes: step 2, by capsule (--profile).
echo "== resnet18_tf32 --profile"
./resnet18_tf32 --device cuda --steps 3 --log-every 3 --no-eval --profile \
  --data data/cifar/x.npy,data/cifar/labels.npy | sed -n '/^profile of/,$p'
RUN
chmod +x "$out/run.sh"
du -sh "$out"
