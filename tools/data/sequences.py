#!/usr/bin/env -S /usr/bin/python3
"""Synthetic token sequences for the tiny GPT models (examples/tiny_gpt.vouch,
examples/tiny_gpt_padded.vouch, tests/gpu/ops_attention.vouch), as npy files.

A sequence counts through a vocabulary of 12 tokens from a drawn start by a
drawn step (1, 2 or 3): tokens (start + t·step) mod 12, so the next token is
predictable once two are seen. Each of the 256 rows holds one sequence of a
drawn length 5..8 in a context of 8, padded with the pad token 12 (draws by
splitmix64, seed 2027, splitmix.py, so the files do not depend on numpy's
generators).

- ids.npy, labels.npy (int32 [256, 8]): right-padded; the label at t is the
  token at t + 1, -100 (cross_entropy's ignore_index) past the sequence.
- left_ids.npy, left_labels.npy, left_mask.npy: the same sequences padded on
  the left; left_mask (bool [256, 8, 8]) lets query i see key j when j <= i
  and key j is no pad, so a pad query sees no key (a fully blocked row).

usage: sequences.py OUT_DIR
"""
import os
import sys

import numpy as np

from splitmix import draws

ROWS, CONTEXT, VOCAB, PAD, IGNORE = 256, 8, 12, 12, -100


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    it = draws(2027, ROWS * 3)
    ids = np.full((ROWS, CONTEXT), PAD, np.int32)
    labels = np.full((ROWS, CONTEXT), IGNORE, np.int32)
    left_ids = np.full((ROWS, CONTEXT), PAD, np.int32)
    left_labels = np.full((ROWS, CONTEXT), IGNORE, np.int32)
    left_mask = np.zeros((ROWS, CONTEXT, CONTEXT), np.bool_)
    for r in range(ROWS):
        start, step = next(it) % VOCAB, 1 + next(it) % 3
        length = 5 + next(it) % (CONTEXT - 4)
        seq = [(start + t * step) % VOCAB for t in range(length)]
        pad = CONTEXT - length
        ids[r, :length] = seq
        labels[r, :length - 1] = seq[1:]
        left_ids[r, pad:] = seq
        left_labels[r, pad:CONTEXT - 1] = seq[1:]
        for i in range(CONTEXT):
            for j in range(pad, i + 1):
                left_mask[r, i, j] = True
    for name, array in [("ids", ids), ("labels", labels), ("left_ids", left_ids),
                        ("left_labels", left_labels), ("left_mask", left_mask)]:
        np.save(os.path.join(out, name + ".npy"), array)
    return 0


if __name__ == "__main__":
    sys.exit(main())
