#!/usr/bin/env python3
"""The kernel speed lab's driver: vouch's cuda kernels against PyTorch's same ops.

Runs the CUDA program (kernels.cu, built as bench_kernels), which times each vouch
kernel at GPT-2-sized shapes and prints a JSON line per kernel with its inputs'
recipe and a summary of its outputs; then builds the same inputs with torch (the same
counter hash, bit for bit), times torch's op the same way (CUDA events around each
launch after an L2 flush, 3 warm-ups, the median of --reps), checks vouch's outputs against torch's (sum, sum of absolute
values, 16 sampled elements: loosely, so a fast wrong kernel fails) and prints one
table: kernel, shape, vouch µs, GB/s, % of the copy bandwidth measured by the same
run, the time of a copy moving the same bytes (what a kernel of this size can reach:
launch and ramp included), torch µs, torch GB/s, speed-up (torch µs / vouch µs), target (≥ 70 % of copy
and no slower than torch), check.

    python3 kernels.py [--bin rt/bench_kernels] [--reps 20] [--only NAME]
                       [--json out.json] [--markdown out.md]

Exit 0 when every output matches torch's (speed misses are reported, not failures),
1 on a mismatch or a failed run, 3 when there is no CUDA device.

Adding a kernel: a case in kernels.cu and an entry in TORCH below (the name maps to
a function from the inputs, as torch tensors, and the shape's numbers to a callable
returning the outputs as a tuple; conversions torch needs, e.g. int64 ids, happen
before the callable and are not timed).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

SAMPLE_SEED = 777
SAMPLES = 16
TARGET_PCT = 70.0

M32 = 0xFFFFFFFF
MUL = 0x5BD1E995


def bench_hash_int(i, seed):
    """kernels.cu's bench_hash on Python ints."""
    h = (((i + seed * 7919) & M32) * MUL) & M32
    h ^= h >> 13
    h = (h * MUL) & M32
    h ^= h >> 15
    return h


def bench_hash(i, seed):
    """The same on an int64 tensor (every product stays below 2^63)."""
    h = (((i + seed * 7919) & M32) * MUL) & M32
    h = h ^ (h >> 13)
    h = (h * MUL) & M32
    return h ^ (h >> 15)


def make_input(torch, spec, device):
    n = spec["n"]
    chunk = 1 << 26
    if spec["kind"] == "f":
        out = torch.empty(n, dtype=torch.float32, device=device)
    else:
        out = torch.empty(n, dtype=torch.int32, device=device)
    for start in range(0, n, chunk):
        end = min(n, start + chunk)
        h = bench_hash(torch.arange(start, end, dtype=torch.int64, device=device), spec["seed"])
        if spec["kind"] == "f":
            # lo + (hi - lo) * (h / 2^32): two double roundings, as kernels.cu's fill.
            u = h.double() * (2.0 ** -32)
            out[start:end] = ((u * (spec["hi"] - spec["lo"])) + spec["lo"]).float()
        else:
            out[start:end] = (h % spec["mod"]).int()
    return out


