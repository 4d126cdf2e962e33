#!/usr/bin/env python3
"""The row order of a shuffled epoch (the train clause's `shuffle = true`),
written from its description in docs/language.md, independently of
runtime/cuda/kernels/shuffle.h, with Python integers. The golden tests use it
to feed PyTorch the batches vouch trains on; `shuffle_test` checks vouch's
orders against values printed by this script.

usage: shuffle_reference.py ROWS SEED EPOCH   # prints the epoch's order
"""
import functools
import sys

M64 = (1 << 64) - 1


def mix(x):
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


@functools.lru_cache(maxsize=4)  # a golden run asks for each epoch's order every step
def order(rows, seed, epoch):
    """[shuffled_row(p) for p in range(rows)]."""
    bits = max(0, (rows - 1).bit_length())
    half = (bits + 1) // 2
    mask = (1 << half) - 1
    key = mix(mix(seed) ^ epoch)
    round_keys = [mix((key + r) & M64) for r in range(4)]

    def f(x):  # a four-round Feistel network on 2 * half bits
        left, right = x >> half, x & mask
        for k in round_keys:
            left, right = right, left ^ (mix(k ^ right) & mask)
        return (left << half) | right

    out = []
    for p in range(rows):
        x = f(p)
        while x >= rows:
            x = f(x)
        out.append(x)
    return out


def batch_rows(step, batch, num_batches, seed):
    """The rows of training step `step` (as the executables pick them)."""
    epoch, b = divmod(step, num_batches)
    o = order(num_batches * batch, seed, epoch)
    return o[b * batch:(b + 1) * batch]


if __name__ == "__main__":
    rows, seed, epoch = (int(a) for a in sys.argv[1:4])
    print(" ".join(str(r) for r in order(rows, seed, epoch)))
