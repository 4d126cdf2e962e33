#!/usr/bin/env python3
"""The differential test: generated models, compiled and trained, against the
float64 reference interpreter.

For each seed, gen_model.py writes a random valid model and its data; then

  1. `vouch build` compiles it for cpu;
  2. the executable trains it in float64 (--dtype f64) for 0, 1, ..., K steps
     from the same seed, saving the params after each (p_0 .. p_K), its trace
     (every step's loss) and its predictions (--predict) at p_0 and p_K;
  3. the reference (reference.cpp) runs the interpreter on step k's batch at
     p_k: its loss, its outputs, the gradients of the model differentiated by
     vouch-autodiff and run by the interpreter, and central finite
     differences of its loss;

and these must agree, each within a tolerance printed on failure:
  - the trace's loss of step k and the interpreter's (relative 1e-10);
  - the predictions at p_0 and p_K and the interpreter's outputs (1e-10);
  - the executable's gradient of step k, (p_k - p_{k+1}) / lr (plain SGD),
    and the interpreter's autodiff gradient (1e-9 of the largest);
  - the autodiff gradient and the finite differences (1e-5), where the two
    one-sided differences agree (elsewhere the loss has a kink there: relu at
    0, a tie of max, an index that moves).

usage: difftest.py [--vouch PATH] [--reference PATH] [--seeds A-B|A,B,...]
                   [--work DIR] [--keep] [--fd N] [--max-seconds S]
Prints a line per model and "difftest: N models, N agree, N disagree" (with
--max-seconds, no model is started after S seconds: N counts those run);
exit status 1 when any disagrees (its directory is kept and named).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            seeds += list(range(int(a), int(b) + 1))
        else:
            seeds.append(int(part))
    return seeds


class Mismatch(Exception):
    pass


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Mismatch("%s failed (exit %d): %s\n%s" % (what, p.returncode, " ".join(cmd),
                                                         (p.stderr or p.stdout)[-2000:]))
    return p.stdout


def read_params(path):
    """safetensors written by the executable (F64), by name."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F64", e
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype="<f8").copy()
    return out


def read_trace(path):
    losses = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "step":
                losses[int(parts[1])] = float(parts[2])
    return losses


def close(a, b, rel, what, scale=None):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise Mismatch("%s: shapes %s and %s" % (what, a.shape, b.shape))
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    err = np.abs(a - b)
    bad = ~(err <= rel * scale)  # NaN counts as bad
    if np.any(bad):
        i = int(np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1)))
        raise Mismatch("%s: element %d: %.17g versus %.17g (|diff| %.3g > tolerance %.3g = "
                       "%.0e x %.3g)" % (what, i, a.flat[i], b.flat[i], err.flat[i],
                                         rel * scale, rel, scale))


