#!/usr/bin/env python3
"""The GPT-2 race (issue 11), run on the GPU machine: a training step of
GPT-2 small (examples/gpt2_124m.vouch: vocab 50257, 12 layers, 12 heads, 768
wide, context 1024) in vouch's executable against PyTorch eager and
torch.compile, same initial weights (the executable's --init-only
--save-params), same batches (the token windows of tools/data/gpt2_tokens.py,
in file order), same optimizer (AdamW lr 6e-4, betas (0.9, 0.999), eps 1e-8,
weight decay 0.01 on the matrices only: vouch's adamw with decay_min_rank = 2),
batch 8.

Per precision (fp32: TF32 off; tf32: cuBLAS may round GEMM inputs to TF32;
bf16: torch's autocast) and contender it prints the median ms per step over
the steps after warm-up (the loss read on the host every 10 steps), tokens/s,
the peak device memory, and for torch.compile its first step's time (the
compilation). vouch's bf16 is `--precision bf16`: the fused attention's and
the GEMMs' products with bf16 operands (each rounded to bf16 once, stored as
bf16 where only products read it: the layer_norm outputs, dlogits, the
attention's qkv), f32 sums and f32 storage otherwise, not autocast's bf16
activations: its row says so. It also checks that the
contenders train the same model: vouch's first losses against eager's in fp32.

usage: gpt2.py --exe GPT2_EXE [--exe-tf32 GPT2_TF32_EXE] [--exe-bf16 GPT2_BF16_EXE]
               --data IDS.npy,LABELS.npy
               [--steps N] [--precisions fp32,tf32,bf16] [--out RESULTS.json]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from race_common import allow_tf32, read_safetensors, timed_steps, vouch_run

HEADS = 12
LR, BETAS, EPS, WEIGHT_DECAY = 6e-4, (0.9, 0.999), 1e-8, 0.01
LOG_EVERY = 10


def gpt2_loss(p, ids, labels, layers):
    """GPT-2 as examples/gpt2_124m.vouch writes it, in PyTorch's idioms."""
    n, t = ids.shape
    d = p["wte"].shape[1]
    h = F.embedding(ids, p["wte"]) + p["wpe"]
    for k in range(layers):
        w = lambda name: p["layer.%d.%s" % (k, name)]
        a = F.layer_norm(h, [d], w("gain_attn"), w("b_attn_ln"), eps=1e-5)
        q, kk, v = F.linear(a, w("w_qkv"), w("b_qkv")).split(d, dim=-1)
        q, kk, v = (x.view(n, t, HEADS, d // HEADS).transpose(1, 2) for x in (q, kk, v))
        o = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
        h = h + F.linear(o.transpose(1, 2).reshape(n, t, d), w("w_proj"), w("b_proj"))
        m = F.layer_norm(h, [d], w("gain_mlp"), w("b_mlp_ln"), eps=1e-5)
        m = F.gelu(F.linear(m, w("w_fc"), w("b_fc")), approximate="tanh")
        h = h + F.linear(m, w("w_out"), w("b_out"))
    logits = F.linear(F.layer_norm(h, [d], p["gain_f"], p["b_f"], eps=1e-5), p["wte"])
    return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


def torch_run(init, ids, labels, batch, steps, precision, compiled):
    """(median ms/step, peak MiB, first step s, first losses) of PyTorch."""
    allow_tf32(torch, precision == "tf32")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    layers = sum(1 for k in init if k.endswith(".w_qkv"))
    p = {k: v.cuda().requires_grad_() for k, v in init.items()}
    # decay_min_rank = 2: weight decay on the matrices only.
    groups = [{"params": [v for v in p.values() if v.dim() >= 2]},
              {"params": [v for v in p.values() if v.dim() < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY,
                            fused=True)
    loss_fn = torch.compile(gpt2_loss) if compiled else gpt2_loss
    ids, labels = ids.cuda(), labels.cuda()

    def step(rows):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = loss_fn(p, ids[rows], labels[rows], layers)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    ms, first, losses = timed_steps(step, steps, batch, ids.shape[0], LOG_EVERY,
                                    torch.cuda.synchronize)
    peak = torch.cuda.max_memory_allocated() / 2**20
    del p, opt
    return ms, peak, first, losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", required=True)
    ap.add_argument("--exe-tf32", help="a --precision tf32 build")
    ap.add_argument("--exe-bf16", help="a --precision bf16 build")
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--precisions", default="fp32,tf32,bf16")
    ap.add_argument("--out")
    args = ap.parse_args()
    # PyTorch's median is over the LOG_EVERY-step intervals after the first
    # (timed_steps): fewer steps would leave none and print nan.
    if args.steps < 2 * LOG_EVERY + 1:
        ap.error("--steps must be at least %d: the median is over the intervals of %d "
                 "steps after the first" % (2 * LOG_EVERY + 1, LOG_EVERY))

    work = tempfile.mkdtemp()
    init_path = os.path.join(work, "init.st")
    subprocess.run([args.exe, "--init-only", "--dtype", "f32", "--save-params", init_path],
                   check=True, capture_output=True)
    init = read_safetensors(init_path, torch.float32)
    ids_path, labels_path = args.data.split(",")
    ids = torch.tensor(np.load(ids_path).astype(np.int64))
    labels = torch.tensor(np.load(labels_path).astype(np.int64))
    tokens = args.batch * ids.shape[1]
    print("GPT-2 race: %d params, batch %d x %d tokens, %d steps, torch %s, %s" % (
        sum(v.numel() for v in init.values()), args.batch, ids.shape[1], args.steps,
        torch.__version__, torch.cuda.get_device_name()))
    results = []

    def row(precision, who, ms, peak, extra=""):
        results.append({"precision": precision, "who": who, "ms_per_step": ms,
                        "tokens_per_s": tokens / ms * 1e3 if ms == ms else None,
                        "peak_mib": peak, "note": extra})
        print("  %-5s %-14s %9.2f ms/step %10.0f tok/s  peak %8.0f MiB  %s" % (
            precision, who, ms, tokens / ms * 1e3, peak, extra), flush=True)

    for precision in args.precisions.split(","):
        exe = {"fp32": args.exe, "tf32": args.exe_tf32, "bf16": args.exe_bf16}.get(precision)
        vouch_losses = None
        if exe:
            ms, peak, vouch_losses, _ = vouch_run(exe, args.data, args.steps, work, LOG_EVERY)
            row(precision, "vouch", ms, peak,
                "bf16 products (operands rounded once), f32 storage but for bf16 operands"
                if precision == "bf16" else "")
        else:
            print("  %-5s %-14s not measured: no executable given" % (precision, "vouch"),
                  flush=True)
        ms, peak, first, eager_losses = torch_run(init, ids, labels, args.batch, args.steps,
                                                  precision, compiled=False)
        row(precision, "torch eager", ms, peak)
        ms, peak, first, _ = torch_run(init, ids, labels, args.batch, args.steps,
                                       precision, compiled=True)
        row(precision, "torch.compile", ms, peak, "first step (compile) %.1f s" % first)
        if vouch_losses and precision == "fp32":
            err = max(abs(a - b) / abs(b) for a, b in zip(vouch_losses, eager_losses))
            ok = err <= 1e-4
            print("  fp32 losses, steps 0-2: vouch %s, eager %s: max rel. diff %.2e (%s)" % (
                ["%.6f" % x for x in vouch_losses], ["%.6f" % x for x in eager_losses], err,
                "same model" if ok else "MISMATCH"), flush=True)
            results.append({"fp32_first_losses_rel_diff": err})
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
