#!/usr/bin/env python3
"""Writes the op table (and the clause table) from the vouch ODS records.

usage: gen_op_table.py RECORDS.json OpTable.inc ClauseTable.inc

RECORDS.json is `llvm-tblgen --dump-json` of ir/VouchOps.td. Every record
deriving from Vouch_Op becomes one row of OpTable.inc, in ODS definition
order (the records' source locations; the JSON itself is alphabetical):
its table fields (VouchBase.td says what each means), plus two facts read
off the record itself: hasVjp (it declares VJPOpInterface) and
transposeFlags (it has transpose_lhs / transpose_rhs arguments). Every
enum deriving from Vouch_ClauseEnum (VouchAttrs.td) contributes one row of
ClauseTable.inc per case. The rows are plain C++ designated initialisers,
included by ir/OpTable.cpp.

Mistakes in the records stop the build here, with the record named: an
unset family, a compute op without a formula, a builtin without
parameters, two ops claiming one builtin, an inPlaceOperand that is no
operand of the op (or on an op without exactly one result), a bf16Result
that is no result of the op, a bf16Operand that is no operand of it, a
bf16Twin that is no result of it.
"""
import json
import re
import sys

FAMILIES = ["Structural", "Generator", "Pointwise", "View", "Index",
            "Reduction", "Loss", "Gemm", "Normalization", "Attention",
            "Pool", "Composite", "BatchNormalization", "Convolution"]
CLAUSES = ["Initializer", "Optimizer", "DataSource", "Schedule"]


def fail(message):
    sys.stderr.write("gen_op_table.py: error: " + message + "\n")
    sys.exit(1)


def source_order(records, name):
    """(file, line) of a record's definition, for sorting in ODS order."""
    loc = records[name]["!locs"][0]
    path, _, line = loc.rpartition(":")
    return (path, int(line))


def c_string(text):
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + out + '"'


def resolve(records, value):
    if isinstance(value, dict) and value.get("kind") == "def":
        return records[value["def"]]
    return value


def declares_interface(records, traits, interface):
    """Whether a trait list (nested TraitLists included) declares the
    interface with C++ name `interface` in namespace ::vouch."""
    for trait in traits or []:
        record = resolve(records, trait)
        if not isinstance(record, dict):
            continue
        if (record.get("cppInterfaceName") == interface and
                record.get("cppNamespace") == "::vouch"):
            return True
        if declares_interface(records, record.get("traits"), interface):
            return True
    return False


def argument_names(record):
    return [arg[1] for arg in record["arguments"]["args"]]


def operand_names(records, record):
    """The names of a record's operands (its arguments that are values, not
    attributes), in operand order."""
    names = []
    for arg in record["arguments"]["args"]:
        constraint = resolve(records, arg[0])
        if isinstance(constraint, dict) and \
                "TypeConstraint" in constraint.get("!superclasses", []):
            names.append(arg[1])
    return names


def parse_params(text):
    """'x, axes = all' -> [('x', ''), ('axes', 'all')]."""
    params = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, default = (s.strip() for s in part.partition("="))
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            return None
        params.append((name, default))
    return params


def check_params(owner, text):
    params = parse_params(text)
    if params is None:
        fail(owner + ": cannot read parameters '" + text + "'")
    seen_default = False
    for name, default in params:
        if seen_default and not default:
            fail(owner + ": required parameter '" + name +
                 "' after an optional one in '" + text + "'")
        seen_default = seen_default or bool(default)
    return params