def torch_table(torch):
    F = torch.nn.functional
    f32 = torch.float32

    def softmax(x, d):
        x = x.view(d[0], d[1])
        return lambda: (torch.softmax(x, -1),)

    def log_softmax(x, d):
        x = x.view(d[0], d[1])
        return lambda: (torch.log_softmax(x, -1),)

    def softmax_grad(g, y, d):
        g, y = g.view(d[0], d[1]), y.view(d[0], d[1])
        return lambda: (torch._softmax_backward_data(g, y, -1, f32),)

    def log_softmax_grad(g, y, d):
        g, y = g.view(d[0], d[1]), y.view(d[0], d[1])
        return lambda: (torch._log_softmax_backward_data(g, y, -1, f32),)

    def cross_entropy(z, labels, d):
        z, y = z.view(d[0], d[1]), labels.long()
        return lambda: (F.cross_entropy(z, y),)

    def cross_entropy_grad(z, labels, dloss, d):
        # What autograd runs for F.cross_entropy's backward: nll_loss_backward, then
        # log_softmax's backward from the saved log-probabilities (computed here, untimed).
        z, y = z.view(d[0], d[1]), labels.long()
        logp = torch.log_softmax(z, -1)
        dl = dloss.view(())
        total = (y != -100).sum().to(f32)
        aten = torch.ops.aten

        def run():
            g = aten.nll_loss_backward(dl, logp, y, None, 1, -100, total)
            return (aten._log_softmax_backward_data(g, logp, 1, f32),)

        return run

    def layer_norm(x, w, b, d):
        x = x.view(d[0], d[1])
        return lambda: (F.layer_norm(x, (d[1],), w, b, 1e-5),)

    def layer_norm_add(x, r, w, b, d):
        # The separate ops the fold replaces: the residual add, then layer_norm of it.
        x, r = x.view(d[0], d[1]), r.view(d[0], d[1])

        def run():
            s = x + r
            return (F.layer_norm(s, (d[1],), w, b, 1e-5), s)

        return run

    def layer_norm_grad(g, x, w, d):
        # What autograd runs for F.layer_norm's backward: native_layer_norm_backward from
        # the forward's saved mean and rstd (computed here, untimed); dx, dweight, dbias.
        g, x = g.view(d[0], d[1]), x.view(d[0], d[1])
        b = torch.zeros_like(w)
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, (d[1],), w, b, 1e-5)
        return lambda: tuple(t.reshape(-1) for t in torch.ops.aten.native_layer_norm_backward(
            g, x, (d[1],), mean, rstd, w, b, [True, True, True]))

    def masked_softmax(x, mask, d):
        # PyTorch's usual way: -inf where the mask blocks, then softmax.
        x, blocked = x.view(d[0], d[1]), (mask == 0).view(d[0], d[1])
        return lambda: (torch.softmax(x.masked_fill(blocked, float("-inf")), -1),)

    def embedding(ids, table, d):  # d: positions, V, D
        ids, table = ids.long(), table.view(d[1], d[2])
        return lambda: (F.embedding(ids, table),)

    def embedding_grad(ids, dy, d):
        ids, dy = ids.long(), dy.view(d[0], d[2])
        return lambda: (torch.ops.aten.embedding_dense_backward(dy, ids, d[1], -1, False),)

    return {
        "softmax": softmax,
        "log_softmax": log_softmax,
        "softmax_grad": softmax_grad,
        "log_softmax_grad": log_softmax_grad,
        "cross_entropy": cross_entropy,
        "cross_entropy_grad": cross_entropy_grad,
        "layer_norm": layer_norm,
        "layer_norm_add": layer_norm_add,
        "layer_norm_grad": layer_norm_grad,
        "masked_softmax": masked_softmax,
        "embedding": embedding,
        "embedding_grad": embedding_grad,
        "add_relu": lambda a, b, d: (lambda: (torch.relu(a + b),)),
        "mul_sub": lambda a, b, d: (lambda: (a * b, a - b)),
        "sub_scale_mul": lambda a, b, c, d: (lambda: ((a - b) * 0.125 * c,)),
        "tanh": lambda a, d: (lambda: (torch.tanh(a),)),
        "column_sum": lambda x, d: (lambda: (x.view(d[0], d[1]).sum(0),)),
        "row_sum": lambda x, d: (lambda: (x.view(d[0], d[1]).sum(1),)),
        "mse_loss": lambda a, b, d: (lambda: (F.mse_loss(a, b),)),
    }


_flush = None


