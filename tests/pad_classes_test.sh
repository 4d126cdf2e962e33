#!/usr/bin/env bash
# vouch-pad-classes changes no result: a classifier built with its classes
# padded (--pad-classes: the LM head's weight and bias gain zero rows,
# cross_entropy counts the first C entries, the output drops the rest) and the
# same model built without trains from the same params to bitwise the same
# step losses (the trace), printed lines (eval accuracy, row 0 of the output)
# and final params; then, from those params, the same lines again for AFTER
# (--sample's tokens, --eval's accuracy, --predict's file: each reads the
# prediction through its padding). On cpu the padded sums are the unpadded
# ones plus exact zeros, in the same order. The padded build's schedule shows
# that it really pads (its weight's slice_scatter, absent from the other's).
# usage: pad_classes_test.sh PLAIN_EXE PLAIN_CPP PADDED_EXE PADDED_CPP STEPS SEED DATA [AFTER...]
set -euo pipefail
plain=$1 plain_cpp=$2 padded=$3 padded_cpp=$4 steps=$5 seed=$6 data=$7
shift 7
after=("$@")
dir=${TEST_TMPDIR:-$(mktemp -d)}
count() { grep -c 'forward vouch_slice_scatter' "$1" || true; }
[ "$(count "$padded_cpp")" -gt "$(count "$plain_cpp")" ] ||
  { echo "FAIL: $padded_cpp runs no more slice_scatter than $plain_cpp: nothing is padded"; exit 1; }
"$plain" --init-only --seed "$seed" --save-params "$dir/init.safetensors" >/dev/null
for tag in plain padded; do
  exe=${!tag}
  "$exe" --device cpu --seed "$seed" --steps "$steps" --load-params "$dir/init.safetensors" \
    --trace "$dir/$tag.trace" --save-params "$dir/$tag.safetensors" --no-eval --data "$data" \
    >"$dir/$tag.stdout"
  if [ ${#after[@]} -gt 0 ]; then
    predict_out=()
    # --predict writes into a directory of its own: the line naming the file reads the same
    mkdir -p "$dir/$tag"
    [[ " ${after[*]} " == *" --predict "* ]] && predict_out=(--predict-out "$dir/$tag/predictions.npy")
    "$exe" --device cpu --seed "$seed" --steps 0 --load-params "$dir/$tag.safetensors" \
      --data "$data" "${after[@]}" "${predict_out[@]}" | sed "s|$dir/$tag/|DIR/|" >"$dir/$tag.after"
  fi
done
files=(trace stdout safetensors)
[ ${#after[@]} -gt 0 ] && files+=(after)
for f in "${files[@]}"; do
  cmp "$dir/plain.$f" "$dir/padded.$f" ||
    { echo "FAIL: the $f of the padded build differs from the plain one's"; exit 1; }
done
if [ -f "$dir/plain/predictions.npy" ]; then
  cmp "$dir/plain/predictions.npy" "$dir/padded/predictions.npy" ||
    { echo "FAIL: the padded build's --predict file differs from the plain one's"; exit 1; }
  files+=(predictions)
fi
echo "ok: $(grep -c '^step ' "$dir/plain.trace") steps; ${files[*]} bitwise equal with and" \
     "without padded classes"
