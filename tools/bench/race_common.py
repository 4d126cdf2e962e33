"""What the races (gpt2.py, cnn.py, conv_shapes.py) share: reading vouch's
checkpoints, medians, and running a vouch executable to read its timing, peak
memory and first losses. The race packages copy it beside them."""
import json
import os
import re
import subprocess

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
