#!/usr/bin/env python3
"""Independent PyTorch (float64) reference for vouch's golden tests.

Given a vouch executable's initial params (safetensors), its per-step loss
trace and its final params, this recomputes everything with PyTorch and
compares: the initial weights against BRIEF.md's splitmix64/Xavier semantics
(computed here, from scratch), every step's loss, the mean losses, and the
final params. Shares no code with vouch. Prints the largest error per
quantity and exits 1 on any value beyond the declared tolerance.

usage: torch_reference.py MODEL INIT.safetensors TRACE FINAL.safetensors STEPS SEED [DATA]
       torch_reference.py --forward MODEL PARAMS.safetensors INTERPRETER_OUTPUT [DATA]
       torch_reference.py --sample MODEL PARAMS.safetensors OUTPUT N TEMPERATURE SEED

DATA (models trained on files): the inputs' and targets' .npy files, comma-separated
in declaration order, as the executable's --data takes them.
"""
import json
import math
import os
import struct
import sys

import torch


def batch_rows(step, batch, num_batches, seed):
    """The rows of a shuffled step: tools/data/shuffle_reference.py, the order
    written from docs/language.md in Python (found beside this file's folder in
    the source tree and in Bazel's runfiles; only the shuffled models need it)."""
    data_tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "tools", "data")
    if data_tools not in sys.path:  # once, not on every step
        sys.path.insert(0, data_tools)
    import shuffle_reference
    return shuffle_reference.batch_rows(step, batch, num_batches, seed)


TOLERANCE = 1e-9  # declared for float64 runs: losses and params, absolute


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F64": "d", "F32": "f"}[entry["dtype"]]
        begin, end = entry["data_offsets"]
        count = (end - begin) // struct.calcsize(fmt)
        values = struct.unpack("<%d%s" % (count, fmt), data[begin:end])
        tensors[name] = torch.tensor(values, dtype=torch.float64).reshape(entry["shape"])
    return tensors


# --- BRIEF.md's reference semantics, written out independently -------------
MASK = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def next_seed(s, c):
    return splitmix64((s + c + 0x9E3779B97F4A7C15) & MASK)


def rand01(seed, idx):
    return (splitmix64((splitmix64(seed) + idx) & MASK) & 0xFFFFFFFF) / 2.0**32


def xavier(seed, out_f, in_f):
    limit = math.sqrt(6.0 / (in_f + out_f))
    return torch.tensor([-limit + rand01(seed, i) * 2 * limit for i in range(out_f * in_f)],
                        dtype=torch.float64).reshape(out_f, in_f)


