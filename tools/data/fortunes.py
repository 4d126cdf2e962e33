#!/usr/bin/env -S /usr/bin/python3
"""English text of Debian's `fortunes` package as character tokens, for
examples/char_gpt.vouch (no network: the package's files under
/usr/share/games/fortunes; tools/setup.sh installs it).

Every fortune file (not the .dat indexes, the .u8 links or the ascii-art
collection; a symbolic link is read once, by its target) in name order, the
`%` separator lines dropped (a blank line instead), tabs as spaces, other
characters outside printable ASCII and newline removed. The vocabulary is the
characters that remain, sorted by code point (token 0 is the newline).
The text is cut into windows of CONTEXT + 1 characters, CONTEXT apart: the
first CONTEXT are a row of ids, the last CONTEXT the labels (each position's
next character). About the last tenth of the windows is held out: the
training windows are the first multiple of 256 at or below nine tenths (so
any batch dividing 256 takes them whole), the rest are held out.

The same two parts of the text also go to llm.c token shards (256 int32 of
header: magic 20240520, version 1, the token count; then uint16 tokens), for
`data tokens(...)`: train.bin holds the training windows' tokens (windows
* CONTEXT + 1 of them, so its sequential windows of CONTEXT + 1 are exactly
the training rows), test.bin the held-out windows' likewise.

usage: fortunes.py OUT_DIR [CONTEXT]   (default 256)
writes OUT_DIR/{train_ids,train_labels,test_ids,test_labels}.npy (int32
[rows, CONTEXT]), OUT_DIR/{train,test}.bin (llm.c shards of uint16 tokens) and
OUT_DIR/vocab.json (a JSON array of the characters), and prints the
vocabulary's size (the model's V).
"""
import json
import os
import sys

import numpy as np

SOURCE = "/usr/share/games/fortunes"


def text_of_package():
    seen, parts = set(), []
    for name in sorted(os.listdir(SOURCE)):
        path = os.path.join(SOURCE, name)
        real = os.path.realpath(path)
        if (name.endswith((".dat", ".u8")) or name == "ascii-art" or not os.path.isfile(real)
                or real in seen):
            continue
        seen.add(real)
        with open(real, "rb") as f:
            raw = f.read().decode("latin-1")
        lines = ["" if line.strip() == "%" else line.replace("\t", " ")
                 for line in raw.split("\n")]
        parts.append("".join(c for c in "\n".join(lines) if c == "\n" or " " <= c <= "~"))
    return "\n".join(parts)


def write_shard(path, tokens):
    """llm.c's token shard (dev/data/data_common.py, "gpt-2"): a header of 256
    int32 (magic 20240520, version 1, the token count), then uint16 tokens."""
    assert tokens.max() < 2**16
    header = np.zeros(256, np.int32)
    header[:3] = 20240520, 1, len(tokens)
    with open(path, "wb") as f:
        f.write(header.astype("<i4").tobytes())
        f.write(tokens.astype("<u2").tobytes())


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    context = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    if not os.path.isdir(SOURCE):
        print("fortunes.py: %s is missing: install Debian's `fortunes` package "
              "(tools/setup.sh does)" % SOURCE, file=sys.stderr)
        return 1
    text = text_of_package()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    tokens = np.array([index[c] for c in text], np.int32)
    count = (len(tokens) - 1) // context
    windows = np.stack([tokens[w * context:w * context + context + 1] for w in range(count)])
    train = (count - count // 10) // 256 * 256
    os.makedirs(out, exist_ok=True)
    for split, rows in (("train", windows[:train]), ("test", windows[train:])):
        np.save(os.path.join(out, split + "_ids.npy"), rows[:, :-1].copy())
        np.save(os.path.join(out, split + "_labels.npy"), rows[:, 1:].copy())
    for split, first, end in (("train", 0, train), ("test", train, count)):
        write_shard(os.path.join(out, split + ".bin"),
                    tokens[first * context:end * context + 1])
    with open(os.path.join(out, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    print(len(vocab))
    return 0


if __name__ == "__main__":
    sys.exit(main())
