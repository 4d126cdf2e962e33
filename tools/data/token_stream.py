#!/usr/bin/env -S /usr/bin/python3
"""A synthetic token stream as an llm.c shard, for the token-stream models
(tests/gpu/ops_tokens.vouch): N uint16 ids in [0, V) drawn by splitmix64
(splitmix.py, so the file does not depend on numpy's generators), each id
more likely to follow its predecessor by one (a stream a model can learn).
The shard: 256 little-endian int32 (magic 20240520, version 1, N, zeros),
then the N ids as little-endian uint16 (llm.c's dev/data/data_common.py).

usage: token_stream.py OUT_FILE N V [SEED]   (default seed 2026)
"""
import os
import sys

import numpy as np

from splitmix import draws


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 1
    out, n, v = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 2026
    it = draws(seed, n)
    ids, prev = [], 0
    for _ in range(n):
        d = next(it)
        prev = (prev + 1) % v if d % 4 else (d >> 8) % v
        ids.append(prev)
    header = np.zeros(256, np.int32)
    header[:3] = 20240520, 1, n
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "wb") as f:
        f.write(header.astype("<i4").tobytes())
        f.write(np.array(ids, "<u2").tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