def regression_grid(lo=-1.0, hi=1.0, n=5):
    xs = [lo + i * (hi - lo) / (n - 1) for i in range(n)]
    x = torch.tensor([[xs[r // n], xs[r % n]] for r in range(n * n)], dtype=torch.float64)
    relu = lambda v: max(v, 0.0)
    y = torch.tensor([[0.8 * relu(a + b) - 0.4 * relu(b - a) + 0.2] for a, b in x.tolist()],
                     dtype=torch.float64)
    return x, y


# --- the models, written as PyTorch users would ------------------------------
def quickstart_forward(p, x):
    h = torch.relu(x @ p["w1"].T + p["b1"])
    return h @ p["w2"].T + p["b2"]


def residual_forward(p, x):
    h = x @ p["w_in"].T + p["b_in"]
    k = 0
    while "residual.%d.w1" % k in p:
        h = h + torch.relu(h @ p["residual.%d.w1" % k].T + p["residual.%d.b1" % k])
        k += 1
    return h @ p["w_out"].T + p["b_out"]


def activations_forward(p, x):
    h = x @ p["w1"].T + p["b1"]
    g = x @ p["w2"].T + p["b2"]
    a = torch.nn.functional.silu(h) + torch.sigmoid(g) * torch.sin(h) - 0.5 * torch.cos(g)
    c = (torch.abs(h) + torch.sqrt(g * g + 1) + torch.log(torch.sigmoid(h) + 0.5) +
         torch.reciprocal(torch.abs(g) + 1))
    d = (torch.maximum(a, 0.3 * c) - torch.minimum(h, torch.relu(h)) +
         0.5 * torch.maximum(g, torch.relu(g)) + a / (c + 2))
    e = (torch.nn.functional.softplus(d, beta=2, threshold=20) +
         0.3 * torch.log(torch.clamp(g, min=0.01)) + torch.clamp(h, -0.5, 0.5) +
         0.2 * torch.pow(a, 3))
    f = e + 0.5 * torch.amax(e, dim=1, keepdim=True) - 0.25 * torch.amin(g, dim=-1, keepdim=True)
    return f @ p["w3"].T + p["b3"]


def slice_forward(p, x):
    gelu = torch.nn.functional.gelu
    h = gelu(x @ p["w1"].T + p["b1"], approximate="tanh")
    g = gelu(x @ p["w2"].T + p["b2"], approximate="none")
    f = torch.cat([h[:, 1::2], g[:, -4:-1], h[:, -3:100], g[:, -100:2]], dim=1)
    return (f + 0.5 * gelu(f, approximate="tanh")) @ p["w3"].T + p["b3"]


def norm_forward(p, x):
    F = torch.nn.functional
    h = x @ p["w1"].T + p["b1"]
    a = F.layer_norm(h, [8], p["gain1"], p["b_shift1"], eps=1e-5)
    sm = torch.softmax(a, dim=-1)
    q = torch.log_softmax(a @ p["w2"].T + p["b2"], dim=1)
    s = torch.softmax(h.reshape(-1, 2, 4), dim=-2).reshape(-1, 8)
    r = F.layer_norm(h + 2 * sm, [8], eps=1e-3)
    e = r + 0.5 * q * sm + s
    return e @ p["w3"].T + p["b3"]


def digits_forward(p, x):
    F = torch.nn.functional
    h = F.layer_norm(x @ p["w1"].T + p["b1"], [64], p["gain"], p["b_shift"], eps=1e-5)
    return dropout(F.gelu(h, approximate="tanh"), 0.1, 0) @ p["w2"].T + p["b2"]


def digits_rnn_forward(p, x):
    """examples/digits_rnn.vouch: PyTorch's GRU cell (torch.gru_cell, what
    torch.nn.GRUCell runs) over the image's 8 rows, from h = 0."""
    h = torch.zeros(x.shape[0], 32, dtype=x.dtype)
    for t in range(8):
        h = torch.gru_cell(x[:, 8 * t:8 * t + 8], h, p["w_ih"], p["w_hh"], p["b_ih"], p["b_hh"])
    return h @ p["w_out"].T + p["b_out"]


def index_forward(p, x):
    """examples/index_mlp.vouch: indices from a truncating cast, torch.gather
    and Tensor.scatter_add along the hidden axis."""
    h = torch.tanh(x @ p["w1"].T + p["b1"])
    idx = ((x + 1) * 1.9).to(torch.int64)  # truncation toward zero, as cast
    g = h.gather(1, idx)
    s = h.scatter_add(1, idx, 0.5 * torch.exp(g))
    return s @ p["w2"].T + p["b2"] + 0.1 * idx.to(x.dtype).sum(1, keepdim=True)


def schedule_forward(p, x):
    h = torch.tanh(x @ p["w1"].T + p["b1"])
    g = torch.relu(h @ p["w2"].T + p["b2"])
    return g @ p["w3"].T + p["b3"]


def warmup_cosine(lr, warmup, total, min_lr):
    """The factor LambdaLR multiplies lr by at step i: runtime/optim.h's lr_at."""
    def factor(i):
        if i < warmup:
            return i / warmup
        p = min(1.0, (i - warmup) / (total - warmup))
        return (min_lr + (lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * p))) / lr
    return factor


# Models trained with another optimizer than Adam, a schedule or clipping, as the
# train clause of examples/<name>.vouch says:
# name -> (make optimizer(params, lr), make scheduler(optimizer) or None, max_norm or None).
def adamw(ps, lr):
    return torch.optim.AdamW(ps, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)


OPTIMIZERS = {
    "digits_mlp": (
        adamw,
        lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(0.001, 100, 1350, 0)),
        None),
    "digits_rnn": (
        adamw,
        lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(0.01, 100, 1800, 0)),
        None),
    "schedule_mlp": (
        lambda ps, lr: torch.optim.AdamW(ps, lr=lr, betas=(0.9, 0.999), eps=1e-8,
                                         weight_decay=0.01),
        lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(0.02, 20, 200, 0.001)),
        0.5),
    # AdamW decaying only the params of rank >= 2 (decay_min_rank = 2), as
    # GPT-2 trains: two parameter groups.
    "tiny_gpt": (
        lambda ps, lr: torch.optim.AdamW(
            [{"params": [p for p in ps if p.dim() >= 2]},
             {"params": [p for p in ps if p.dim() < 2], "weight_decay": 0.0}],
            lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01),
        None, None),
    "rmsprop_mlp": (
        lambda ps, lr: torch.optim.RMSprop(ps, lr=lr, alpha=0.99, eps=1e-8, weight_decay=0,
                                           momentum=0.5, centered=False),
        lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=50, gamma=0.5),
        None),
}


def embedding_bag_forward(p, x):
    F = torch.nn.functional
    return F.embedding(x, p["table"]).mean(1) @ p["w"].T + p["b"]


def heads_forward(p, x):
    """examples/heads_mlp.vouch: torch.matmul's broadcasting does the batches."""
    n = x.shape[0]
    h = torch.tanh(x @ p["w_in"].T + p["b_in"]).reshape(n, 2, 3, 4)
    q = h @ p["wq"]
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    scores = ((q @ h.transpose(-1, -2)) * 0.5).masked_fill(~causal, -math.inf)
    mixed = torch.softmax(scores, dim=-1) @ h
    moved = p["tok"].T @ mixed
    out = moved @ p["per_head"].reshape(2, 4, 2)
    z = out.transpose(-1, -2) @ p["wz"]
    return z.reshape(n, 8) @ p["w_out"].T + p["b_out"]


