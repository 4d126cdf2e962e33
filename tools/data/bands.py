#!/usr/bin/env -S /usr/bin/python3
"""TorchLean's 4x4 band images (its quickstart CNN's data) as npy files, for
examples/quickstart_cnn.vouch.

TorchLean's NN/API/Data/Bands: single-channel 4x4 images of a band two pixels
thick (1.0 on the band, 0.0 off it); class 0 a vertical band (columns o and
o + 1), class 1 a horizontal one (rows o and o + 1), at offsets o = 0, 1, 2:
the vertical bands first, then the horizontal ones, six images in all.

usage: bands.py OUT_DIR
writes OUT_DIR/x.npy (float32 [6, 1, 4, 4]) and OUT_DIR/labels.npy (int32 [6])
"""
import os
import sys

import numpy as np

SIZE, THICKNESS, OFFSETS = 4, 2, (0, 1, 2)


def band(vertical, offset):
    image = np.zeros((1, SIZE, SIZE), np.float32)
    if vertical:
        image[0, :, offset:offset + THICKNESS] = 1.0
    else:
        image[0, offset:offset + THICKNESS, :] = 1.0
    return image


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    samples = [(band(True, o), 0) for o in OFFSETS] + [(band(False, o), 1) for o in OFFSETS]
    np.save(os.path.join(out, "x.npy"), np.stack([x for x, _ in samples]))
    np.save(os.path.join(out, "labels.npy"), np.array([y for _, y in samples], np.int32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
