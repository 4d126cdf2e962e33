#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/<target>/).

Run from anywhere: `python3 tests/fuzz/make_seeds.py`. The seeds are committed;
this script says how they were made, and remakes them byte for byte (numpy's
.npy writer, Python's struct and json for safetensors). Reproducers of crashes
found and fixed are added beside them by hand (crash-<sha1>), never by this
script.
"""
import io
import json
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npy_seeds():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((5, 3))
    write("npy", "f8_5x3.npy", npy(x))
    write("npy", "f4_5x3.npy", npy(x.astype("<f4")))
    write("npy", "i4_labels.npy", npy(np.arange(7, dtype="<i4")))
    write("npy", "i8_2x2.npy", npy(np.array([[1, -2], [3, 2**40]], dtype="<i8")))
    write("npy", "u1_4.npy", npy(np.array([0, 1, 255, 7], dtype="|u1")))
    write("npy", "b1_mask.npy", npy(np.array([[True, False], [False, True]])))
    write("npy", "scalar_0d.npy", npy(np.float64(2.5)))
    write("npy", "rank3.npy", npy(rng.standard_normal((2, 2, 3))))
    write("npy", "empty_0x3.npy", npy(np.zeros((0, 3))))
    write("npy", "v2_header.npy", npy(x, version=(2, 0)))
    write("npy", "nan_inf.npy", npy(np.array([[1.0, np.nan], [np.inf, -np.inf]])))
    write("npy", "fortran.npy", npy(np.asfortranarray(x)))
    write("npy", "big_endian.npy", npy(x.astype(">f8")))
    write("npy", "unsupported_u2.npy", npy(np.arange(4, dtype="<u2")))
    write("npy", "truncated_data.npy", npy(x)[:-5])
    write("npy", "truncated_header.npy", npy(x)[:40])
    write("npy", "trailing_bytes.npy", npy(x) + b"\0\0\0\0")


def csv_seeds():
    # The first two bytes choose the columns: 1 + b0 % 3 inputs, 1 + b1 % 2 outputs.
    def cols(i, o):
        return bytes([i - 1, o - 1])
    write("csv", "xy_2_1.csv", cols(2, 1) + b"0.5,-1,2\n1e-3,+4,5.\n")
    write("csv", "header.csv", cols(1, 1) + b"x,y\n1,2\n3,4\n")
    write("csv", "bom_crlf.csv", cols(1, 1) + b"\xef\xbb\xbfx,y\r\n1,2\r\n\r\n3,4\r\n")
    write("csv", "blank_lines_spaces.csv", cols(2, 2) + b"\n 1 ,\t2, 3 ,4\n\n5,6,7,8")
    write("csv", "nan_first_row.csv", cols(1, 1) + b"nan,1\n2,3\n")
    write("csv", "inf_later.csv", cols(1, 1) + b"1,2\n-inf,3\n")
    write("csv", "plus_minus.csv", cols(1, 1) + b"+-1,2\n")
    write("csv", "wrong_columns.csv", cols(3, 2) + b"1,2,3,4,5\n1,2,3\n")
    write("csv", "header_only.csv", cols(1, 1) + b"a,b\n")
    write("csv", "tiny_and_huge.csv", cols(1, 1) + b"1e-400,1e-310\n1e308,2\n")
    write("csv", "long_field.csv", cols(1, 1) + b"1," + b"9" * 5000 + b"\n")
    write("csv", "nul_bytes.csv", cols(1, 1) + b"1,\x002\n")


def safetensors(tensors, metadata=None, pad=True, header_delta=0):
    header, data, offset = {}, b"", 0
    for name, dtype, shape, values in tensors:
        raw = np.asarray(values, dtype="<f8" if dtype == "F64" else "<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text) + header_delta) + text + data


def safetensors_seeds():
    w = [[0.5, -1.0, 2.0], [0.25, 3.0, -0.125]]
    b = [1.0, 2.0, 3.0]
    write("safetensors", "w_b_f64.safetensors",
          safetensors([("w", "F64", [2, 3], w), ("b", "F64", [3], b)], {"format": "vouch"}))
    write("safetensors", "w_b_f32.safetensors",
          safetensors([("w", "F32", [2, 3], w), ("b", "F32", [3], b)]))
    write("safetensors", "scalar_and_empty.safetensors",
          safetensors([("s", "F64", [], 1.5), ("e", "F32", [0, 4], np.zeros((0, 4)))]))
    write("safetensors", "unexpected_names.safetensors",
          safetensors([("w", "F64", [3, 2], np.ones((3, 2))), ("x.y", "F32", [1], [7.0])]))
    write("safetensors", "nan_param.safetensors",
          safetensors([("w", "F64", [2, 3], [[np.nan, 1, 2], [3, np.inf, 5]]),
                       ("b", "F64", [3], b)]))
    write("safetensors", "header_short_by_one.safetensors",
          safetensors([("w", "F64", [2, 3], w)], header_delta=-1))
    write("safetensors", "truncated.safetensors",
          safetensors([("w", "F64", [2, 3], w), ("b", "F64", [3], b)])[:-9])
    write("safetensors", "escaped_name.safetensors",
          safetensors([("w\u00e9\\n\"", "F32", [1], [1.0])], {"k": "v"}))
    write("safetensors", "not_json.safetensors", struct.pack("<Q", 8) + b"{\"w\":[1,")
    write("safetensors", "bf16_dtype.safetensors",
          struct.pack("<Q", 56) + b'{"w":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}' + b"\0\0")


def train_flags_seeds():
    lines = {
        "train.txt": "--device\ncpu\n--steps=10\n--seed\n2026\n--dtype\nf64\n--log-every=5",
        "data_eval.txt": "--data\nx.npy,y.npy\n--eval=t.npy,u.npy\n--eval-every\n3\n--no-shuffle",
        "predict.txt": "--predict\nx.npy\n--predict-out=out.npy\n--steps\n0",
        "sample.txt": "--sample\n20\n--temperature=0.7\n--prompt\nhello\n--vocab\nv.json",
        "params.txt": "--load-params=p.safetensors\n--save-params\nq.safetensors\n--allow-nonfinite",
        "switches.txt": "--init-only\n--show-tape\n--show-backend\n--mem-stats\n--no-cuda-graph\n"
                        "--deterministic\n--time\n--audit-launches\n--profile\n--progress",
        "help.txt": "--help",
        "bad_values.txt": "--steps\n-1\n--seed=18446744073709551616\n--temperature\nnan",
        "contradictions.txt": "--eval\nx.npy\n--no-eval\n--eval-every=2",
        "missing_value.txt": "--trace\n--device=tpu",
    }
    for name, text in lines.items():
        write("train_flags", name, text)


def frontend_seeds():
    for f in ["quickstart_mlp", "residual_mlp", "index_mlp", "masked_attention_mlp",
              "tiny_gpt", "digits_rnn", "schedule_mlp", "dropout_mlp"]:
        shutil.copy(os.path.join(ROOT, "examples", f + ".vouch"),
                    os.path.join(HERE, "frontend", f + ".vouch"))
    shutil.copy(os.path.join(ROOT, "frontend", "testdata", "tour.vouch"),
                os.path.join(HERE, "frontend", "tour.vouch"))
    write("frontend", "errors.vouch",
          "model m {\n  input x : f32[batch, 2]\n  param w : f32[3, 2] = xavier\n"
          "  h = rlu(linear(x, w))\n  loss = mse_loss(h, h\n  train adan(lr = -1) steps 0\n}\n")
    write("frontend", "bom_crlf.vouch",
          "\ufeffmodel m {\r\n  input x : f32[batch, 2]\r\n  target y : f32[batch, 1]\r\n"
          "  param w : f32[1, 2] = uniform(-1, 1)\r\n  loss = mse_loss(linear(x, w), y)\r\n"
          "  train sgd(lr = 0.1) batch 2 steps 3\r\n}\r\n")


if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "frontend"), exist_ok=True)
    npy_seeds()
    csv_seeds()
    safetensors_seeds()
    train_flags_seeds()
    frontend_seeds()
