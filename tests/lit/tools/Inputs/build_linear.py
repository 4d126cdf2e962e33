"""Times `vouch build` of `repeat N { h = relu(h) + h * 0.5 }` at two sizes and fails when the larger takes more than LIMIT times the smaller's
CPU time, for vouch alone (its passes: parse, autodiff, plan, gate, storage plan,
tables) and for vouch and g++ together (linear: at most LARGE / SMALL, less where
fixed costs weigh; the quadratic storage plan and the per-node arrays g++ folded
pairwise gave several times that). CPU time (user + sys of vouch and g++), not
wall time: a loaded CI machine slows both sizes alike. Also checks that the
generated C++ outside the tables' string literal is the same length at both
sizes: no code, no array, no declaration per op (what made g++ super-linear).

usage: build_linear.py VOUCH REPO WORKDIR SMALL LARGE LIMIT
"""
import os
import resource
import subprocess
import sys

vouch, repo, work, small, large, limit = sys.argv[1:7]
small, large, limit = int(small), int(large), float(limit)
os.makedirs(work, exist_ok=True)


def model(n):
    path = os.path.join(work, f"rep{n}.vouch")
    with open(path, "w") as f:
        f.write(f"""model rep{n} {{
  data regression_grid(lo = -1, hi = 1, n = 5)
  input x : f32[batch, 2]
  target y : f32[batch, 1]
  param w1 : f32[8, 2] = xavier_uniform
  param b1 : f32[8] = zeros
  param w2 : f32[1, 8] = xavier_uniform
  param b2 : f32[1] = zeros
  h = linear(x, w1, b1)
  repeat {n} {{ h = relu(h) + h * 0.5 }}
  pred = linear(h, w2, b2)
  output pred
  loss = mse_loss(pred, y)
  train adam(lr = 0.03) batch 1 steps 2 log_every 1
}}
""")
    return path


def cpu_seconds(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build(n):
    source = os.path.join(work, f"rep{n}.cpp")
    seconds = cpu_seconds([vouch, "build", model(n), "--emit=cpp", "-o", source])
    compiler = seconds
    # The executable's two parts as vouch build compiles them (cpu target).
    for part in (1, 2):
        seconds += cpu_seconds(["g++", "-std=c++20", "-O2", "-fno-math-errno",
                                "-ffp-contract=off", f"-DVOUCH_PART={part}", "-I", repo,
                                "-c", source, "-o", os.path.join(work, f"rep{n}.{part}.o")])
    with open(source) as f:
        code = [line for line in f if not line.startswith('  "')]
    return compiler, seconds, sum(len(line) for line in code)


small_vouch, small_seconds, small_code = build(small)
large_vouch, large_seconds, large_code = build(large)
print(f"N={small}: {small_vouch:.2f} s CPU in vouch, {small_seconds:.2f} s with g++, "
      f"{small_code} bytes of C++ outside the tables")
print(f"N={large}: {large_vouch:.2f} s CPU in vouch, {large_seconds:.2f} s with g++, "
      f"{large_code} bytes of C++ outside the tables")
ok = True
for what, ratio in (("vouch", large_vouch / small_vouch),
                    ("vouch and g++", large_seconds / small_seconds)):
    print(f"{what}: ratio {ratio:.1f} for {large // small}x the ops (limit {limit})")
    if ratio > limit:
        print(f"FAIL: {what} grows faster than linearly ({ratio:.1f} > {limit})")
        ok = False
# The header comment names the model (rep1000 / rep10000) and the tables' byte
# count: allow a few bytes of difference, never a line per op.
if abs(large_code - small_code) > 64:
    print("FAIL: the C++ outside the tables grows with the ops")
    ok = False
print("build-linear: ok" if ok else "build-linear: failed")
sys.exit(0 if ok else 1)