def tied_bag_forward(p, x):
    """examples/tied_bag.vouch: the table is both the embedding and the head."""
    F = torch.nn.functional
    h = torch.tanh(F.embedding(x, p["table"]).mean(1) @ p["w"].T + p["b"])
    return h @ p["table"].T


def hard_mask_attention(q, k, v, seen):
    """softmax(q·kᵀ/√D) · v over the keys `seen` keeps, as TorchLean's hard
    mask: a query that sees no key gets zeros (and no gradient), where
    masked_fill(-inf) alone would give NaN."""
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    any_seen = seen.any(-1, keepdim=True)
    scores = scores.masked_fill(~seen, -math.inf).masked_fill(~any_seen, 0.0)
    return (torch.softmax(scores, dim=-1) * any_seen) @ v


def tiny_gpt_forward(p, ids, seen=None):
    """examples/tiny_gpt.vouch (causal) and tiny_gpt_padded.vouch (`seen`, the
    data's mask [N, T, T], broadcast over the heads): pre-LayerNorm blocks, a
    fused qkv projection split into 2 heads, GELU (tanh) MLP, tied LM head."""
    F = torch.nn.functional
    n, t = ids.shape
    d, heads = p["wte"].shape[1], 2
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    seen = causal if seen is None else seen[:, None]
    h = F.embedding(ids, p["wte"]) + p["wpe"]
    k = 0
    while "layer.%d.w_qkv" % k in p:
        w = lambda name: p["layer.%d.%s" % (k, name)]
        a = F.layer_norm(h, [d], w("gain_attn"), w("b_attn_ln"), eps=1e-5)
        qkv = a @ w("w_qkv").T + w("b_qkv")
        q, kk, v = (x.reshape(n, t, heads, d // heads).transpose(1, 2)
                    for x in qkv.split(d, dim=-1))
        o = hard_mask_attention(q, kk, v, seen).transpose(1, 2).reshape(n, t, d)
        h = h + o @ w("w_proj").T + w("b_proj")
        m = F.layer_norm(h, [d], w("gain_mlp"), w("b_mlp_ln"), eps=1e-5)
        m = F.gelu(m @ w("w_fc").T + w("b_fc"), approximate="tanh")
        h = h + m @ w("w_out").T + w("b_out")
        k += 1
    return F.layer_norm(h, [d], p["gain_f"], p["b_f"], eps=1e-5) @ p["wte"].T


def token_cross_entropy(logits, labels):
    """Mean over the positions whose label is not -100 (ignore_index)."""
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


def masked_attention_forward(p, xm):
    """xm stacks the features and the 0 / 1 mask ([N, 2, 8], read_npy_fields).
    The hard-mask softmax written here: over the kept positions only, a blocked
    position's weight exactly 0 (no -inf added to the scores), a row keeping
    nothing all zeros (and so no gradient)."""
    x, mask = xm[:, 0], xm[:, 1] > 0.5
    s = x @ p["w1"].T + p["b1"]
    any_kept = mask.any(1, keepdim=True)
    m = torch.where(mask, s, torch.full_like(s, -math.inf)).amax(1, keepdim=True)
    m = torch.where(any_kept, m, torch.zeros_like(m)).detach()
    e = torch.where(mask, torch.exp(torch.where(mask, s, m) - m), torch.zeros_like(s))
    total = e.sum(1, keepdim=True)
    w = torch.where(any_kept, e / torch.where(any_kept, total, torch.ones_like(total)),
                    torch.zeros_like(e))
    return (w * x) @ p["w2"].T + p["b2"]


# Models trained on files, with a loss other than the mean squared error:
# name -> (optimizer, loss(prediction, target)).
# The random ops' generator, written from docs/language.md ("Random ops") with
# numpy uint64 arithmetic (vouch's is runtime/cuda/kernels/counter_rng.h). RNG
# is the context the model's forward draws from: the run seed, the training
# step, and whether this forward is a training step (dropout is the identity
# otherwise; the other random ops draw in every forward).
RNG = {"seed": 0, "step": 0, "training": False}


def rng_u53(seed, ordinal, step, count):
    import numpy
    with numpy.errstate(over="ignore"):
        def mix(x):
            z = numpy.uint64(x) + numpy.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> numpy.uint64(30))) * numpy.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> numpy.uint64(27))) * numpy.uint64(0x94D049BB133111EB)
            return z ^ (z >> numpy.uint64(31))
        stream = mix(mix(numpy.uint64(seed) ^ mix(numpy.uint64(ordinal))) + numpy.uint64(step))
        return mix(stream + numpy.arange(count, dtype=numpy.uint64)) >> numpy.uint64(11)


def drawn(ordinal, shape, p):
    """The elements whose draw falls below p's threshold, as a float64 tensor of 0/1."""
    count = 1
    for extent in shape:
        count *= extent
    u = rng_u53(RNG["seed"], ordinal, RNG["step"], count)
    threshold = int(p * 2.0 ** 53)
    return torch.tensor((u < threshold).astype("float64")).reshape(shape)


