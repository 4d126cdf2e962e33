#!/usr/bin/env python3
"""Compares two runs of a vouch executable: their --trace files (every
step's loss, mean losses) and --save-params files (final params).

usage: compare.py LABEL TRACE_A PARAMS_A TRACE_B PARAMS_B ATOL RTOL
                  [--losses-only | --params-atol PATOL]
ATOL = RTOL = 0 asks for bitwise equality. Prints the largest errors and
exits 1 when any value is beyond |a - b| <= atol + rtol * |b| (params:
patol + rtol * |b| with --params-atol, a model's own declared bound). With
--losses-only the params' errors are printed but only their finiteness is
checked: Adam's normalised update turns rounding-level differences of a
near-zero gradient into lr-sized steps, so after a few Adam steps params are
no measure of a kernel's accuracy while the losses still are.
"""
import json
import math
import struct
import sys


def trace(path):
    values = {}
    for line in open(path):
        key, *rest = line.split()
        values[key + (" " + rest[0] if key == "step" else "")] = float(rest[-1])
    return values


def params(path, with_shapes=False):
    """{name: values} of a safetensors file ({name: (shape, values)} with
    with_shapes)."""
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F64": "d", "F32": "f"}[e["dtype"]]
        b, end = e["data_offsets"]
        values = struct.unpack("<%d%s" % ((end - b) // struct.calcsize(fmt), fmt),
                               blob[8 + n + b:8 + n + end])
        out[name] = (e["shape"], values) if with_shapes else values
    return out


def main():
    label, ta, pa, tb, pb = sys.argv[1:6]
    atol, rtol = float(sys.argv[6]), float(sys.argv[7])
    extra = sys.argv[8:]
    losses_only = extra == ["--losses-only"]
    params_atol = atol
    if len(extra) == 2 and extra[0] == "--params-atol":
        params_atol = float(extra[1])
    elif extra and not losses_only:
        sys.exit("compare.py: unknown options %s (see its usage)" % " ".join(extra))
    a, b = trace(ta), trace(tb)
    worst = {"losses": 0.0, "params": 0.0}
    bad = []

    def check(kind, name, x, y):
        # A non-finite loss or param fails whatever the other run holds: a test
        # model that diverges (or a kernel writing NaN) proves nothing, and
        # inf - inf or a NaN bound would otherwise slip past the tolerance.
        if not (math.isfinite(x) and math.isfinite(y)):
            worst[kind] = math.inf
            bad.append("%s %s: %r vs %r (not finite)" % (kind, name, x, y))
            return
        err = abs(x - y)
        worst[kind] = max(worst[kind], err)
        if kind == "params" and losses_only:
            return
        if err > (params_atol if kind == "params" else atol) + rtol * abs(y):
            bad.append("%s %s: %r vs %r" % (kind, name, x, y))

    if a.keys() != b.keys():
        bad.append("traces list different steps")
    for k in a.keys() & b.keys():
        check("losses", k, a[k], b[k])
    qa, qb = params(pa), params(pb)
    if qa.keys() != qb.keys():
        bad.append("params differ in names")
    for name in qa.keys() & qb.keys():
        for i, (x, y) in enumerate(zip(qa[name], qb[name])):
            check("params", "%s[%d]" % (name, i), x, y)
    tol = "bitwise" if atol == 0 and rtol == 0 else "atol %g rtol %g" % (atol, rtol)
    if losses_only:
        tol += ", losses only"
    elif params_atol != atol:
        tol += ", params atol %g" % params_atol
    print("%-44s losses max|err| %.2e  params max|err| %.2e  (%s)  %s"
          % (label, worst["losses"], worst["params"], tol, "ok" if not bad else "FAIL"))
    for line in bad[:5]:
        print("    " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
