#!/usr/bin/env -S /usr/bin/python3
"""Synthetic CIFAR-shaped data for the CNN race (tools/bench/resnet18_cifar.vouch,
tools/bench/cnn.py), as npy files: ROWS images of 3 x 32 x 32 float32 pixels
uniform in [-1, 1) and int32 labels in [0, 10), drawn by splitmix64 (seed 2029,
splitmix.py; no numpy generator). The race measures speed: the labels are
noise, so no model learns them.

usage: cifar_synthetic.py OUT_DIR [ROWS]   (default 512)
writes OUT_DIR/x.npy (float32 [ROWS, 3, 32, 32]) and OUT_DIR/labels.npy (int32 [ROWS])
"""
import os
import sys

import numpy as np

from splitmix import draws


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    os.makedirs(out, exist_ok=True)
    pixels = rows * 3 * 32 * 32
    it = draws(2029, pixels + rows)
    u = np.fromiter((next(it) for _ in range(pixels + rows)), np.uint64, pixels + rows)
    x = ((u[:pixels] >> np.uint64(40)).astype(np.float64) / 2.0**24 * 2 - 1).astype(np.float32)
    labels = (u[pixels:] % np.uint64(10)).astype(np.int32)
    np.save(os.path.join(out, "x.npy"), x.reshape(rows, 3, 32, 32))
    np.save(os.path.join(out, "labels.npy"), labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