def check_model(seed, args, work):
    d = os.path.join(work, "seed_%d" % seed)
    shutil.rmtree(d, ignore_errors=True)
    run([sys.executable, os.path.join(HERE, "gen_model.py"), str(seed), d], "gen_model.py")
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    model = os.path.join(d, "model.vouch")
    exe = os.path.join(d, "model")
    run([args.vouch, "build", model, "-o", exe], "vouch build")
    K, lr = meta["steps"], meta["lr"]
    common = [exe, "--device", "cpu", "--dtype", "f64", "--seed", str(seed), "--data",
              meta["data"], "--no-progress", "--log-every", "1"]
    params, preds = [], {}
    for k in range(K + 1):
        cmd = common + ["--steps", str(k), "--save-params", os.path.join(d, "p%d.st" % k),
                        "--trace", os.path.join(d, "trace%d.txt" % k)]
        if k in (0, K):
            cmd += ["--predict", meta["inputs"], "--predict-out", os.path.join(d, "pred%d.npy" % k)]
        run(cmd, "the executable (--steps %d)" % k)
        params.append(read_params(os.path.join(d, "p%d.st" % k)))
        if k in (0, K):
            preds[k] = np.load(os.path.join(d, "pred%d.npy" % k))
    trace = read_trace(os.path.join(d, "trace%d.txt" % K))
    B = meta["batch"]

    def reference(k, batch_index, fd, plain_step=None):
        cmd = [args.reference, model, "--params", os.path.join(d, "p%d.st" % k), "--data",
               meta["data"], "--batch-index", str(batch_index), "--fd", str(fd), "--seed",
               str(seed)]
        if plain_step is not None:
            cmd += ["--plain-step", str(plain_step)]
        return json.loads(run(cmd, "the reference (p%d, batch %d)" % (k, batch_index)))

    checked = {"fd": 0, "kinks": 0}
    for k in range(K):
        ref = reference(k, k, args.fd)
        close([trace[k]], [ref["loss"]], 1e-10, "step %d's loss (trace vs interpreter)" % k)
        for name, p in params[k].items():
            g_exe = (p - params[k + 1][name]) / lr
            g_ref = np.asarray(ref["grads"].get(name, np.zeros_like(p)))
            scale = max(1.0, float(np.max(np.abs(g_ref))) if g_ref.size else 1.0)
            close(g_exe, g_ref, 1e-9, "step %d: d loss / d %s (executable vs interpreter's "
                  "autodiff)" % (k, name), scale)
            fd = ref["fd"].get(name)
            if not fd:
                continue
            for i, c, plus, minus in zip(fd["index"], fd["central"], fd["plus"], fd["minus"]):
                i = int(i)
                if abs(plus - minus) > 1e-4 * (1 + abs(c)):
                    checked["kinks"] += 1
                    continue
                checked["fd"] += 1
                if not abs(c - g_ref[i]) <= 1e-5 * (1 + abs(g_ref[i])):
                    raise Mismatch(
                        "step %d: d loss / d %s[%d]: autodiff %.17g, central finite difference "
                        "%.17g (one-sided %.17g, %.17g; tolerance 1e-5 x (1 + |autodiff|))"
                        % (k, name, i, g_ref[i], c, plus, minus))
    # --predict's forwards are not training steps: dropout is the identity and
    # the other random ops draw with the steps done (0, then K).
    for k in (0, K):
        for b in range(K):
            ref = reference(k, b, 0, plain_step=k)
            close(preds[k][b * B:(b + 1) * B].ravel(), np.asarray(ref["outputs"][meta["output"]]),
                  1e-10, "the predictions at p%d, batch %d" % (k, b))
    return meta, checked, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vouch", default=os.path.join(ROOT, "bazel-bin/tools/vouch"))
    ap.add_argument("--reference",
                    default=os.path.join(ROOT, "bazel-bin/tests/differential/reference"))
    ap.add_argument("--seeds", default="1-30")
    ap.add_argument("--work", default=None)
    ap.add_argument("--keep", action="store_true", help="keep every model's directory")
    ap.add_argument("--fd", type=int, default=6,
                    help="finite differences per parameter (spread over its elements)")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no model after this many seconds (a long run's bound)")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="vouch-difftest-")
    os.makedirs(work, exist_ok=True)
    seeds = parse_seeds(args.seeds)
    agree, disagree, ops = 0, [], {}
    fd_total = kinks = 0
    start = time.time()
    asked = len(seeds)
    for n, seed in enumerate(seeds):
        if args.max_seconds and time.time() - start > args.max_seconds:
            seeds = seeds[:n]
            print("stopped after %d of %d seeds (--max-seconds %g)" % (n, asked,
                                                                      args.max_seconds))
            break
        t0 = time.time()
        try:
            meta, checked, d = check_model(seed, args, work)
        except Mismatch as e:
            disagree.append(seed)
            print("seed %d: DISAGREE: %s\n  (kept: %s)" % (seed, e,
                  os.path.join(work, "seed_%d" % seed)), flush=True)
            continue
        agree += 1
        fd_total += checked["fd"]
        kinks += checked["kinks"]
        for op in meta["ops"]:
            ops[op] = ops.get(op, 0) + 1
        print("seed %d: agree (%.1f s; batch %d, %d fd checks, %d kinks skipped; %s)"
              % (seed, time.time() - t0, meta["batch"], checked["fd"], checked["kinks"],
                 " ".join(meta["ops"])), flush=True)
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    print("ops exercised (models using each): " +
          ", ".join("%s %d" % (k, v) for k, v in sorted(ops.items())))
    print("finite-difference checks: %d (%d skipped at kinks); %.0f s" % (fd_total, kinks,
                                                                           time.time() - start))
    print("difftest: %d models, %d agree, %d disagree%s" % (
        len(seeds), agree, len(disagree),
        " (seeds %s)" % ",".join(map(str, disagree)) if disagree else ""))
    if not disagree and not args.work and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