def dropout(x, p, ordinal):
    if not RNG["training"]:
        return x
    return x * ((1 - drawn(ordinal, x.shape, p)) * (1.0 / (1.0 - p)))


def rand_uniform(shape, ordinal):
    count = 1
    for extent in shape:
        count *= extent
    u = rng_u53(RNG["seed"], ordinal, RNG["step"], count)
    return torch.tensor(u.astype("float64") * 2.0 ** -53).reshape(shape)


def dropout_forward(p, x):
    h = dropout(torch.tanh(x @ p["w1"].T + p["b1"]), 0.2, 0)
    noise = rand_uniform([x.shape[0], 16], 1)
    g = dropout(torch.tanh(h @ p["w2"].T + p["b2"] + 0.1 * noise), 0.5, 2)
    m = g * (0.5 + drawn(3, [16], 0.75))
    return m @ p["w3"].T + p["b3"]


# --- pooling (examples/pool_digits.vouch) --------------------------------------
def smooth_max_pool(x, kernel, stride, padding, beta):
    """TorchLean's log-sum-exp pooling, (1/beta)·logsumexp(beta·x) over each
    window, written from docs/language.md with torch's own ops: beta·x padded
    with -inf (padded positions take no part), the windows unfolded, then
    torch.logsumexp over each."""
    F = torch.nn.functional
    d = len(kernel)
    pad = []
    for p in reversed(padding):
        pad += [p, p]
    z = F.pad(beta * x, pad, value=-math.inf)
    for a in range(d):
        z = z.unfold(2 + a, kernel[a], stride[a])
    return torch.logsumexp(z.flatten(-d), dim=-1) / beta


def pool_digits_forward(p, x):
    F = torch.nn.functional
    h = F.relu(x @ p["w1"].T + p["b1"]) + p["b_pos"]
    image = h.reshape(-1, 1, 8, 8)
    m = F.max_pool2d(image, 3, stride=2, padding=1)
    c = F.avg_pool2d(image, (2, 3), stride=(2, 1), padding=(1, 1))
    q = smooth_max_pool(image, (2, 2), (2, 2), (0, 0), -1.0)
    a = F.avg_pool1d(h.reshape(-1, 4, 16), 4, stride=3, padding=2, count_include_pad=False)
    l = F.max_pool1d(h.reshape(-1, 2, 32), 5, stride=4, padding=2)
    s = smooth_max_pool(h.reshape(-1, 1, 4, 4, 4), (2, 3, 2), (2, 1, 2), (1, 1, 0), 2.0)
    f = torch.cat([t.flatten(1) for t in (m, c, q, a, l, s)], 1)
    return f @ p["w2"].T + p["b2"]


# --- batch_norm: running statistics as the model's state ---------------------
# vouch names a batch_norm's running statistics after its weight param:
# `<weight>.running_mean` and `<weight>.running_var` are the running_mean and
# running_var buffers of the torch.nn.BatchNorm1d / 2d / 3d module whose
# weight is `<weight>` (state_dict: `<module>.weight` = vouch's `<weight>`,
# `<module>.bias` = its bias param, `<module>.running_mean` =
# `<weight>.running_mean`, `<module>.running_var` = `<weight>.running_var`;
# num_batches_tracked has no counterpart: it only matters for momentum=None).
# vouch's checkpoints hold them after the params. STATE holds them here, and
# F.batch_norm (what the modules call) updates them in place in training
# forwards (RNG["training"]); every other forward reads them.
STATE = {}


def is_state(name):
    return name.endswith(".running_mean") or name.endswith(".running_var")


def batch_norm(x, p, weight, bias=None, momentum=0.1, eps=1e-5):
    return torch.nn.functional.batch_norm(
        x, STATE[weight + ".running_mean"], STATE[weight + ".running_var"], p[weight],
        p[bias] if bias else None, training=RNG["training"], momentum=momentum, eps=eps)


def batchnorm_forward(p, x):
    """examples/batchnorm_mlp.vouch: BatchNorm1d(8) over the image's rows
    ([N, 8, 8], no bias), then BatchNorm1d(32) over the hidden features
    ([N, 32])."""
    rows = batch_norm(x.reshape(-1, 8, 8), p, "bn0", momentum=0.2)
    h = torch.relu(batch_norm(rows.reshape(-1, 64) @ p["w1"].T, p, "bn1", "bn1_shift"))
    return h @ p["w2"].T + p["b2"]


def batchnorm_modules_eval(final, x):
    """The same network after training, evaluated through torch.nn.BatchNorm1d
    modules loaded from vouch's final checkpoint by the state_dict mapping above."""
    modules = {}
    for weight, channels, momentum in (("bn0", 8, 0.2), ("bn1", 32, 0.1)):
        m = torch.nn.BatchNorm1d(channels, momentum=momentum).double()
        bias = final.get(weight + "_shift", torch.zeros(channels, dtype=torch.float64))
        m.load_state_dict({"weight": final[weight], "bias": bias,
                           "running_mean": final[weight + ".running_mean"],
                           "running_var": final[weight + ".running_var"],
                           "num_batches_tracked": torch.tensor(0)})
        modules[weight] = m.eval()
    with torch.no_grad():
        rows = modules["bn0"](x.reshape(-1, 8, 8))
        h = torch.relu(modules["bn1"](rows.reshape(-1, 64) @ final["w1"].T))
        return h @ final["w2"].T + final["b2"]