def op_rows(records):
    names = sorted(records["!instanceof"].get("Vouch_Op", []),
                   key=lambda n: source_order(records, n))
    rows, builtins = [], {}
    for name in names:
        r = records[name]
        if r.get("!anonymous"):
            continue
        family = resolve(records, r.get("family"))
        if not isinstance(family, dict) or family.get("name") not in FAMILIES:
            fail(name + " sets no family (let family = Vouch_Pointwise; ...)")
        family = family["name"]
        structural = family == "Structural"
        if not structural and not r["formula"]:
            fail(name + " computes but states no formula")
        composite = family == "Composite"
        if not structural and not composite and not r["cudaProviders"]:
            fail(name + " computes but names no cuda provider")
        if composite and (r["cudaProviders"] or r["cpuKernel"]):
            fail(name + " is composite: its composed form's ops have the "
                 "kernels, it has none")
        if structural and (r["builtin"] or r["formula"]):
            fail(name + " is structural: no builtin, no formula")
        if bool(r["builtin"]) != bool(r["builtinParams"]):
            fail(name + ": a builtin needs its parameters, and parameters "
                 "a builtin")
        if r["builtin"]:
            check_params(name, r["builtinParams"])
            if r["builtin"] in builtins:
                fail(name + " and " + builtins[r["builtin"]] +
                     " both claim the builtin '" + r["builtin"] + "'")
            builtins[r["builtin"]] = name
        if r["contraction"] not in ("", "none"):
            fail(name + ": contraction '" + r["contraction"] +
                 "' is neither \"\" (the provider's) nor \"none\"")
        if bool(r["cudaKernel"]) != bool(r["cudaKernelSource"]):
            fail(name + ": cudaKernel and cudaKernelSource go together")
        arguments = argument_names(r)
        operands = operand_names(records, r)
        in_place = r["inPlaceOperand"]
        if in_place != -1:
            if not 0 <= in_place < len(operands):
                fail(name + ": inPlaceOperand " + str(in_place) + " is not one of "
                     "its " + str(len(operands)) + " operands")
            if len(r["results"]["args"]) != 1:
                fail(name + ": inPlaceOperand needs exactly one result")
        bf16_result = r["bf16Result"]
        if bf16_result != -1 and not 0 <= bf16_result < len(r["results"]["args"]):
            fail(name + ": bf16Result " + str(bf16_result) + " is not one of its " +
                 str(len(r["results"]["args"])) + " results")
        bf16_operand = r["bf16Operand"]
        if bf16_operand != -1 and not 0 <= bf16_operand < len(operands):
            fail(name + ": bf16Operand " + str(bf16_operand) + " is not one of its " +
                 str(len(operands)) + " operands")
        bf16_twin = r["bf16Twin"]
        if bf16_twin != -1 and not 0 <= bf16_twin < len(r["results"]["args"]):
            fail(name + ": bf16Twin " + str(bf16_twin) + " is not one of its " +
                 str(len(r["results"]["args"])) + " results")
        rows.append({
            "mnemonic": c_string(r["opName"]),
            "family": "OpFamily::" + family,
            "summary": c_string(r["summary"]),
            "formula": c_string(r["formula"]),
            "hasVjp": "true" if declares_interface(
                records, r["traits"], "VJPOpInterface") else "false",
            "transposeFlags": "true" if ("transpose_lhs" in arguments or
                                         "transpose_rhs" in arguments)
                              else "false",
            "builtin": c_string(r["builtin"]),
            "builtinParams": c_string(r["builtinParams"]),
            "cudaProviders": c_string(r["cudaProviders"]),
            "cpuKernel": c_string(r["cpuKernel"]),
            "cpuKernelNote": c_string(r["cpuKernelNote"]),
            "cpuEvidence": c_string(r["cpuEvidence"]),
            "cudaEvidence": c_string(r["cudaEvidence"]),
            "contraction": c_string(r["contraction"]),
            "cudaKernelSource": c_string(r["cudaKernelSource"]),
            "cudaKernel": c_string(r["cudaKernel"]),
            "cudaKernelNote": c_string(r["cudaKernelNote"]),
            "sums": "true" if r["sums"] else "false",
            "inPlaceOperand": str(in_place),
            "bf16Result": str(bf16_result),
            "bf16Operand": str(bf16_operand),
            "bf16Twin": str(bf16_twin),
        })
    return rows


def clause_rows(records):
    enums = sorted(records["!instanceof"].get("Vouch_ClauseEnum", []),
                   key=lambda n: source_order(records, n))
    rows = []
    for name in enums:
        e = records[name]
        if e["clause"] not in CLAUSES:
            fail(name + ": clause '" + e["clause"] + "' is none of " +
                 ", ".join(CLAUSES))
        for case in e["enumerants"]:
            c = resolve(records, case)
            if "params" not in c:
                fail(name + ": case " + c["!name"] +
                     " is not a Vouch_ClauseCase (it needs its parameters)")
            check_params(c["!name"], c["params"])
            rows.append({
                "clause": "ClauseKind::" + e["clause"],
                "name": c_string(c["str"]),
                "symbol": c_string(c["symbol"]),
                "value": str(c["value"]),
                "params": c_string(c["params"]),
            })
    return rows


def write(path, rows, what):
    with open(path, "w") as out:
        out.write("// Generated by ir/gen_op_table.py from the vouch ODS "
                  "records: " + what + ".\n// Do not edit.\n")
        for row in rows:
            out.write("{" + ", ".join("." + k + " = " + v
                                      for k, v in row.items()) + "},\n")


def main():
    if len(sys.argv) != 4:
        fail("usage: gen_op_table.py RECORDS.json OpTable.inc ClauseTable.inc")
    with open(sys.argv[1]) as f:
        records = json.load(f)
    write(sys.argv[2], op_rows(records), "one row per op, in ODS order")
    write(sys.argv[3], clause_rows(records), "one row per clause callee")


if __name__ == "__main__":
    main()
