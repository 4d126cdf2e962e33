#!/usr/bin/env python3
"""The CNN race's per-conv-shape lab (issue 12): each convolution shape of the
race's ResNet-18 (tools/bench/resnet18_cifar.vouch, batch 256, CIFAR-shaped),
timed as vouch really runs it against cuDNN through PyTorch, forward and both
backward products.

vouch's side is a compiled executable per shape and precision (`package`, on
the build machine): a model whose only large work is that convolution, its
input a param so that dx is computed too. Each runs three training steps with
--profile-launches (docs/report.md): the launches of step 2 in order, each with
its device time, program step and capsule. They are added up by what they do:

  fwd  im2col, the product W·cols (cuBLAS transa=N, transb=N) and the permute of
       its result to [N, O, ...] (the first permute of the step)
  dy   the permute of dy back to [O, N, ...] (later permutes), which dx and dW share
  dW   the product dY·colsᵀ (transa=T, transb=N)
  dx   col2im_matmul: col2im of the product Wᵀ·dY in one kernel, its columns
       never stored (vouch-fold-col2im: 3×3 kernels of 32 channels per group or
       more), or the composed form's product Wᵀ·dY (transa=N, transb=T) and
       col2im (the stem's 3 channels, the 1×1 shortcuts)
plus, for a padded product (tf32), its operand copies (their program step is the
product's). Everything else (the tiny loss, SGD, batch selection) is left out.

cuDNN's side (`run`, on the GPU machine) is PyTorch's F.conv2d and
aten.convolution_backward for dgrad and wgrad apart, torch.backends.cudnn.
benchmark on (cuDNN picks its fastest algorithm per shape), TF32 allowed for
the tf32 rows only: CUDA events around each call, the median of --reps after
warm-up. vouch's numbers are the median of --runs profiled steps (one step per
process run). Ratio: vouch µs / cuDNN µs, per pass and for the whole
convolution (fwd + dy + dW + dx against fwd + dgrad + wgrad); the issue's target
is ≤ 1.3 per shape.

usage:
  conv_shapes.py package OUT --vouch bazel-bin/tools/vouch   # builds OUT/conv_*_{fp32,tf32}
  conv_shapes.py run DIR [--runs 3] [--reps 20] [--json OUT.json] [--markdown OUT.md]
  conv_shapes.py classify FILE.tsv                            # one profile's fwd/dy/dW/dx µs
  conv_shapes.py check-rules OUT --vouch V   # the rules against each shape's compiled steps

check-rules (tests/lit/tools/conv-shapes-lab.test, no GPU) builds each shape's
cuda tables (`vouch build --emit tables`) and classifies its program steps, one
launch each in table order: each shape must come out as 3 fwd steps, 1 dy, 1 dW
and 1 dx where it is folded (col2im_matmul) or 2 where not, none unknown, so a lowering that changes what a convolution runs as
fails there before it skews the lab.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from race_common import allow_tf32, median

BATCH = 256
# (name, C, O, H (= W), kernel, stride, padding): the race's convolutions, in
# the order the network meets them (the stem's dx is not needed there, timed
# anyway).
SHAPES = [
    ("stem", 3, 64, 32, 3, 1, 1),
    ("l1", 64, 64, 32, 3, 1, 1),
    ("l2_down", 64, 128, 32, 3, 2, 1),
    ("l2_short", 64, 128, 32, 1, 2, 0),
    ("l2", 128, 128, 16, 3, 1, 1),
    ("l3_down", 128, 256, 16, 3, 2, 1),
    ("l3_short", 128, 256, 16, 1, 2, 0),
    ("l3", 256, 256, 8, 3, 1, 1),
    ("l4_down", 256, 512, 8, 3, 2, 1),
    ("l4_short", 256, 512, 8, 1, 2, 0),
    ("l4", 512, 512, 4, 3, 1, 1),
]
PRECISIONS = ("fp32", "tf32")
PASSES = ("fwd", "dy", "dW", "dx")


def out_size(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def shape_text(c, o, h, k, s, p):
    return "%dx%dx%dx%d k%d s%d p%d -> %d" % (BATCH, c, h, h, k, s, p, o)


def model_source(name, c, o, h, k, s, p):
    return f"""// conv_shapes.py: one convolution of the CNN race, its input a param (so dx is