def time_us(torch, fn, reps):
    """The median time of fn's launches, each after an L2 flush (llm.c's dev/cuda method,
    as kernels.cu's time_us): the flush empties L2 of the last launch's data and keeps
    the GPU busy while the launch is enqueued, so only the GPU's work is timed."""
    global _flush
    if _flush is None:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
        _flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        _flush.zero_()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def compare(vouch_out, torch_out):
    """Problems (strings) between vouch's output summary and torch's tensor."""
    t = torch_out.reshape(-1).double()
    n = t.numel()
    if n != vouch_out["n"]:
        return ["%d elements, torch has %d" % (vouch_out["n"], n)]
    problems = []
    t_sum, t_abs = float(t.sum()), float(t.abs().sum())
    scale = t_abs / max(n, 1)
    if not math.isfinite(vouch_out["sum"]) or abs(vouch_out["sum"] - t_sum) > 1e-3 * t_abs + 1e-6:
        problems.append("sum %.9g vs torch %.9g" % (vouch_out["sum"], t_sum))
    if not math.isfinite(vouch_out["abs_sum"]) or abs(vouch_out["abs_sum"] - t_abs) > 1e-3 * t_abs + 1e-6:
        problems.append("abs sum %.9g vs torch %.9g" % (vouch_out["abs_sum"], t_abs))
    for s, v in enumerate(vouch_out["samples"]):
        at = bench_hash_int(s, SAMPLE_SEED) % n
        w = float(t[at])
        if not (abs(v - w) <= 1e-3 * abs(w) + 1e-4 * scale):
            problems.append("element %d: %.9g vs torch %.9g" % (at, v, w))
            break
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=None, help="the built kernels.cu (default: bench_kernels "
                    "next to this script, else rt/bench_kernels)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default=None, help="one kernel name")
    ap.add_argument("--variants", action="store_true",
                    help="also time other launch shapes (rows named kernel~shape; not "
                    "counted against the target)")
    ap.add_argument("--json", default=None, help="write every row as JSON here")
    ap.add_argument("--markdown", default=None, help="write the table as markdown here")
    args = ap.parse_args()

    binary = args.bin
    if binary is None:
        for c in (os.path.join(here, "bench_kernels"), os.path.join(here, "rt", "bench_kernels"),
                  "rt/bench_kernels"):
            if os.path.exists(c):
                binary = c
                break
    if binary is None:
        print("kernels.py: no bench_kernels binary (pass --bin)", file=sys.stderr)
        return 1
    cmd = [binary, "--reps", str(args.reps)] + (["--only", args.only] if args.only else [])
    cmd += ["--variants"] if args.variants else []
    run = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    if run.returncode == 3:
        print("SKIPPED (no CUDA device)")
        return 3
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        print("kernels.py: %s exited %d" % (binary, run.returncode), file=sys.stderr)
        return 1
    copy, cases = None, []
    for line in run.stdout.splitlines():
        if line.startswith("COPY "):
            copy = json.loads(line[5:])
        elif line.startswith("KERNEL "):
            cases.append(json.loads(line[7:]))
    if copy is None:
        print("kernels.py: no COPY line from %s" % binary, file=sys.stderr)
        return 1
    print("device: %s; copy bandwidth %.0f GB/s (cudaMemcpy D2D %.0f, copy kernel %.0f)"
          % (copy["device"], copy["gbs"], copy["memcpy_gbs"], copy["kernel_gbs"]))

    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    table = torch_table(torch) if have_torch else {}
    if have_torch:
        x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
        y = torch.empty_like(x)
        torch_copy_us = time_us(torch, lambda: y.copy_(x), args.reps)
        print("torch: %s, copy_ %.0f GB/s" % (torch.__version__, 2 * 4.0 * x.numel() / torch_copy_us / 1e3))
        del x, y
    else:
        print("torch with CUDA unavailable: vouch's numbers only, outputs unchecked")

    rows, failed, at_target = [], 0, 0
    for c in cases:
        dims = [int(v) for v in re.findall(r"\d+", c["shape"])]
        row = dict(name=c["name"], shape=c["shape"], us=c["us"], gbs=c["gbs"], pct=c["pct_copy"],
                   copy_us=c.get("copy_us"), torch_us=None, torch_gbs=None, speedup=None, check="unchecked", target="")
        kernel = c["name"].split("~")[0]  # a variant is timed against its kernel's torch op
        if kernel in table:
            inputs = [make_input(torch, s, "cuda") for s in c["inputs"]]
            try:
                fn = table[kernel](*inputs, dims)
                outs = fn()
                torch.cuda.synchronize()
            except Exception as e:  # torch's op, not vouch's: reported, not failed
                row["check"] = "torch error: %s" % str(e).splitlines()[0][:80]
                rows.append(row)
                del inputs
                continue
            problems = []
            if len(outs) != len(c["outputs"]):
                problems.append("%d outputs, torch has %d" % (len(c["outputs"]), len(outs)))
            else:
                for k, (v, t) in enumerate(zip(c["outputs"], outs)):
                    problems += ["output %d: %s" % (k, p) for p in compare(v, t)]
            row["check"] = "ok" if not problems else "FAIL: " + "; ".join(problems)
            failed += bool(problems)
            del outs
            row["torch_us"] = time_us(torch, fn, args.reps)
            row["torch_gbs"] = c["bytes"] / row["torch_us"] / 1e3
            row["speedup"] = row["torch_us"] / c["us"]
            del fn, inputs
            torch.cuda.empty_cache()
        elif have_torch:
            row["check"] = "no torch entry"
        ok = row["pct"] >= TARGET_PCT and (row["speedup"] is None or row["speedup"] >= 1.0)
        row["target"] = ("ok" if ok else "miss") + (" (variant)" if "~" in c["name"] else "")
        at_target += ok and "~" not in c["name"]
        rows.append(row)

    def fmt(v, f):
        return "-" if v is None else f % v

    header = ["kernel", "shape", "vouch µs", "GB/s", "% copy", "same-size copy µs", "torch µs",
              "torch GB/s", "torch/vouch", "target", "check"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["name"], r["shape"], fmt(r["us"], "%.1f"), fmt(r["gbs"], "%.0f"),
            fmt(r["pct"], "%.0f%%"), fmt(r["copy_us"], "%.1f"), fmt(r["torch_us"], "%.1f"), fmt(r["torch_gbs"], "%.0f"),
            fmt(r["speedup"], "%.2f"), r["target"], r["check"]]) + " |")
    print("\n".join(lines))
    summary = ("kernels: %d timed, %d at target (>= %.0f%% of copy, no slower than torch), "
               "%d outputs differ from torch"
               % (sum("~" not in r["name"] for r in rows), at_target, TARGET_PCT, failed))
    print(summary)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(copy=copy, rows=rows), f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("copy bandwidth %.0f GB/s on %s\n\n" % (copy["gbs"], copy["device"]))
            f.write("\n".join(lines) + "\n\n" + summary + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
