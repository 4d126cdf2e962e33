#!/usr/bin/env python3
"""The CNN race (issue 12), run on the GPU machine: a training step of a
ResNet-18 for CIFAR-shaped data (tools/bench/resnet18_cifar.vouch: 3 x 32 x 32,
10 classes, batch 256) in vouch's executable against PyTorch eager (cuDNN) and
torch.compile, same initial weights (the executable's --init-only
--save-params), same batches (tools/data/cifar_synthetic.py, in file order),
same optimizer (SGD lr 0.1, momentum 0.9, weight decay 5e-4), batch norm in
training mode with its running statistics updated as torch does.

Per precision (fp32: TF32 off for cuBLAS and cuDNN; tf32: both may round
their products' inputs to TF32) and contender it prints the median ms per step
over the steps after warm-up (the loss read on the host every 10 steps),
images/s, the peak device memory, and for torch.compile its first step's time
(the compilation); then vouch's speed-up over each torch contender (their
ms/step over vouch's) and its peak memory over theirs. It also checks that the contenders train the same model:
vouch's first fp32 losses against eager's.

--device cpu runs both on the CPU (torch eager only: torch.compile where torch
has it) to check, without a GPU, that the two models are the same: build the
executable with a small batch (`vouch build tools/bench/resnet18_cifar.vouch
--batch 4 -o r18`), give cnn.py that --batch and a few rows of data, and
--dtype f64 for float64 on both (their first losses then agree to ~1e-15).

usage: cnn.py --exe EXE [--exe-tf32 EXE_TF32] --data X.npy,LABELS.npy
              [--steps N] [--batch B] [--precisions fp32,tf32] [--out RESULTS.json]
              [--device cuda|cpu] [--dtype f32|f64]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from race_common import allow_tf32, read_safetensors, timed_steps, vouch_run

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 5e-4
BN_EPS, BN_MOMENTUM = 1e-5, 0.1
LOG_EVERY = 10
# The block instances in the order the model calls them (resnet18_cifar.vouch),
# named as vouch names their params: <block>.<k>.<param>, k counting the
# instances of that block from 0 (docs/language.md, Blocks).
BLOCKS = ["basic64.0", "basic64.1", "down128.0", "basic128.0", "down256.0", "basic256.0",
          "down512.0", "basic512.0"]


def state_name(weight, which):
    """The running statistic vouch keeps for the batch_norm whose weight is
    `weight` (docs/language.md: state is named after the weight param)."""
    return "%s.%s" % (weight, which)


def resnet_loss(p, s, x, labels):
    """ResNet-18 as tools/bench/resnet18_cifar.vouch writes it, in PyTorch's idioms."""
    def bn(h, g, b):
        return F.batch_norm(h, s[state_name(g, "running_mean")], s[state_name(g, "running_var")],
                            p[g], p[b], training=True, momentum=BN_MOMENTUM, eps=BN_EPS)

    h = F.relu(bn(F.conv2d(x, p["w_stem"], padding=1), "g_stem", "b_stem"))
    for block in BLOCKS:
        w = lambda name: block + "." + name
        down = block.startswith("down")
        stride = 2 if down else 1
        a = F.relu(bn(F.conv2d(h, p[w("w1")], stride=stride, padding=1), w("g1"), w("b1")))
        a = bn(F.conv2d(a, p[w("w2")], padding=1), w("g2"), w("b2"))
        shortcut = bn(F.conv2d(h, p[w("ws")], stride=2), w("gs"), w("bs")) if down else h
        h = F.relu(a + shortcut)
    logits = F.linear(torch.flatten(F.avg_pool2d(h, 4), 1), p["w_fc"], p["b_fc"])
    return F.cross_entropy(logits, labels)


def ratio(a, b):
    return a / b if b else float("nan")


