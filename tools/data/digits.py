#!/usr/bin/env -S /usr/bin/python3
"""The 8x8 handwritten digits (1,797 images) shipped by Debian's python3-sklearn,
as npy files for vouch's examples: pixels scaled to [0, 1] (f32, [rows, 64]) and
class labels (int32, [rows]).

The rows are shuffled by a splitmix64 Fisher-Yates with seed 2026 (splitmix.py,
so the split does not depend on numpy's generators), then split into
train (the first 1,440 rows: 45 batches of 32) and test (the other 357).

usage: digits.py OUT_DIR [CSV_GZ]
writes OUT_DIR/{train,test}_{x,y}.npy; exits 1 with the reason when the
source is missing or malformed.
"""
import gzip
import os
import sys

import numpy as np

from splitmix import splitmix64

SOURCE = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
TRAIN_ROWS = 1440


def shuffled(n, seed):
    order = list(range(n))
    state = seed
    for i in range(n - 1, 0, -1):
        state, r = splitmix64(state)
        j = r % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    source = sys.argv[2] if len(sys.argv) == 3 else SOURCE
    if not os.path.exists(source):
        print("digits.py: %s not found (install python3-sklearn: tools/setup.sh does)"
              % source, file=sys.stderr)
        return 1
    rows = []
    with gzip.open(source, "rt") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.strip().split(",")
            if len(fields) != 65:
                print("digits.py: %s:%d: expected 65 columns, found %d"
                      % (source, lineno, len(fields)), file=sys.stderr)
                return 1
            values = [float(v) for v in fields]
            if not all(0 <= v <= 16 and v == int(v) for v in values[:64]) or \
                    values[64] not in range(10):
                print("digits.py: %s:%d: pixels must be integers 0..16 and the label 0..9"
                      % (source, lineno), file=sys.stderr)
                return 1
            rows.append(values)
    if len(rows) != 1797:
        print("digits.py: %s: expected 1797 rows, found %d" % (source, len(rows)),
              file=sys.stderr)
        return 1
    rows = [rows[i] for i in shuffled(len(rows), 2026)]
    x = np.array([r[:64] for r in rows], dtype=np.float32) / np.float32(16)
    y = np.array([int(r[64]) for r in rows], dtype=np.int32)
    os.makedirs(out_dir, exist_ok=True)
    for name, array in (("train_x", x[:TRAIN_ROWS]), ("train_y", y[:TRAIN_ROWS]),
                        ("test_x", x[TRAIN_ROWS:]), ("test_y", y[TRAIN_ROWS:])):
        path = os.path.join(out_dir, name + ".npy")
        tmp = path + ".tmp"
        np.save(tmp, array)
        os.replace(tmp + ".npy" if os.path.exists(tmp + ".npy") else tmp, path)
    print("digits: %d train, %d test rows -> %s" % (TRAIN_ROWS, len(rows) - TRAIN_ROWS, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
