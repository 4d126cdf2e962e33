#!/usr/bin/env -S /usr/bin/python3
"""Synthetic bags of token ids for the embedding / gather / scatter_add models
(tests/gpu/ops_embedding.vouch, examples/embedding_bag.vouch), as npy files.

Rows of four int32 ids in [0, 16) drawn by splitmix64 (seed 2026, splitmix.py,
so the files do not depend on numpy's generators); the label (int32, one
of 4 classes) is the class of the row's first id, id % 4; `cols` holds two
int32 column indices in [0, 8) per row, `y` two f32 regression targets in
[-1, 1) per row. 256 rows.

usage: tokens.py OUT_DIR
writes OUT_DIR/{ids,labels,cols,y}.npy
"""
import os
import sys

import numpy as np

from splitmix import draws, uniform_pm1

ROWS, IDS, VOCAB, CLASSES, COLS, WIDTH = 256, 4, 16, 4, 2, 8


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    it = draws(2026, ROWS * (IDS + COLS + COLS))
    ids = np.array([[next(it) % VOCAB for _ in range(IDS)] for _ in range(ROWS)], np.int32)
    cols = np.array([[next(it) % WIDTH for _ in range(COLS)] for _ in range(ROWS)], np.int32)
    y = np.array([[uniform_pm1(next(it)) for _ in range(COLS)]
                  for _ in range(ROWS)], np.float32)
    np.save(os.path.join(out, "ids.npy"), ids)
    np.save(os.path.join(out, "labels.npy"), (ids[:, 0] % CLASSES).astype(np.int32))
    np.save(os.path.join(out, "cols.npy"), cols)
    np.save(os.path.join(out, "y.npy"), y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