def torch_run(init, x, labels, batch, steps, precision, compiled, device):
    """(median ms/step, peak MiB, first step s, first losses) of PyTorch."""
    if device == "cuda":
        allow_tf32(torch, precision == "tf32")
        torch.backends.cudnn.benchmark = True
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    p = {k: v.to(device).requires_grad_() for k, v in init.items()
         if not k.endswith((".running_mean", ".running_var"))}
    s = {k: v.to(device) for k, v in init.items()
         if k.endswith((".running_mean", ".running_var"))}
    opt = torch.optim.SGD(list(p.values()), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    loss_fn = torch.compile(resnet_loss) if compiled else resnet_loss
    x, labels = x.to(device), labels.to(device)

    def step(rows):
        loss = loss_fn(p, s, x[rows], labels[rows])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    ms, first, losses = timed_steps(step, steps, batch, x.shape[0], LOG_EVERY,
                                    torch.cuda.synchronize if device == "cuda" else lambda: None)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else float("nan")
    del p, s, opt
    return ms, peak, first, losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", required=True)
    ap.add_argument("--exe-tf32", help="a --precision tf32 build")
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--precisions", help="default fp32,tf32 on cuda, fp32 on cpu")
    ap.add_argument("--out")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32",
                    help="f64: both in float64 (a check of the model on cpu, not a race)")
    args = ap.parse_args()
    precisions = args.precisions or ("fp32,tf32" if args.device == "cuda" else "fp32")
    dtype = {"f32": torch.float32, "f64": torch.float64}[args.dtype]

    work = tempfile.mkdtemp()
    init_path = os.path.join(work, "init.st")
    subprocess.run([args.exe, "--init-only", "--dtype", args.dtype, "--save-params", init_path],
                   check=True, capture_output=True)
    init = read_safetensors(init_path, dtype)
    x_path, labels_path = args.data.split(",")
    x = torch.tensor(np.load(x_path)).to(dtype)
    labels = torch.tensor(np.load(labels_path).astype(np.int64))
    where = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print("CNN race: ResNet-18 (CIFAR), %d params, batch %d of 3x32x32, %d steps, %s, torch %s, %s"
          % (sum(v.numel() for k, v in init.items() if "running" not in k), args.batch,
             args.steps, args.dtype, torch.__version__, where), flush=True)
    results = []

    measured = {}  # (precision, who) -> (ms/step, peak MiB)

    def row(precision, who, ms, peak, extra=""):
        measured[precision, who] = (ms, peak)
        results.append({"precision": precision, "who": who, "ms_per_step": ms,
                        "images_per_s": args.batch / ms * 1e3 if ms == ms else None,
                        "peak_mib": peak, "note": extra})
        print("  %-5s %-14s %9.2f ms/step %10.0f img/s  peak %8.0f MiB  %s" % (
            precision, who, ms, args.batch / ms * 1e3, peak, extra), flush=True)

    # The "same model" bound on the first losses' relative difference: f32
    # rounding through 3 steps of two implementations (cuDNN's and cuBLAS's
    # algorithms differ), or float64's.
    same_bound = 1e-3 if args.dtype == "f32" else 1e-12
    mismatch = False
    for precision in precisions.split(","):
        exe = {"fp32": args.exe, "tf32": args.exe_tf32}.get(precision)
        vouch_losses = None
        if exe:
            ms, peak, vouch_losses, _ = vouch_run(exe, args.data, args.steps, work, LOG_EVERY,
                                                  args.device, args.dtype, ["--no-eval"])
            row(precision, "vouch", ms, peak)
        else:
            print("  %-5s %-14s not measured: no executable given" % (precision, "vouch"),
                  flush=True)
        ms, peak, _, eager_losses = torch_run(init, x, labels, args.batch, args.steps, precision,
                                              False, args.device)
        row(precision, "torch eager", ms, peak, "cuDNN" if args.device == "cuda" else "cpu")
        if hasattr(torch, "compile"):
            ms, peak, first, _ = torch_run(init, x, labels, args.batch, args.steps, precision,
                                           True, args.device)
            row(precision, "torch.compile", ms, peak, "first step (compile) %.1f s" % first)
        else:
            print("  %-5s %-14s not measured: torch %s has no torch.compile" % (
                precision, "torch.compile", torch.__version__), flush=True)
        # vouch against each torch contender: speed-up (their ms/step over
        # vouch's: > 1 means vouch is faster) and peak memory (vouch's over theirs).
        if (precision, "vouch") in measured:
            ms, peak = measured[precision, "vouch"]
            for who in ("torch eager", "torch.compile"):
                if (precision, who) not in measured:
                    continue
                their_ms, their_peak = measured[precision, who]
                speedup, memory = ratio(their_ms, ms), ratio(peak, their_peak)
                print("  %-5s vouch vs %-13s %6.2fx speed (their ms / vouch's), "
                      "%6.2fx peak memory (vouch's / theirs)" % (precision, who, speedup,
                                                                memory), flush=True)
                results.append({"precision": precision, "vouch_vs": who,
                                "speedup": speedup, "memory_ratio": memory})
        if vouch_losses and precision == "fp32":
            err = max(abs(a - b) / abs(b) for a, b in zip(vouch_losses, eager_losses))
            mismatch |= err > same_bound
            print("  %s losses, steps 0-2: vouch %s, eager %s: max rel. diff %.2e (%s, "
                  "bound %.0e)" % (args.dtype, ["%.15g" % v for v in vouch_losses],
                                   ["%.15g" % v for v in eager_losses], err,
                                   "same model" if err <= same_bound else "MISMATCH",
                                   same_bound), flush=True)
            results.append({"fp32_first_losses_rel_diff": err})
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
