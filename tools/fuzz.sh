#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with libFuzzer (bazel --config=fuzz:
# clang 14, ASan, UBSan) and runs each for a bounded time or number of
# executions, one target at a time, one process each (the builder's cores are
# shared). A crash, a sanitizer report, a broken property, a timeout or an
# out-of-memory fails the target and leaves its reproducer in
# .fuzz/<target>/ (printed, with the command that replays it).
#
# usage: tools/fuzz.sh [--time SECONDS] [--runs N] [TARGET...]
#   --time SECONDS  fuzz each target at most this long (default 60: CI's run)
#   --runs N        fuzz each target for N executions (the long campaign); with
#                   --time too, whichever comes first
#   TARGET          frontend npy csv safetensors train_flags (default: all)
#
# The corpus grows in .fuzz/<target>/corpus (gitignored, kept between runs);
# the committed seeds tests/fuzz/<target>/ (and for the frontend examples/ and
# frontend/testdata/) are read too, never written. Ends with one line per
# target, "fuzz <target>: ok|FAILED, N executions in S s, cov C, ft F, corpus
# K", and "fuzz summary: N passed, N failed"; exit status non-zero on any
# failure.
set -uo pipefail
cd "$(dirname "$0")/.."

time_limit=() runs_limit=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_limit=(-max_total_time="$2"); shift 2 ;;
    --runs) runs_limit=(-runs="$2"); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
# Only --runs: no time bound; neither: 60 s.
if [ ${#time_limit[@]} -eq 0 ] && [ ${#runs_limit[@]} -eq 0 ]; then time_limit=(-max_total_time=60); fi
mode=("${time_limit[@]}" "${runs_limit[@]}")
[ ${#targets[@]} -gt 0 ] || targets=(frontend npy csv safetensors train_flags)

disk_cache=${VOUCH_BAZEL_DISK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vouch/bazel-disk}
mkdir -p "$disk_cache"
echo "== bazel build --config=fuzz //tests/fuzz:fuzzers (clang 14, libFuzzer, ASan, UBSan)"
if ! bazel build --config=fuzz --disk_cache="$disk_cache" //tests/fuzz:fuzzers 2>&1 | tail -3; then
  echo "fuzz summary: 0 passed, ${#targets[@]} failed (the build failed)"
  exit 1
fi
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz

# ASan as in .bazelrc's --config=asan (allow_user_poisoning=0: LLVM's allocator
# headers poison slabs that the uninstrumented libMLIR.so also allocates from);
# leaks are checked by libFuzzer after inputs whose mallocs and frees differ.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Stacks with file:line (LLVM 19's symbolizer comes with llvm-19, which setup.sh installs).
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-19/bin/llvm-symbolizer}

passed=0 failed=0
summary=()
for t in "${targets[@]}"; do
  if [ ! -x "$bin/${t}_fuzzer" ]; then
    echo "fuzz.sh: no target '$t' (known: frontend npy csv safetensors train_flags)" >&2
    failed=$((failed + 1)); summary+=("fuzz $t: FAILED, no such target"); continue
  fi
  work=.fuzz/$t
  mkdir -p "$work/corpus"
  seeds=(tests/fuzz/"$t")
  [ "$t" = frontend ] && seeds+=(examples frontend/testdata)
  opts=("${mode[@]}" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1
        -artifact_prefix="$work/")
  [ -f "tests/fuzz/$t.dict" ] && opts+=(-dict="tests/fuzz/$t.dict")
  # Texts as long as the largest example; binary formats need less.
  case "$t" in frontend) opts+=(-max_len=8192) ;; *) opts+=(-max_len=4096) ;; esac
  echo "== fuzz $t: ${opts[*]} $work/corpus ${seeds[*]}"
  log=$work/last.log
  start=$(date +%s)
  "$bin/${t}_fuzzer" "${opts[@]}" "$work/corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  seconds=$(( $(date +%s) - start ))
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  last=$(grep -aE '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$last")
  line="${execs:-?} executions in ${seconds} s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); summary+=("fuzz $t: ok, $line")
  else
    failed=$((failed + 1))
    artifact=$(sed -nE "s/.*Test unit written to (.*)$/\1/p" "$log" | tail -1)
    grep -aE 'ERROR:|runtime error|property violated|SUMMARY' "$log" | head -5
    summary+=("fuzz $t: FAILED (exit $rc), $line; log $log${artifact:+; reproducer $artifact}")
    [ -n "$artifact" ] && echo "reproduce: $bin/${t}_fuzzer $artifact  (or add it to tests/fuzz/$t/ and run bazel test //tests/fuzz:${t}_corpus_test)"
  fi
done
printf '%s\n' "${summary[@]}"
echo "fuzz summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