FILE_MODELS = {
    "digits_mlp": ("adamw", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels, ignore_index=-100)),
    "digits_rnn": ("adamw", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels)),
    "batchnorm_mlp": ("adam", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels)),
    "embedding_bag": ("adam", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels)),
    "tied_bag": ("adam", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels)),
    "masked_attention_mlp": ("adam", lambda pred, y: torch.mean((pred - y) ** 2)),
    "tiny_gpt": ("adamw", token_cross_entropy),
    "tiny_gpt_padded": ("adamw", token_cross_entropy),
    "pool_digits": ("adam", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels)),
}


MODELS = {
    # name: (forward, learning rate, batch); Adam unless FILE_MODELS says otherwise
    "quickstart_mlp": (quickstart_forward, 0.03, 1),
    "residual_mlp": (residual_forward, 0.01, 5),
    "activations_mlp": (activations_forward, 0.01, 5),
    "slice_mlp": (slice_forward, 0.01, 5),
    "norm_mlp": (norm_forward, 0.01, 5),
    "digits_mlp": (digits_forward, 0.001, 32),
    "digits_rnn": (digits_rnn_forward, 0.01, 32),
    "batchnorm_mlp": (batchnorm_forward, 0.003, 32),
    "index_mlp": (index_forward, 0.01, 5),
    "schedule_mlp": (schedule_forward, 0.02, 5),
    "rmsprop_mlp": (schedule_forward, 0.005, 5),
    "embedding_bag": (embedding_bag_forward, 0.05, 32),
    "tied_bag": (tied_bag_forward, 0.05, 32),
    "dropout_mlp": (dropout_forward, 0.01, 5),
    "masked_attention_mlp": (masked_attention_forward, 0.01, 16),
    "heads_mlp": (heads_forward, 0.01, 5),
    "tiny_gpt": (tiny_gpt_forward, 0.01, 16),
    "tiny_gpt_padded": (tiny_gpt_forward, 0.01, 16),
    "pool_digits": (pool_digits_forward, 0.01, 32),
}


# Models whose train clause says `shuffle = true`: step k trains on the rows
# shuffle_reference.batch_rows names (seeded by the run seed).
SHUFFLED = {"digits_mlp", "digits_rnn", "batchnorm_mlp"}


# --- Convolution models (F.conv*d, F.conv_transpose*d) ---------------------
def xavier_receptive(seed, shape):
    """Xavier-uniform of a conv weight [out, in, *kernel] as torch computes the
    fans: fan_in = in·Πkernel, fan_out = out·Πkernel."""
    receptive = 1
    for extent in shape[2:]:
        receptive *= extent
    fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    count = fan_out * shape[1]
    return torch.tensor([-limit + rand01(seed, i) * 2 * limit for i in range(count)],
                        dtype=torch.float64).reshape(shape)


def quickstart_cnn_forward(p, x):
    """examples/quickstart_cnn.vouch: TorchLean's Conv2d(1→3, 2×2) → ReLU → a
    linear classifier over the flattened [3, 3, 3] features."""
    F = torch.nn.functional
    h = torch.relu(F.conv2d(x, p["w_conv"], p["b_conv"]))
    return h.reshape(x.shape[0], -1) @ p["w_out"].T + p["b_out"]


def conv_mix_forward(p, x):
    """examples/conv_mix.vouch: grouped, strided, padded, dilated convolutions
    and transposed convolutions in 1, 2 and 3 spatial dimensions."""
    F = torch.nn.functional
    n = x.shape[0]
    img = torch.tanh(x @ p["w_img"].T + p["b_img"]).reshape(n, 2, 5, 5)
    h1 = torch.tanh(F.conv2d(img, p["w1"], p["b1"], stride=(2, 1), padding=1,
                             dilation=(1, 2), groups=2))
    h2 = torch.tanh(F.conv_transpose2d(h1, p["w2"], p["b2"], stride=2, padding=1,
                                       output_padding=1, groups=2))
    s = torch.tanh(F.conv1d(h2.reshape(n, 8, 9), p["w3"], padding=2, dilation=2))
    v = torch.tanh(F.conv_transpose3d(h2.reshape(n, 1, 4, 3, 6), p["w4"], stride=(1, 2, 1),
                                      dilation=(2, 1, 1)))
    features = torch.cat([s.mean(2), v.mean((2, 3, 4))], dim=1)
    return features @ p["w_out"].T + p["b_out"]


MODELS.update({
    "quickstart_cnn": (quickstart_cnn_forward, 0.03, 2),
    "conv_mix": (conv_mix_forward, 0.01, 5),
})
FILE_MODELS["quickstart_cnn"] = ("adam", lambda logits, labels: torch.nn.functional.cross_entropy(
    logits, labels))
SHUFFLED.add("quickstart_cnn")


