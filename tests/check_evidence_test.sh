#!/usr/bin/env bash
# tools/check_evidence.sh against a fixture tree and a fixture table: each
# kind of bad citation (a test or a source that does not exist, a label a
# comprehension "prefix" + base + "suffix" does not generate, one that
# says nothing of what it exercises, a model that does not plan, a contract
# citing outside the table, models that plan another capsule, sources that
# never name the capsule, a symbol pattern for a contract without a symbol)
# gives its one line and exit status 1; a table of good citations passes.
# Then the real //capsules:evidence_dump output has the record shape the
# checker reads.
# usage: check_evidence_test.sh CHECKER VOUCH MODEL EVIDENCE_DUMP
set -uo pipefail
checker=$1 vouch=$2 model=$3 dump=$4
dir=${TEST_TMPDIR:-$(mktemp -d)}/check-evidence
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

tree=$dir/tree
mkdir -p "$tree/tests/lit" "$tree/tests/gpu" "$tree/models" "$tree/src"
cat >"$tree/tests/BUILD.bazel" <<'EOF'
cc_test(
    name = "present_test",
)

[sh_test(
    name = "golden_" + model + "_test",
) for model in [
    "demo",
]]
EOF
echo "// expected-error @+1 {{'vouch.relu' op result differs}}" >"$tree/tests/lit/verifier.mlir"
echo "// vague" >"$tree/tests/lit/vague.mlir"
echo "// lost" >"$tree/tests/lit/lost.mlir"
echo "#!/bin/sh" >"$tree/tests/gpu/run.sh"
echo "#!/bin/sh" >"$tree/tests/gpu/other.sh"
cp "$model" "$tree/models/quick.vouch"
echo "  relu<double>(in.data(), out.data());" >"$tree/src/kernels_test.cc"

cat >"$dir/bad.txt" <<'EOF'
citation|verifier|tests/lit/verifier.mlir|||tests/lit/verifier.mlir|'vouch.{op}' op
citation|kernels|//tests:present_test|||src/kernels_test.cc|{symbol}<
citation|suite|tests/gpu/run.sh|checked_cuda|models/*.vouch||
citation|absent|//tests:absent_test|||src/kernels_test.cc|{op}
citation|vague|tests/lit/vague.mlir||||
citation|broken|tests/gpu/other.sh|checked_cuda|models/none*.vouch||
citation|lost|tests/lit/lost.mlir|||src/gone.cc|{op}
citation|golden|//tests:golden_demo_test|||src/kernels_test.cc|{symbol}<
citation|nogolden|//tests:golden_other_test|||src/kernels_test.cc|{symbol}<
contract|reference.relu|relu|shape|test-suite|tests/lit/verifier.mlir|
contract|reference.sub|sub|shape|test-suite|tests/lit/verifier.mlir|
contract|reference.relu|relu|value|test-suite|//tests:present_test|vouch::rt::relu<T>
contract|reference.add|add|value|test-suite|//tests:present_test|
contract|native_cuda.relu|relu|value|test-suite|tests/gpu/run.sh|
contract|native_cuda.permute|permute|layout|test-suite|tests/gpu/run.sh|
contract|native_cuda.tanh|tanh|value|test-suite|//tests:unlisted_test|
contract|native_cuda.exp|exp|value|test-suite|tests/gpu/other.sh|
contract|reference.fill|fill|vjp|not-applicable||
EOF
"$checker" --root "$tree" --table "$dir/bad.txt" --vouch "$vouch" >"$dir/bad.out" 2>&1
rc=$?
cat "$dir/bad.out"
[ $rc -eq 1 ] || fail "a bad table: exit status $rc, not 1"
expected=(
  "  MISSING //tests:absent_test (cited as evidence in capsules/Evidence.cpp, key absent)"
  "  MISSING //tests:golden_other_test (cited as evidence in capsules/Evidence.cpp, key nogolden)"
  "  VAGUE   citation vague (tests/lit/vague.mlir) says neither which models it plans nor what its sources name"
  "  BROKEN  citation broken (tests/gpu/other.sh): \`vouch report models/none*.vouch --profile checked_cuda\` failed: error: cannot read 'models/none*.vouch': No such file or directory"
  "  MISSING src/gone.cc, a source of citation lost (tests/lit/lost.mlir)"
  "  NOT EXERCISED capsule reference.sub, shape contract: cites tests/lit/verifier.mlir, whose sources never say \`'vouch.sub' op\` (tests/lit/verifier.mlir)"
  "  NOT EXERCISED capsule reference.add, value contract: cites //tests:present_test, whose sources are searched for its provenance symbol, and the contract names none"
  "  NOT EXERCISED capsule native_cuda.permute, layout contract: cites tests/gpu/run.sh, whose models plan no native_cuda.permute (checked_cuda: models/*.vouch)"
  "  UNKNOWN capsule native_cuda.tanh, value contract: cites //tests:unlisted_test, which the citation table (capsules/Evidence.cpp) does not hold"
  "evidence: 9 citations, 5 unusable; 8 cited contracts, 4 not exercised"
)
for line in "${expected[@]}"; do
  grep -qxF -- "$line" "$dir/bad.out" || fail "missing line: $line"
done
[ "$(wc -l <"$dir/bad.out")" -eq ${#expected[@]} ] ||
  fail "expected exactly ${#expected[@]} lines"

# The same tree with its good citations only passes, and -v lists them.
grep -vE '\|(absent|vague|broken|lost|nogolden)\||reference\.sub|reference\.add|native_cuda\.(permute|tanh|exp)' \
  "$dir/bad.txt" >"$dir/good.txt"
"$checker" -v --root "$tree" --table "$dir/good.txt" --vouch "$vouch" >"$dir/good.out" 2>&1 ||
  { cat "$dir/good.out"; fail "a good table is refused"; }
for line in "  ok      capsule native_cuda.relu, value contract: cites tests/gpu/run.sh" \
            "  ok      capsule reference.relu, value contract: cites //tests:present_test" \
            "evidence: 4 citations, 0 unusable; 3 cited contracts, 0 not exercised"; do
  grep -qxF -- "$line" "$dir/good.out" || { cat "$dir/good.out"; fail "missing line: $line"; }
done

# The real dump: citations, then contracts, seven fields each.
"$dump" >"$dir/dump.txt" || fail "evidence_dump failed"
awk -F'|' 'NF != 7 || ($1 != "citation" && $1 != "contract") { bad = 1; print "bad record: " $0 }
           $1 == "citation" { c++ } $1 == "contract" { k++ }
           END { exit bad || !c || !k }' "$dir/dump.txt" || fail "evidence_dump's records"
echo "PASS"
