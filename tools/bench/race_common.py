"""What the races (gpt2.py, cnn.py, conv_shapes.py) share: reading vouch's
checkpoints, medians, and running a vouch executable to read its timing, peak
memory and first losses. The race packages copy it beside them."""
import json
import os
import re
import subprocess
import time

import numpy as np


def read_safetensors(path, as_dtype):
    """{name: torch tensor of as_dtype} of a safetensors file (params, then state)."""
    import torch
    blob = open(path, "rb").read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        stored = {"F32": np.float32, "F64": np.float64}[e["dtype"]]
        a = np.frombuffer(blob[8 + n + begin:8 + n + end], dtype=stored)
        out[name] = torch.tensor(a.reshape(e["shape"])).to(as_dtype)
    return out


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def vouch_run(exe, data, steps, work, log_every, device="cuda", dtype="f32", flags=()):
    """(median ms/step, peak MiB, the first 3 steps' losses, output) of a vouch
    executable trained `steps` steps on `data` with --time and --mem-stats; the
    median is NaN when too few steps were timed."""
    trace = os.path.join(work, "trace.txt")
    out = subprocess.run([exe, "--device", device, "--dtype", dtype, "--steps", str(steps),
                          "--log-every", str(log_every), "--time", "--mem-stats",
                          "--data", data, "--trace", trace] + list(flags),
                         check=True, capture_output=True, text=True)
    text = out.stdout + out.stderr
    timing = re.search(r"timing: median ([0-9.]+) ms/step", text)
    ms = float(timing.group(1)) if timing else float("nan")
    # --mem-stats: "cuda allocator: ... peak_live_bytes=N ..."
    peak = re.search(r"peak_live_bytes=([0-9]+)", text)
    peak_mib = int(peak.group(1)) / 2**20 if peak else float("nan")
    losses = []
    for line in open(trace):
        key, *rest = line.split()
        if key == "step" and int(rest[0]) < 3:
            losses.append(float(rest[1]))
    return ms, peak_mib, losses, text


def allow_tf32(torch, enabled):
    """Lets cuBLAS and cuDNN round f32 products' inputs to TF32 (the tf32 rows), or not."""
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled


def timed_steps(step, steps, batch, rows, log_every, synchronize):
    """Runs step(batch_rows) -> loss for `steps` training steps over the data's
    batches in file order (rows // batch of them), reading the loss on the host
    every `log_every` steps as vouch's executables do. Returns (median ms/step
    over the intervals between reads after the first, the first step's seconds
    (compilation, for torch.compile), the first 3 losses)."""
    batches = rows // batch
    times, losses, first = [], [], None
    synchronize()
    t0 = time.perf_counter()
    for k in range(steps):
        b = k % batches
        loss = step(slice(b * batch, (b + 1) * batch))
        if k < 3:
            losses.append(loss.item())
        if k == 0:
            synchronize()
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
        elif k % log_every == 0:
            loss.item()
            t1 = time.perf_counter()
            times.append((t1 - t0) * 1e3 / log_every)
            t0 = t1
    return median(times[1:]), first, losses
