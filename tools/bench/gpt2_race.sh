#!/usr/bin/env bash
# Packages the GPT-2 race into .gpt2-race/ (git-ignored; no Bazel needed to
# run it): examples/gpt2_124m.vouch built for cuda three times (--precision
# fp32, tf32 and bf16; attention fused, the cuda default),
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
"$vouch" build examples/gpt2_124m.vouch --target cuda --precision tf32 \
  -o "$out/gpt2_tf32" "$@"
"$vouch" build examples/gpt2_124m.vouch --target cuda --precision bf16 \
  -o "$out/gpt2_bf16" "$@"
/usr/bin/python3 tools/data/gpt2_tokens.py "$out/data"
cp tools/bench/gpt2.py tools/bench/race_common.py "$out/"
# The executables travel compressed (mostly PTX and cubins: 35 MB -> ~5 MB, so
# the race fits beside the GPU suite in one carry); run.sh unpacks them once
# (xz where installed, else python3).
(cd "$out" && tar -cf - gpt2 gpt2_tf32 gpt2_bf16 | xz -T0 -6 >binaries.tar.xz &&
  rm gpt2 gpt2_tf32 gpt2_bf16)
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPT-2 race (tools/bench/gpt2.py); writes race.json beside it.
cd "$(dirname "$0")"
if [ ! -x gpt2_bf16 ]; then
  if command -v xz >/dev/null; then
    xz -dc binaries.tar.xz | tar -xf -
  else
    python3 -c "import tarfile; tarfile.open('binaries.tar.xz').extractall()"
  fi || { echo "cannot unpack binaries.tar.xz"; exit 1; }
fi
export NCCL_NVLS_ENABLE=0
python3 gpt2.py --exe ./gpt2 --exe-tf32 ./gpt2_tf32 --exe-bf16 ./gpt2_bf16 \
  --data data/ids.npy,data/labels.npy \
  --out race.json "$@"
# Where vouch's step goes: step 2 of each precision, by capsule (--profile).
for exe in gpt2_tf32 gpt2_bf16; do
  echo "== $exe --profile"
  ./$exe --device cuda --steps 3 --log-every 3 --no-eval --profile \
    --data data/ids.npy,data/labels.npy | sed -n '/^profile of/,$p'
done
RUN
chmod +x "$out/run.sh"
du -sh "$out"
