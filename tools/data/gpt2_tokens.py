#!/usr/bin/env -S /usr/bin/python3
"""Token windows for examples/gpt2_124m.vouch and the GPT-2 race
(tools/bench/gpt2.py), as npy files: ROWS windows of CONTEXT + 1 token ids
drawn uniformly from GPT-2's vocabulary of 50257 by splitmix64 (seed 2028,
splitmix.py; no numpy generator), split into ids (the first CONTEXT) and
labels (the next token at each position). Random tokens: the race measures
speed, and a model can do no better than log(50257) = 10.82 on them.

usage: gpt2_tokens.py OUT_DIR [ROWS [CONTEXT]]   (default 32 rows of 1024)
writes OUT_DIR/{ids,labels}.npy (int32 [ROWS, CONTEXT])
"""
import os
import sys

import numpy as np

from splitmix import draws

VOCAB = 50257


def main():
    if len(sys.argv) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    context = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    os.makedirs(out, exist_ok=True)
    it = draws(2028, rows * (context + 1))
    windows = np.array([[next(it) % VOCAB for _ in range(context + 1)]
                        for _ in range(rows)], np.int32)
    np.save(os.path.join(out, "ids.npy"), windows[:, :-1].copy())
    np.save(os.path.join(out, "labels.npy"), windows[:, 1:].copy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
