#!/usr/bin/env bash
# Runs a fuzz target once on every file of its committed corpus (seeds and any
# reproducer of a crash found and fixed): usage: replay_corpus.sh FUZZER DIR.
set -euo pipefail
fuzzer=$1 dir=$2
shopt -s nullglob
files=("$dir"/*)
if [ ${#files[@]} -eq 0 ]; then
  echo "replay_corpus: $dir holds no inputs" >&2
  exit 1
fi
"$fuzzer" "${files[@]}" 2>&1 | tail -3
exit "${PIPESTATUS[0]}"
