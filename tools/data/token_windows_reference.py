#!/usr/bin/env -S /usr/bin/python3
"""An independent implementation of the token stream's window order
(docs/language.md, "Training and data": `data tokens(...)`), for the tests:
runtime/tokens_test.cc pastes its output, tests/BUILD.bazel's token test
writes the npy rows of the same windows with it.

usage: token_windows_reference.py random N T SEED STEP ROWS
         prints the window starts of rows 0..ROWS-1 of step STEP (order = random)
       token_windows_reference.py sequential N T BATCH STEP
         prints the window starts of step STEP's rows (order = sequential)
"""
import sys

M64 = (1 << 64) - 1


def mix(x):
    """splitmix64's output function of x + 0x9e3779b97f4a7c15, uint64."""
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


TOKENS = int.from_bytes(b"tokens", "big")  # the stream's ordinal, 0x746f6b656e73


def random_start(n, t, seed, step, row):
    key = mix(seed ^ mix(TOKENS))
    stream = mix((key + step) & M64)
    return mix((stream + row) & M64) % (n - t)


def sequential_start(n, t, batch, step, row):
    windows = (n - 1) // t
    return ((step * batch + row) % windows) * t


def main():
    args = sys.argv[1:]
    if len(args) == 6 and args[0] == "random":
        n, t, seed, step, rows = (int(a) for a in args[1:])
        print(" ".join(str(random_start(n, t, seed, step, r)) for r in range(rows)))
    elif len(args) == 5 and args[0] == "sequential":
        n, t, batch, step = (int(a) for a in args[1:])
        print(" ".join(str(sequential_start(n, t, batch, step, r)) for r in range(batch)))
    else:
        print(__doc__, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