# --- CNNs with batch_norm (examples/digits_cnn.vouch, resnet_small.vouch) ------
def digits_cnn_forward(p, x):
    """examples/digits_cnn.vouch: two Conv2d(3×3, padding 1) → BatchNorm2d →
    ReLU → MaxPool2d(2) stages (1 → 16 → 32 channels, 8×8 → 4×4 → 2×2), then a
    linear classifier over the flattened [32, 2, 2] features."""
    F = torch.nn.functional
    image = x.reshape(-1, 1, 8, 8)
    h1 = F.max_pool2d(F.relu(batch_norm(F.conv2d(image, p["w1"], padding=1), p, "bn1",
                                        "bn1_shift")), 2)
    h2 = F.max_pool2d(F.relu(batch_norm(F.conv2d(h1, p["w2"], padding=1), p, "bn2",
                                        "bn2_shift")), 2)
    return torch.flatten(h2, 1) @ p["w3"].T + p["b3"]


def basic_block(p, x, name, stride=1):
    """torchvision's BasicBlock, its params and state named as vouch names a
    block instance's (`<block>.<k>.w1`, …): conv3×3 → bn → relu → conv3×3 →
    bn, plus x, or, where the block has a shortcut weight `ws`, a strided
    conv1×1 → bn (torchvision's downsample); then relu."""
    F = torch.nn.functional
    w = lambda k: name + "." + k
    h = F.relu(batch_norm(F.conv2d(x, p[w("w1")], stride=stride, padding=1), p, w("g1"), w("b1")))
    y = batch_norm(F.conv2d(h, p[w("w2")], padding=1), p, w("g2"), w("b2"))
    if w("ws") in p:
        x = batch_norm(F.conv2d(x, p[w("ws")], stride=stride), p, w("gs"), w("bs"))
    return F.relu(y + x)


def resnet_small_forward(p, x):
    """examples/resnet_small.vouch: a 3×3 stem to 16 channels, two basic blocks,
    a strided block to 32 channels with a 1×1 conv + batch_norm shortcut, one
    basic block, global average pooling, a linear classifier."""
    F = torch.nn.functional
    h = F.relu(batch_norm(F.conv2d(x.reshape(-1, 1, 8, 8), p["w_stem"], padding=1), p,
                          "g_stem", "b_stem"))
    h = basic_block(p, h, "basic16.0")
    h = basic_block(p, h, "basic16.1")
    h = basic_block(p, h, "down32.0", stride=2)
    h = basic_block(p, h, "basic32.0")
    return torch.flatten(F.avg_pool2d(h, 4), 1) @ p["w_fc"].T + p["b_fc"]


def sgd_momentum(ps, lr):
    return torch.optim.SGD(ps, lr=lr, momentum=0.9)


MODELS.update({
    "digits_cnn": (digits_cnn_forward, 0.05, 32),
    "resnet_small": (resnet_small_forward, 0.05, 32),
})
for _name in ("digits_cnn", "resnet_small"):
    FILE_MODELS[_name] = ("sgd", lambda logits, labels: torch.nn.functional.cross_entropy(
        logits, labels))
    OPTIMIZERS[_name] = (sgd_momentum, None, None)
    SHUFFLED.add(_name)


