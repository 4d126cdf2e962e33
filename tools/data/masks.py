#!/usr/bin/env -S /usr/bin/python3
"""Synthetic masked rows for the masked_softmax models (tests/gpu/ops_mask.vouch,
examples/masked_attention_mlp.vouch), as npy files.

128 rows of 8 f32 features in [-1, 1), a numpy-bool (|b1) mask of 8 per row and
two f32 regression targets, drawn by splitmix64 (seed 2027, splitmix.py, so
the files do not depend on numpy's generators). Each mask element is true with
probability 1/2, and every 8th row (rows 3, 11, 19, ...) is fully blocked, so
the models meet rows that keep nothing. `keep` is one bool per row (false on
every 5th row) for a mask broadcast along a row. The targets: the mean of the
kept features and the first feature's sign-weighted square, so the mask matters.

usage: masks.py OUT_DIR
writes OUT_DIR/{x,mask,keep,y}.npy
"""
import os
import sys

import numpy as np

from splitmix import draws, uniform_pm1

ROWS, WIDTH = 128, 8


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    it = draws(2027, ROWS * WIDTH * 2)
    x = np.array([[uniform_pm1(next(it)) for _ in range(WIDTH)]
                  for _ in range(ROWS)], np.float32)
    mask = np.array([[next(it) >> 63 == 1 for _ in range(WIDTH)] for _ in range(ROWS)],
                    np.bool_)
    mask[3::8, :] = False
    keep = np.array([[r % 5 != 0] for r in range(ROWS)], np.bool_)
    kept = mask.sum(1)
    mean = np.where(kept > 0, (x * mask).sum(1) / np.maximum(kept, 1), 0)
    y = np.stack([mean, np.sign(x[:, 0]) * x[:, 0] ** 2], 1).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "mask.npy"), mask)
    np.save(os.path.join(out, "keep.npy"), keep)
    np.save(os.path.join(out, "y.npy"), y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
