#!/usr/bin/env python3
"""The first performance race, run on the GPU machine (tools/gpu_suite.sh
packages it): a training step of vouch's executable vs PyTorch eager and
torch.compile, same model, same initial weights (read from the executable's
--init-only --save-params), same batch, same precision (f32, TF32 off), in
one run, in two modes raced fairly:
  sync:  every contender reads each step's loss on the host (vouch with
         --log-every 1, PyTorch with loss.item() every step);
  async: no per-step host sync for anyone (vouch logs every 100 steps and
         keeps the losses on the device between; PyTorch calls loss.item()
         every 100 steps only).
Prints ms/step (median over intervals after warm-up) and ratios.

usage: bench.py NAME EXECUTABLE STEPS
"""
import re
import subprocess
import sys
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def read_safetensors(path):
    # compare.py (tests/gpu, packaged beside this file) reads the format.
    from compare import params
    return {name: torch.tensor(values, dtype=torch.float32).reshape(shape)
            for name, (shape, values) in params(path, with_shapes=True).items()}


def grid(n):
    xs = [-1 + 2 * i / (n - 1) for i in range(n)]
    x = torch.tensor([[xs[r // n], xs[r % n]] for r in range(n * n)])
    a, b = x[:, 0], x[:, 1]
    y = (0.8 * torch.relu(a + b) - 0.4 * torch.relu(b - a) + 0.2)[:, None]
    return x, y


MODELS = {  # name: (layer names, grid n, batch, Adam lr)
    "quickstart_mlp": (["w1", "w2"], 5, 1, 0.03),
    "wide_mlp": (["w0", "w1", "w2", "w3", "w4"], 64, 4096, 1e-4),
}


def torch_step_ms(name, params, steps, compiled, interval):
    """Median ms/step over intervals of `interval` steps, the loss read on
    the host at the end of each interval (interval 1: every step)."""
    layers, n, batch, lr = MODELS[name]
    x, y = grid(n)
    x, y = x.cuda(), y.cuda()
    ws = [params[k].cuda().requires_grad_() for k in layers]
    bs = [params["b" + k[1:]].cuda().requires_grad_() for k in layers]

    def forward(xb):
        h = xb
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = torch.nn.functional.linear(h, w, b)
            if i + 1 < len(ws):
                h = torch.relu(h)
        return h

    f = torch.compile(forward) if compiled else forward
    opt = torch.optim.Adam(ws + bs, lr=lr, fused=compiled)
    batches = x.shape[0] // batch
    times = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for k in range(steps):
        b = k % batches
        opt.zero_grad(set_to_none=True)
        loss = torch.mean((f(x[b * batch:(b + 1) * batch]) - y[b * batch:(b + 1) * batch]) ** 2)
        loss.backward()
        opt.step()
        if (k + 1) % interval == 0:
            loss.item()
            t1 = time.perf_counter()
            times.append((t1 - t0) * 1e3 / interval)
            t0 = t1
    warm = min(10, len(times) // 5)
    t = sorted(times[warm:])
    return t[len(t) // 2]


def vouch_step_ms(exe, steps, interval):
    out = subprocess.run([exe, "--device", "cuda", "--dtype", "f32", "--steps", str(steps),
                          "--log-every", str(interval), "--time"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"timing: median ([0-9.]+) ms/step", out).group(1))


def main():
    name, exe, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    subprocess.run([exe, "--init-only", "--dtype", "f32", "--save-params", "/tmp/init.st"], check=True)
    params = read_safetensors("/tmp/init.st")
    for mode, interval in (("sync", 1), ("async", 100)):
        if steps < 5 * interval:
            continue
        vouch = vouch_step_ms(exe, steps, interval)
        eager = torch_step_ms(name, params, steps, False, interval)
        compiled = torch_step_ms(name, params, steps, True, interval)
        print("bench %-15s %-5s vouch %9.4f ms/step | eager %9.4f (%.2fx) | torch.compile %9.4f (%.2fx)"
              % (name, mode, vouch, eager, eager / vouch, compiled, compiled / vouch))
    print("  (ratios > 1: vouch is faster; torch %s, %s)" % (torch.__version__,
                                                            torch.cuda.get_device_name()))


if __name__ == "__main__":
    main()