class Fields:
    """Several inputs of different shapes (ids and an attention mask), taken
    by rows together: fields[rows] is the tuple the forward takes after p."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.shape = tensors[0].shape

    def __getitem__(self, rows):
        return tuple(t[rows] for t in self.tensors)


def read_npy(path):
    """An .npy file as torch: integers (ids, labels) as int64, which torch
    indexes with, bools as bool, reals as float64."""
    import numpy
    a = numpy.load(path)
    if a.dtype.kind in "iu":
        return torch.tensor(a.astype(numpy.int64))
    if a.dtype.kind == "b":
        return torch.tensor(a)
    return torch.tensor(a.astype(numpy.float64))


def read_npy_fields(spec):
    """The model's inputs and target from .npy files (numpy, not vouch's loader)."""
    import numpy
    *x_paths, y_path = spec.split(",")
    inputs = [read_npy(f) for f in x_paths]
    if len(inputs) == 2 and inputs[0].shape == inputs[1].shape:
        # Features and a bool mask of one shape: stacked as [N, 2, ...] float64
        # (the mask 0 / 1).
        x = torch.stack([t.to(torch.float64) for t in inputs], 1)
    elif len(inputs) == 1:
        x = inputs[0]
    else:
        x = Fields(inputs)
    return x, read_npy(y_path)


def call(forward, params, inputs):
    """forward(params, inputs), the inputs spread when there are several."""
    return forward(params, *inputs) if isinstance(inputs, tuple) else forward(params, inputs)


# Params initialised to ones whose names do not say gain*: batch_norm weights
# (fnmatch patterns: a block's params are named <block>.<k>.<param>).
ONES = {"batchnorm_mlp": {"bn0", "bn1"}, "digits_cnn": {"bn1", "bn2"},
        "resnet_small": {"g_stem", "*.g1", "*.g2", "*.gs"}}
# Params initialised by kaiming_uniform (the conv weights of the CNNs).
KAIMING = {"digits_cnn": {"w1", "w2"}, "resnet_small": {"w_stem", "*.w1", "*.w2", "*.ws"}}


def named(pname, patterns):
    import fnmatch
    return any(fnmatch.fnmatchcase(pname, pattern) for pattern in patterns)


def kaiming(seed, tensor):
    """torch.nn.init.kaiming_uniform_'s bound (a = 0, fan_in mode, relu's gain),
    its fan computed by torch (for a conv weight [out, in, *kernel]:
    in·Πkernel), over the splitmix64 stream of BRIEF.md."""
    fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * torch.nn.init.calculate_gain("relu") / math.sqrt(fan_in)
    return torch.tensor([-bound + rand01(seed, i) * 2 * bound for i in range(tensor.numel())],
                        dtype=torch.float64).reshape(tensor.shape)


def check_init(name, init, seed, report):
    """Every xavier param (and every KAIMING one) equals the splitmix64 stream;
    zeros are zeros, and gains (layer_norm weights, named gain*, and ONES) ones. A batch_norm's
    running statistics (after the params) start as torch's: mean 0, var 1."""
    for index, (pname, tensor) in enumerate(init.items()):
        if pname.endswith(".running_mean"):
            expected = torch.zeros_like(tensor)
        elif pname.endswith(".running_var") or named(pname, ONES.get(name, ())):
            expected = torch.ones_like(tensor)
        elif named(pname, KAIMING.get(name, ())):
            expected = kaiming(next_seed(seed, index), tensor)
        elif pname.split(".")[-1].startswith("b"):
            expected = torch.zeros_like(tensor)
        elif pname.split(".")[-1].startswith("gain"):
            expected = torch.ones_like(tensor)
        elif tensor.dim() > 2:
            expected = xavier_receptive(next_seed(seed, index), list(tensor.shape))
        else:
            expected = xavier(next_seed(seed, index), tensor.shape[0], tensor.shape[1])
        report("init " + pname, (tensor - expected).abs().max().item())


def forward_check(name, params_path, printed_path, data_spec=None):
    """The reference interpreter's forward (vouch run --interpret --precise)
    on batch 0 against PyTorch on the same params; tolerance 1e-12."""
    forward, _, batch = MODELS[name]
    params = read_safetensors(params_path)
    STATE.clear()  # batch_norm's running statistics, saved after the params
    STATE.update({k: v for k, v in params.items() if is_state(k)})
    x, y = read_npy_fields(data_spec) if data_spec else regression_grid()
    _, loss_of = FILE_MODELS.get(
        name, ("adam", lambda pred, target: torch.mean((pred - target) ** 2)))
    pred = call(forward, params, x[:batch])
    loss = loss_of(pred, y[:batch]).item()
    printed = {}
    with open(printed_path) as f:
        for line in f:
            key, _, value = line.strip().partition(" = ")
            if value.startswith("[") or key == "loss":
                # The model's output (by its name) and the loss.
                printed["loss" if key == "loss" else "pred"] = [
                    float(v) for v in value.strip("[]").split(",")]
    err_pred = max(abs(a - b) for a, b in zip(pred.flatten().tolist(), printed["pred"]))
    err_loss = abs(loss - printed["loss"][0])
    ok = len(printed["pred"]) == pred.numel() and max(err_pred, err_loss) <= 1e-12
    print("interpreter forward vs torch: output max |error| %.3e, loss |error| %.3e, "
          "tolerance 1e-12: %s" % (err_pred, err_loss, "match" if ok else "FAIL"))
    return 0 if ok else 1