// computed); the regression grid's tiny linear only gives the model its data.
model conv_{name} {{
  data regression_grid(lo = -1, hi = 1, n = 5)
  input x : f32[batch, 2]
  target y : f32[batch, 1]
  param a : f32[1, 2] = ones
  param image : f32[{BATCH}, {c}, {h}, {h}] = uniform(-1, 1)
  param w : f32[{o}, {c}, {k}, {k}] = kaiming_uniform
  h = conv(image, w, stride = {s}, padding = {p})
  pred = linear(x, a)
  output pred
  loss = mse_loss(pred, y) + reduce_mean(h)
  train sgd(lr = 0.01) batch 5 steps 3
}}
"""


def build_each(out, vouch, emit):
    """Writes each shape's model into `out` and builds it for cuda in each precision
    (`vouch build --emit emit`); yields (shape, precision, the output's path)."""
    os.makedirs(out, exist_ok=True)
    for name, c, o, h, k, s, p in SHAPES:
        src = os.path.join(out, "conv_%s.vouch" % name)
        with open(src, "w") as f:
            f.write(model_source(name, c, o, h, k, s, p))
        for precision in PRECISIONS:
            built = os.path.join(out, "conv_%s_%s%s" % (name, precision,
                                                       ".tables" if emit == "tables" else ""))
            cmd = [vouch, "build", src, "--target", "cuda", "--precision", precision,
                   "--emit", emit, "-o", built]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("conv_shapes.py: %s failed:\n%s" % (" ".join(cmd), r.stderr))
            yield name, precision, built


def package(args):
    for _, _, exe in build_each(args.out, args.vouch, "exe"):
        print("built", exe, flush=True)


def read_launches(path):
    """[(ms, step, capsule, what)] of a --profile-launches file."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            launch, ms, step, capsule, what = line.rstrip("\n").split("\t", 4)
            rows.append((float(ms), int(step), capsule, what))
    if not rows:
        raise ValueError("%s: no launches" % path)
    return rows


def classify(rows):
    """{pass: µs} of one profiled step (the module docstring's rules), plus
    'other' (left out of the comparison) and 'unknown' (a cuBLAS product whose
    flags fit no rule: the lab's rules are out of date and `run` fails)."""
    step_class = {}
    permutes = 0
    for ms, step, capsule, what in rows:  # the class of each step, from its main launch
        if step < 0 or what.startswith("vouch_repitch") or what.startswith("vouch_round_bf16"):
            continue
        cls = "other"
        flags = re.search(r"transa=([NT]), transb=([NT])", what)
        if capsule.endswith(".im2col"):
            cls = "fwd"
        elif capsule.endswith(".col2im") or capsule.endswith(".col2im_matmul"):
            cls = "dx"
        elif capsule.endswith(".permute"):
            cls = "fwd" if permutes == 0 else "dy"
            permutes += 1
        elif flags and capsule.endswith(".matmul"):
            cls = {("N", "N"): "fwd", ("T", "N"): "dW", ("N", "T"): "dx"}.get(flags.groups(),
                                                                            "unknown")
        # A matmul without cuBLAS's flags is vouch's small-product kernel: the tiny
        # linear's gradient, never the convolution's (check-rules counts the latter).
        step_class.setdefault(step, cls)
    us = {k: 0.0 for k in PASSES + ("other", "unknown")}
    for ms, step, capsule, what in rows:
        us[step_class.get(step, "other")] += 1000.0 * ms
    return us


def table_steps(tables):
    """[(what, capsule)] of the cuda program's steps in a `--emit tables` file."""
    text = open(tables).read()
    start = text.index("kCudaProgram_steps[] = {")
    block = text[start:text.index("};", start)]
    return re.findall(r'"([^"]*)", "([^"]*)", -?\d+, -?\d+\}', block)


def check_rules(args):
    failed = 0
    for name, precision, tables in build_each(args.out, args.vouch, "tables"):
        rows = [(0.001, i, capsule, what)
                for i, (what, capsule) in enumerate(table_steps(tables))]
        counts = {k: round(v) for k, v in classify(rows).items()}  # 1 µs a step: the counts
        folded = any(capsule.endswith(".col2im_matmul") for _, _, capsule, _ in rows)
        ok = (counts["fwd"], counts["dy"], counts["dW"], counts["dx"],
              counts["unknown"]) == (3, 1, 1, 1 if folded else 2, 0)
        failed += not ok
        print("%s %s: fwd %d dy %d dW %d dx %d (%s) other %d unknown %d: %s" %
              (name, precision, counts["fwd"], counts["dy"], counts["dW"], counts["dx"],
               "folded" if folded else "composed", counts["other"], counts["unknown"],
               "ok" if ok else "RULES OUT OF DATE"))
    return 1 if failed else 0


def vouch_times(exe, runs):
    per_pass = {k: [] for k in PASSES + ("other", "unknown")}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs):
            tsv = os.path.join(tmp, "launches.tsv")
            cmd = [exe, "--device", "cuda", "--steps", "3", "--log-every", "3", "--seed", str(r),
                   "--profile-launches", tsv]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                                                  p.stderr[-2000:]))
            for k, v in classify(read_launches(tsv)).items():
                per_pass[k].append(v)
    return {k: median(v) for k, v in per_pass.items()}


