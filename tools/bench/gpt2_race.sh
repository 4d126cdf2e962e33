#!/usr/bin/env bash
# Packages the GPT-2 race into .gpt2-race/ (git-ignored; no Bazel needed to
# run it): examples/gpt2_124m.vouch built for cuda three times (fp32, --tf32
# with --attention composed, and --tf32 with the default fused attention),
# its token windows (tools/data/gpt2_tokens.py) and tools/bench/gpt2.py.
# On the GPU host:
#   .gpt2-race/run.sh [--steps N]   # vouch vs torch eager vs torch.compile
# Extra arguments of this script go to `vouch build` (e.g. --config L=6,...).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh
bazel build //tools:vouch
out=.gpt2-race
rm -rf "$out"; mkdir -p "$out/data"
vouch=bazel-bin/tools/vouch
"$vouch" build examples/gpt2_124m.vouch --target cuda -o "$out/gpt2" "$@"
"$vouch" build examples/gpt2_124m.vouch --target cuda --tf32 --attention composed \
  -o "$out/gpt2_tf32" "$@"
"$vouch" build examples/gpt2_124m.vouch --target cuda --tf32 --attention fused \
  -o "$out/gpt2_tf32_fused" "$@"
/usr/bin/python3 tools/data/gpt2_tokens.py "$out/data"
cp tools/bench/gpt2.py "$out/"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPT-2 race (tools/bench/gpt2.py); writes race.json beside it.
cd "$(dirname "$0")"
export NCCL_NVLS_ENABLE=0
python3 gpt2.py --exe ./gpt2 --exe-tf32 ./gpt2_tf32 --exe-tf32-fused ./gpt2_tf32_fused \
  --data data/ids.npy,data/labels.npy \
  --out race.json "$@"
# Where vouch's step goes: step 2 of each precision, by capsule (--profile).
for exe in gpt2 gpt2_tf32; do
  echo "== $exe --profile"
  ./$exe --device cuda --steps 3 --log-every 3 --no-eval --profile \
    --data data/ids.npy,data/labels.npy | sed -n '/^profile of/,$p'
done
RUN
chmod +x "$out/run.sh"
du -sh "$out"