def sample_check(name, params_path, printed_path, n, temperature, seed):
    """vouch's --sample (after `sample:`, the token ids) against the same
    generation written here: the context starts as token 0; each step runs the
    forward on batch rows holding the last T tokens (0 after them), and draws
    from the logits at the last real position: the argmax at temperature 0,
    else the first token whose cumulative softmax(logits / temperature) exceeds
    u = rand01(next_seed(seed, "sample"), i) (docs/language.md, --sample)."""
    forward, _, batch = MODELS[name]
    params = read_safetensors(params_path)
    n, temperature, seed = int(n), float(temperature), int(seed)
    context = params["wpe"].shape[0]
    stream = next_seed(seed, 0x73616d706c65)
    tokens = [0]
    with torch.no_grad():
        for i in range(n):
            m = min(len(tokens), context)
            row = tokens[-m:] + [0] * (context - m)
            logits = forward(params, torch.tensor([row] * batch))[0, m - 1].tolist()
            best = max(range(len(logits)), key=lambda v: (logits[v], -v))
            if temperature == 0:
                tokens.append(best)
                continue
            weights = [math.exp((x - logits[best]) / temperature) for x in logits]
            total, cumulative, u = sum(weights), 0.0, rand01(stream, i)
            pick = best
            for v, w in enumerate(weights):
                cumulative += w / total
                if u < cumulative:
                    pick = v
                    break
            tokens.append(pick)
    lines = open(printed_path).read().splitlines()
    printed = [int(t) for t in lines[[l.startswith("sample:") for l in lines].index(True) + 1].split()]
    ok = printed == tokens
    print("sample, temperature %g, seed %d: vouch %s, torch %s: %s" % (
        temperature, seed, printed, tokens, "match" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    if sys.argv[1] == "--forward":
        return forward_check(*sys.argv[2:6])
    if sys.argv[1] == "--sample":
        return sample_check(*sys.argv[2:8])
    name, init_path, trace_path, final_path, steps, seed = sys.argv[1:7]
    data_spec = sys.argv[7] if len(sys.argv) > 7 else None
    steps, seed = int(steps), int(seed)
    forward, lr, batch = MODELS[name]
    init = read_safetensors(init_path)
    worst = {}

    def report(what, err):
        worst[what] = max(worst.get(what, 0.0), err)

    # vouch writes params in declaration order, the order that selects
    # each param's seed (param i draws nextSeed(seed, i)).
    check_init(name, init, seed, report)
    trace = {}
    with open(trace_path) as f:
        for line in f:
            key, *rest = line.split()
            if key == "step":
                trace[int(rest[0])] = float(rest[1])
            else:
                trace[key] = float(rest[0])

    x, y = read_npy_fields(data_spec) if name in FILE_MODELS else regression_grid()
    opt_kind, loss_of = FILE_MODELS.get(
        name, ("adam", lambda pred, target: torch.mean((pred - target) ** 2)))
    params = {k: v.clone().requires_grad_(True) for k, v in init.items() if not is_state(k)}
    STATE.clear()
    STATE.update({k: v.clone() for k, v in init.items() if is_state(k)})
    scheduler, max_norm, clipped = None, None, 0
    if name in OPTIMIZERS:
        make_optimizer, make_scheduler, max_norm = OPTIMIZERS[name]
        optimizer = make_optimizer(list(params.values()), lr)
        scheduler = make_scheduler(optimizer) if make_scheduler else None
    elif opt_kind == "adamw":  # vouch's adamw: PyTorch's defaults, weight decay 0.01
        optimizer = torch.optim.AdamW(params.values(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                                      weight_decay=0.01)
    else:
        optimizer = torch.optim.Adam(params.values(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    batches = x.shape[0] // batch

    def mean_loss():
        with torch.no_grad():
            return sum(loss_of(call(forward, params, x[b * batch:(b + 1) * batch]),
                               y[b * batch:(b + 1) * batch]).item()
                       for b in range(batches)) / batches

    RNG.update(seed=seed, step=0, training=False)
    report("mean_loss(before)", abs(mean_loss() - trace["mean_loss_before"]))
    for k in range(steps):
        RNG.update(step=k, training=True)
        if name in SHUFFLED:
            rows = torch.tensor(batch_rows(k, batch, batches, seed))
        else:
            b = k % batches
            rows = torch.arange(b * batch, (b + 1) * batch)
        optimizer.zero_grad()
        loss = loss_of(call(forward, params, x[rows]), y[rows])
        report("step losses", abs(loss.item() - trace[k]))
        loss.backward()
        if max_norm is not None:
            norm = torch.nn.utils.clip_grad_norm_(list(params.values()), max_norm)
            clipped += int(norm.item() > max_norm)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    RNG.update(step=steps, training=False)
    report("mean_loss(after)", abs(mean_loss() - trace["mean_loss_after"]))
    if not trace["mean_loss_after"] < trace["mean_loss_before"]:
        print("training did not lower the loss: %g -> %g" % (trace["mean_loss_before"],
                                                             trace["mean_loss_after"]))
        return 1
    final = read_safetensors(final_path)
    for pname, tensor in params.items():
        report("final params", (tensor.detach() - final[pname]).abs().max().item())
    for sname, tensor in STATE.items():
        report("final running stats", (tensor - final[sname]).abs().max().item())
    if name == "batchnorm_mlp":
        # vouch's eval-mode loss after training (its running statistics),
        # recomputed through torch.nn.BatchNorm1d modules loaded from its
        # final checkpoint.
        with torch.no_grad():
            evaluated = sum(loss_of(batchnorm_modules_eval(final, x[b * batch:(b + 1) * batch]),
                                    y[b * batch:(b + 1) * batch]).item()
                            for b in range(batches)) / batches
        report("eval via nn.BatchNorm1d", abs(evaluated - trace["mean_loss_after"]))

    if max_norm is not None:
        # Evidence that the clipping path ran: steps whose norm exceeded max_norm.
        print("clip_grad_norm %g: %d of %d steps clipped" % (max_norm, clipped, steps))
        if clipped == 0:
            print("no step was clipped: the test would not exercise clipping")
            return 1
    failed = False
    for what, err in worst.items():
        ok = err <= TOLERANCE
        failed |= not ok
        print("%-20s max |error| %.3e  tolerance %.0e  %s" % (what, err, TOLERANCE,
                                                                "ok" if ok else "FAIL"))
    print("torch %s, %d steps, seed %d: %s" % (torch.__version__, steps, seed,
                                                "FAIL" if failed else "match"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