def cudnn_times(torch, c, o, h, k, s, p, precision, reps):
    torch.backends.cudnn.benchmark = True
    allow_tf32(torch, precision == "tf32")
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.rand(BATCH, c, h, h, device="cuda", generator=g) * 2 - 1
    w = (torch.rand(o, c, k, k, device="cuda", generator=g) * 2 - 1) / (c * k * k) ** 0.5
    ho = out_size(h, k, s, p)
    gy = torch.full((BATCH, o, ho, ho), 1.0 / (BATCH * o * ho * ho), device="cuda")
    conv = torch.nn.functional.conv2d
    backward = torch.ops.aten.convolution_backward

    def fwd():
        return conv(x, w, stride=s, padding=p)

    def dgrad():
        return backward(gy, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1,
                        [True, False, False])

    def wgrad():
        return backward(gy, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1,
                        [False, True, False])

    out = {}
    for name, f in (("fwd", fwd), ("dgrad", dgrad), ("wgrad", wgrad)):
        for _ in range(5):
            f()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            f()
            b.record()
            b.synchronize()
            times.append(1000.0 * a.elapsed_time(b))
        out[name] = median(times)
    return out


def run(args):
    import torch
    if not torch.cuda.is_available():
        print("SKIPPED (no CUDA device)")
        return 3
    rows = []
    for name, c, o, h, k, s, p in SHAPES:
        for precision in PRECISIONS:
            exe = os.path.join(args.dir, "conv_%s_%s" % (name, precision))
            v = vouch_times(exe, args.runs)
            t = cudnn_times(torch, c, o, h, k, s, p, precision, args.reps)
            vouch_total = v["fwd"] + v["dy"] + v["dW"] + v["dx"]
            cudnn_total = t["fwd"] + t["dgrad"] + t["wgrad"]
            row = {"shape": name, "geometry": shape_text(c, o, h, k, s, p),
                   "precision": precision, "vouch_us": v, "cudnn_us": t,
                   "ratio_fwd": v["fwd"] / t["fwd"],
                   "ratio_dx": (v["dx"] + v["dy"]) / t["dgrad"],
                   "ratio_dW": v["dW"] / t["wgrad"],
                   "ratio_total": vouch_total / cudnn_total,
                   "vouch_total_us": vouch_total, "cudnn_total_us": cudnn_total}
            row["meets_target"] = row["ratio_total"] <= 1.3
            rows.append(row)
            print("%-9s %-4s vouch fwd %8.1f dy %7.1f dW %8.1f dx %8.1f | cuDNN fwd %8.1f "
                  "dgrad %8.1f wgrad %8.1f | ratio %.2f%s" %
                  (name, precision, v["fwd"], v["dy"], v["dW"], v["dx"], t["fwd"], t["dgrad"],
                   t["wgrad"], row["ratio_total"], "" if v["unknown"] == 0 else
                   "  (UNKNOWN launches: %.1f us)" % v["unknown"]), flush=True)
    lines = ["| conv | shape | precision | vouch fwd / dx (+dy) / dW µs | cuDNN fwd / dgrad / "
             "wgrad µs | fwd × | dx × | dW × | total × | ≤ 1.3 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        v, t = r["vouch_us"], r["cudnn_us"]
        lines.append("| %s | %s | %s | %.0f / %.0f (+%.0f) / %.0f | %.0f / %.0f / %.0f | %.2f | "
                     "%.2f | %.2f | **%.2f** | %s |" %
                     (r["shape"], r["geometry"], r["precision"], v["fwd"], v["dx"], v["dy"],
                      v["dW"], t["fwd"], t["dgrad"], t["wgrad"], r["ratio_fwd"], r["ratio_dx"],
                      r["ratio_dW"], r["ratio_total"], "yes" if r["meets_target"] else "no"))
    table = "\n".join(lines)
    print(table)
    met = sum(r["meets_target"] for r in rows)
    print("conv shapes: %d of %d within 1.3x of cuDNN (vouch us / cuDNN us, ratio x: lower "
          "is better for vouch)" % (met, len(rows)))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    unknown = [r for r in rows if r["vouch_us"]["unknown"] > 0]
    return 1 if unknown else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    pk = sub.add_parser("package", help="build each shape's executables (build machine)")
    pk.add_argument("out")
    pk.add_argument("--vouch", default="bazel-bin/tools/vouch")
    rn = sub.add_parser("run", help="time them against cuDNN (GPU machine)")
    rn.add_argument("dir")
    rn.add_argument("--runs", type=int, default=3, help="profiled steps per executable")
    rn.add_argument("--reps", type=int, default=20, help="timed calls per cuDNN pass")
    rn.add_argument("--json")
    rn.add_argument("--markdown")
    cl = sub.add_parser("classify", help="one --profile-launches file's µs per pass")
    cl.add_argument("file")
    ck = sub.add_parser("check-rules", help="classify each shape's compiled steps (no GPU)")
    ck.add_argument("out")
    ck.add_argument("--vouch", default="bazel-bin/tools/vouch")
    args = ap.parse_args()
    if args.cmd == "check-rules":
        return check_rules(args)
    if args.cmd == "package":
        package(args)
        return 0
    if args.cmd == "classify":
        print(json.dumps(classify(read_launches(args.file)), indent=1))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
