#!/usr/bin/env python3
"""Generates a random valid vouch model and its data, from a seed.

Used by difftest.py (the differential test): the same seed always gives the
same model text and the same data files. A model is a random DAG of the
language's differentiable builtins (docs/language.md) over one or two inputs:
pointwise functions and arithmetic with NumPy broadcasting, linear and matmul
(shared, batched, transposed), reductions, softmax / log_softmax /
masked_softmax, layer_norm, slicing, concat, reshape, permute, broadcast,
attention, embedding, gather, scatter_add, cast; then a loss (mse_loss, or
cross_entropy over int32 labels) trained by plain SGD. Every value keeps the
batch as its first axis, so the output's rows are the batch's rows.

Values are kept in a moderate range (a crude bound on each value's magnitude
decides where a tanh or a layer_norm comes first) so that float64 runs agree
to many digits and finite differences stay meaningful; domains are respected
by construction (sqrt, log and inv of v*v + c, division by b*b + c).

usage: gen_model.py SEED OUT_DIR  -> OUT_DIR/model.vouch, the data's .npy
files, and OUT_DIR/meta.json (the data spec, the input fields, lr, steps).
"""
import json
import os
import random
import re
import sys

import numpy as np


class Value:
    def __init__(self, name, shape, mag, dep=False):
        self.name, self.shape, self.mag = name, tuple(shape), mag
        self.dep = dep  # computed from a param: its gradient matters

    @property
    def rank(self):
        return len(self.shape)


def fmt(x):
    """A number as the language reads it (no exponent surprises)."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def shape_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.lines = []
        self.params = []
        self.pool = []
        self.counter = 0
        self.used_ops = []
        self.consumed = set()

    # -- helpers -----------------------------------------------------------
    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def fresh(self, prefix="v"):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def param(self, shape, kind="auto"):
        name = self.fresh("p")
        if kind == "auto":
            kind = "xavier" if len(shape) == 2 and self.rng.random() < 0.4 else "uniform"
        if kind == "xavier":
            init = "xavier_uniform"
        elif kind == "normal":
            init = "normal(0, %s)" % fmt(self.pick([0.2, 0.4]))
        else:
            a = self.pick([0.3, 0.5, 0.8])
            init = "uniform(%s, %s)" % (fmt(-a), fmt(a))
        self.params.append("  param %s : f32%s = %s" % (name, shape_text(shape), init))
        # xavier_uniform's bound is sqrt(6 / (fan_in + fan_out)), up to 1.7; normal's tails.
        return Value(name, shape, 2.0, dep=True)

    def define(self, expr, shape, mag, op):
        used = set(re.findall(r"\b(?:v\d+|x)\b", expr))
        self.consumed.update(used)
        dep = bool(re.search(r"\bp\d+\b", expr)) or any(
            v.dep for v in self.pool if v.name in used)
        name = self.fresh()
        self.lines.append("  %s = %s" % (name, expr))
        v = Value(name, shape, min(mag, 1e6), dep)
        self.pool.append(v)
        self.used_ops.append(op)
        return v

    def bounded(self, v, limit=4.0):
        """v itself when its magnitude is moderate, else tanh(v) (as a new value)."""
        if v.mag <= limit:
            return v
        return self.define("tanh(%s)" % v.name, v.shape, 1.0, "tanh")

    def recent(self):
        """A value from the pool, favouring recent ones (a deeper DAG) and,
        nine times in ten, one computed from a param (whose ops' gradients then
        reach a param: the inputs' gradients are never computed)."""
        pool = self.pool
        if self.rng.random() < 0.9 and any(v.dep for v in pool):
            pool = [v for v in pool if v.dep]
        n = len(pool)
        i = n - 1 - min(n - 1, int(self.rng.expovariate(0.6)))
        return pool[i]

    # -- ops -----------------------------------------------------------------
    def unary(self):
        v = self.recent()
        r = self.rng.random()
        kinds = ["relu", "tanh", "sigmoid", "silu", "sin", "cos", "abs", "gelu", "gelu_none",
                 "softplus", "exp", "sqrt", "log", "inv", "pow", "clamp", "safe_log", "neg",
                 "scale", "shift"]
        k = self.pick(kinds)
        n = v.name
        if k in ("relu", "tanh", "sigmoid", "silu", "sin", "cos", "abs"):
            mag = {"tanh": 1, "sigmoid": 1, "sin": 1, "cos": 1}.get(k, v.mag)
            return self.define("%s(%s)" % (k, n), v.shape, mag, k)
        if k == "gelu":
            return self.define("gelu(%s)" % n, v.shape, v.mag, "gelu")
        if k == "gelu_none":
            return self.define('gelu(%s, approximate = "none")' % n, v.shape, v.mag, "gelu")
        if k == "softplus":
            beta = self.pick([1, 2, 0.5])
            thr = self.pick([20, 1, 2])
            return self.define("softplus(%s, beta = %s, threshold = %s)" % (n, fmt(beta), fmt(thr)),
                               v.shape, v.mag + 1, "softplus")
        if k == "exp":
            b = self.bounded(v, 3.0)
            return self.define("exp(%s)" % b.name, v.shape, float(np.exp(b.mag)), "exp")
        if k in ("sqrt", "log", "inv"):
            b = self.bounded(v, 3.0)
            c = fmt(self.pick([0.5, 0.75, 1.0]))
            inner = "%s * %s + %s" % (b.name, b.name, c)
            mag = {"sqrt": b.mag + 1, "log": 2 * np.log1p(b.mag) + 1, "inv": 2.0}[k]
            return self.define("%s(%s)" % (k, inner), v.shape, mag, k)
        if k == "pow":
            b = self.bounded(v, 2.0)
            if r < 0.5:
                p = self.pick([2, 3])
                return self.define("pow(%s, %d)" % (b.name, p), v.shape, b.mag ** p + 1, "pow")
            p = self.pick([0.5, 1.5, -0.5])
            return self.define("pow(%s * %s + 0.5, %s)" % (b.name, b.name, fmt(p)), v.shape,
                               (b.mag ** 2 + 1) ** abs(p) + 2, "pow")
        if k == "clamp":
            lo = self.pick([-0.5, -1.0, 0.0])
            hi = self.pick([0.5, 1.0, 2.0])
            return self.define("clamp(%s, %s, %s)" % (n, fmt(lo), fmt(hi)), v.shape,
                               max(abs(lo), hi), "clamp")
        if k == "safe_log":
            eps = self.pick([0.1, 0.01])
            return self.define("safe_log(%s, eps = %s)" % (n, fmt(eps)), v.shape,
                               max(np.log(max(v.mag, 1.0)), -np.log(eps)) + 1, "safe_log")
        if k == "neg":
            if self.rng.random() < 0.5:
                return self.define("scale(%s, %s)" % (n, fmt(self.pick([-1, 0.3]))), v.shape,
                                   v.mag, "scale")
            return self.define("-%s" % n, v.shape, v.mag, "scale")
        if k == "scale":
            c = self.pick([0.5, 1.5, -0.75, 2.0])
            if self.rng.random() < 0.5:
                return self.define("%s * %s" % (n, fmt(c)), v.shape, v.mag * abs(c), "scale")
            return self.define("%s / %s" % (n, fmt(c)), v.shape, v.mag / abs(c), "scale")
        c = self.pick([0.5, 1.0, -0.25])
        if self.rng.random() < 0.5:
            return self.define("%s + %s" % (n, fmt(c)), v.shape, v.mag + abs(c), "add")
        return self.define("%s - %s" % (fmt(c), n), v.shape, v.mag + abs(c), "sub")

    def broadcast_partner(self, v):
        """A second operand broadcastable against v: a value of v's shape, a
        param of its trailing axes, or a value / param with some axes of 1."""
        same = [u for u in self.pool if u.shape == v.shape and u is not v]
        r = self.rng.random()
        if same and r < 0.45:
            return self.pick(same), v.shape
        if r < 0.75 or v.rank == 1:
            k = self.rng.randint(1, v.rank - 1) if v.rank > 1 else 1
            tail = v.shape[-k:] if v.rank > 1 else v.shape
            if self.rng.random() < 0.3:
                tail = tuple(1 if self.rng.random() < 0.4 else d for d in tail)
            return self.param(tail), v.shape
        # A reduction of v over its last axis, kept as an axis of 1.
        red = self.reduce_keep(v)
        return red, v.shape

    def reduce_keep(self, v):
        op = self.pick(["reduce_sum", "reduce_mean", "reduce_max"])
        axis = v.rank - 1
        shape = v.shape[:-1]
        inner = "%s(%s, axes = [%d])" % (op, v.name, axis)
        mag = v.mag * (v.shape[-1] if op == "reduce_sum" else 1)
        return self.define("reshape(%s, %s)" % (inner, shape_text(shape + (1,))),
                           shape + (1,), mag, op)

    def binary(self):
        v = self.recent()
        u, shape = self.broadcast_partner(v)
        if self.rng.random() < 0.5:
            v, u = u, v  # the broadcast operand on either side
        k = self.pick(["+", "-", "*", "div", "maximum", "minimum", "add", "mul"])
        if k in ("+", "-"):
            return self.define("%s %s %s" % (v.name, k, u.name), shape, v.mag + u.mag, "add")
        if k == "*":
            return self.define("%s * %s" % (v.name, u.name), shape, v.mag * u.mag, "mul")
        if k in ("add", "mul"):
            mag = v.mag + u.mag if k == "add" else v.mag * u.mag
            return self.define("%s(%s, %s)" % (k, v.name, u.name), shape, mag, k)
        if k == "div":
            b = self.bounded(u, 3.0)
            c = fmt(self.pick([0.5, 1.0]))
            return self.define("%s / (%s * %s + %s)" % (v.name, b.name, b.name, c), shape,
                               v.mag * 2, "div")
        return self.define("%s(%s, %s)" % (k, v.name, u.name), shape, max(v.mag, u.mag), k)

    def linear(self):
        v = self.recent()
        if v.rank < 2:
            return self.unary()
        return self.linear_of(v)

    def linear_of(self, v):
        v = self.bounded(v)
        out = self.rng.randint(1, 6)
        w = self.param((out, v.shape[-1]))
        bias = ""
        if self.rng.random() < 0.7:
            bias = ", " + self.param((out,)).name
        mag = v.mag * v.shape[-1] * 0.8 + 1
        return self.define("linear(%s, %s%s)" % (v.name, w.name, bias), v.shape[:-1] + (out,),
                           mag, "linear")

    def times_param_on_right(self, v):
        """v [..., K] x a shared param [K, N] (or its transpose, [N, K])."""
        k_dim = v.shape[-1]
        n = self.rng.randint(1, 5)
        if self.rng.random() < 0.5:
            w = self.param((k_dim, n))
            expr = "matmul(%s, %s)" % (v.name, w.name)
        else:
            w = self.param((n, k_dim))
            expr = "matmul(%s, %s, transpose_rhs = true)" % (v.name, w.name)
        return self.define(expr, v.shape[:-1] + (n,), v.mag * k_dim * 0.6 + 1, "matmul")

    def matmul(self):
        v = self.recent()
        if v.rank < 2:
            return self.unary()
        v = self.bounded(v)
        if v.rank == 2:
            return self.times_param_on_right(v)
        m, k_dim = v.shape[-2], v.shape[-1]
        r = self.rng.random()
        batch = v.shape[:-2]
        if r < 0.35:
            return self.times_param_on_right(v)
        if r < 0.55:
            # A shared param on the left: [P, M] x v -> [..., P, K], maybe transposed.
            p = self.rng.randint(1, 4)
            if self.rng.random() < 0.5:
                w = self.param((p, m))
                expr = "matmul(%s, %s)" % (w.name, v.name)
            else:
                w = self.param((m, p))
                expr = "matmul(%s, %s, transpose_lhs = true)" % (w.name, v.name)
            return self.define(expr, batch + (p, k_dim), v.mag * m * 0.6 + 1, "matmul")
        # Two values of the same batch: v · uᵀ (scores) or vᵀ · u.
        same = [u for u in self.pool if u.shape == v.shape]
        u = self.bounded(self.pick(same))
        if self.rng.random() < 0.6:
            expr = "matmul(%s, %s, transpose_rhs = true)" % (v.name, u.name)
            shape = batch + (m, m)
            mag = v.mag * u.mag * k_dim
        else:
            expr = "matmul(%s, %s, transpose_lhs = true)" % (v.name, u.name)
            shape = batch + (k_dim, k_dim)
            mag = v.mag * u.mag * m
        return self.define(expr, shape, mag, "matmul")

    def reduce(self):
        v = self.recent()
        if v.rank < 2:
            return self.unary()
        op = self.pick(["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"])
        axes = [a for a in range(1, v.rank) if self.rng.random() < 0.5]
        if not axes:
            axes = [self.rng.randint(1, v.rank - 1)]
        if len(axes) == v.rank - 1 and v.rank > 1 and self.rng.random() < 0.5:
            axes = axes[:-1] or axes
        shape = tuple(d for i, d in enumerate(v.shape) if i not in axes)
        count = int(np.prod([v.shape[a] for a in axes]))
        mag = v.mag * (count if op == "reduce_sum" else 1)
        neg = [a - v.rank if self.rng.random() < 0.3 else a for a in axes]
        if len(neg) == 1 and self.rng.random() < 0.5:
            expr = "%s(%s, %d)" % (op, v.name, neg[0])
        else:
            expr = "%s(%s, axes = [%s])" % (op, v.name, ", ".join(str(a) for a in neg))
        return self.define(expr, shape, mag, op)

    def softmax(self):
        v = self.recent()
        if v.rank < 2:
            return self.unary()
        axis = self.rng.randint(1, v.rank - 1)
        if self.rng.random() < 0.3:
            axis -= v.rank
        op = self.pick(["softmax", "log_softmax"])
        b = self.bounded(v, 8.0)
        mag = 1.0 if op == "softmax" else b.mag * 2 + np.log(max(2, v.shape[axis])) + 1
        return self.define("%s(%s, axis = %d)" % (op, b.name, axis), v.shape, mag, op)

    def masked_softmax(self):
        cands = [u for u in self.pool if u.rank >= 3 and u.shape[-1] == u.shape[-2]]
        if not cands:
            return self.softmax()
        v = self.bounded(self.pick(cands), 8.0)
        t = v.shape[-1]
        if self.rng.random() < 0.5:
            mask = self.mask_input(v.shape)
        else:
            mask = "causal_mask(%d, %d)" % (t, t)
        return self.define("masked_softmax(%s, %s)" % (v.name, mask), v.shape, 1.0,
                           "masked_softmax")

    def layer_norm(self):
        v = self.recent()
        d = v.shape[-1]
        if d < 2:
            return self.unary()
        args = [v.name]
        if self.rng.random() < 0.6:
            args.append("weight = " + self.param((d,)).name)
        if self.rng.random() < 0.6:
            args.append("bias = " + self.param((d,)).name)
        if self.rng.random() < 0.4:
            args.append("eps = " + fmt(self.pick([1e-3, 0.1])))
        return self.define("layer_norm(%s)" % ", ".join(args), v.shape, 4.0, "layer_norm")

    def slice(self):
        cands = [u for u in self.pool if any(d >= 2 for d in u.shape[1:])]
        if not cands:
            return self.unary()
        v = self.pick(cands)
        axes = [a for a in range(1, v.rank) if v.shape[a] >= 2]
        axis = self.pick(axes)
        n = v.shape[axis]
        step = self.pick([1, 1, 2])
        start = self.rng.randint(0, n - 1)
        end = self.rng.randint(start + 1, n)
        length = len(range(start, end, step))
        if length == n:
            return self.unary()
        s_text = str(start - n) if self.rng.random() < 0.3 else str(start)
        e_text = str(end - n) if end < n and self.rng.random() < 0.3 else str(end)
        ax_text = str(axis - v.rank) if self.rng.random() < 0.3 else str(axis)
        expr = "slice(%s, %s, %s, %s%s)" % (v.name, ax_text, s_text, e_text,
                                            ", step = %d" % step if step != 1 else "")
        shape = v.shape[:axis] + (length,) + v.shape[axis + 1:]
        return self.define(expr, shape, v.mag, "slice")

    def concat(self):
        v = self.recent()
        if v.rank < 2:
            return self.unary()
        axis = self.rng.randint(1, v.rank - 1)
        others = [u for u in self.pool
                  if u.rank == v.rank and u is not v and
                  all(u.shape[i] == v.shape[i] for i in range(v.rank) if i != axis)]
        if others and self.rng.random() < 0.7:
            u = self.pick(others)
        else:
            u = self.define("tanh(%s)" % v.name, v.shape, 1.0, "tanh")
        parts = [v, u] if self.rng.random() < 0.5 else [u, v]
        shape = v.shape[:axis] + (v.shape[axis] + u.shape[axis],) + v.shape[axis + 1:]
        ax_text = str(axis - v.rank) if self.rng.random() < 0.3 else str(axis)
        return self.define("concat([%s, %s], %s)" % (parts[0].name, parts[1].name, ax_text),
                           shape, max(v.mag, u.mag), "concat")

    def reshape(self):
        v = self.recent()
        rest = v.shape[1:]
        total = int(np.prod(rest)) if rest else 1
        options = []
        if v.rank >= 3:
            options.append(v.shape[:-2] + (v.shape[-2] * v.shape[-1],))  # merge the last two
        for f in range(2, total):
            if total % f == 0:
                options.append((v.shape[0], f, total // f))
        options.append((v.shape[0], total))
        options = [o for o in options if o != v.shape]
        if not options:
            return self.unary()
        shape = self.pick(options)
        text = list(shape)
        if self.rng.random() < 0.3:
            text[self.rng.randrange(len(text))] = -1
        words = ["batch" if i == 0 and self.rng.random() < 0.5 else str(d)
                 for i, d in enumerate(text)]
        if "batch" not in words and text[0] == v.shape[0]:
            pass
        return self.define("reshape(%s, [%s])" % (v.name, ", ".join(words)), shape, v.mag,
                           "reshape")

    def permute(self):
        cands = [u for u in self.pool if u.rank >= 3]
        if not cands:
            return self.reshape()
        v = self.pick(cands)
        rest = list(range(1, v.rank))
        while True:
            self.rng.shuffle(rest)
            if rest != sorted(rest):
                break
        perm = [0] + rest
        shape = tuple(v.shape[p] for p in perm)
        text = [str(p - v.rank) if p and self.rng.random() < 0.2 else str(p) for p in perm]
        return self.define("permute(%s, [%s])" % (v.name, ", ".join(text)), shape, v.mag,
                           "permute")

    def broadcast(self):
        # A new axis of 1 (reshape), broadcast to a few copies.
        v = self.recent()
        if v.rank >= 4:
            return self.unary()
        k = self.rng.randint(2, 3)
        mid = self.define("reshape(%s, %s)" % (v.name, shape_text((v.shape[0], 1) + v.shape[1:])),
                          (v.shape[0], 1) + v.shape[1:], v.mag, "reshape")
        shape = (v.shape[0], k) + v.shape[1:]
        return self.define("broadcast(%s, %s)" % (mid.name, shape_text(shape)), shape, v.mag,
                           "broadcast")

    def attention(self):
        cands = [u for u in self.pool if u.rank >= 3]
        if not cands:
            v = self.recent()
            if v.rank != 2 or v.shape[1] < 2:
                return self.unary()
            t = self.pick([2, 3])
            v = self.define("broadcast(reshape(%s, %s), %s)" % (
                v.name, shape_text((v.shape[0], 1, v.shape[1])),
                shape_text((v.shape[0], t, v.shape[1]))), (v.shape[0], t, v.shape[1]), v.mag,
                "broadcast")
            cands = [v]
        q = self.bounded(self.pick(cands), 3.0)
        same = [u for u in self.pool if u.shape == q.shape]
        k = self.bounded(self.pick(same), 3.0)
        vv = self.pick([u for u in self.pool if u.shape[:-1] == q.shape[:-1]])
        args = [q.name, k.name, vv.name]
        r = self.rng.random()
        if r < 0.4:
            args.append("causal = true")
        elif r < 0.6:
            args.append("mask = " + self.mask_input(q.shape[:-1] + (q.shape[-2],)))
        if self.rng.random() < 0.3:
            args.append("scale = " + fmt(self.pick([0.25, 1.0])))
        return self.define("scaled_dot_product_attention(%s)" % ", ".join(args), vv.shape,
                           vv.mag, "scaled_dot_product_attention")

    def gather_scatter(self):
        """gather / scatter_add with computed indices (cast of a bounded value)."""
        v = self.recent()
        if v.rank < 2 or v.shape[-1] < 2:
            return self.unary()
        n = v.shape[-1]
        src = self.pick([u for u in self.pool if u.shape == v.shape])
        # (tanh(src) + 1) * (n / 2 - 0.001) lies in [0, n - 0.002]: columns 0..n-1.
        idx = "cast((tanh(%s) + 1) * %s, i32)" % (src.name, fmt(n / 2 - 0.001))
        axis = v.rank - 1
        if self.rng.random() < 0.5:
            return self.define("gather(%s, %s, %d)" % (v.name, idx, axis), v.shape, v.mag,
                               "gather")
        other = self.pick([u for u in self.pool if u.shape == v.shape])
        return self.define("scatter_add(%s, %s, %s, %d)" % (v.name, idx, other.name, axis),
                           v.shape, v.mag + other.mag * n, "scatter_add")

    def random_op(self):
        """dropout (a training step's mask), rand_uniform and bernoulli_mask
        (fresh draws keyed by the step): docs/language.md, "Random ops"."""
        v = self.recent()
        k = self.pick(["dropout", "dropout", "rand_uniform", "bernoulli_mask"])
        dims = ", ".join(["batch"] + [str(d) for d in v.shape[1:]])
        if k == "dropout":
            p = self.pick([0.1, 0.3, 0.5])
            return self.define("dropout(%s, %s)" % (v.name, fmt(p)), v.shape, v.mag / (1 - p),
                               "dropout")
        if k == "rand_uniform":
            return self.define("%s * rand_uniform([%s])" % (v.name, dims), v.shape, v.mag,
                               "rand_uniform")
        p = self.pick([0.3, 0.7])
        return self.define("%s * bernoulli_mask([%s], %s)" % (v.name, dims, fmt(p)), v.shape,
                           v.mag, "bernoulli_mask")

    def cast_feature(self):
        """An integer input as real features (cast to f32: ids, a mask's 0 / 1),
        or a real value cast to its own type (the identity)."""
        ints = [(n, d, sh) for n, d, sh in self.inputs if d in ("i32", "i1")]
        v = self.recent()
        if not ints or self.rng.random() < 0.3:
            return self.define("cast(%s, f32)" % v.name, v.shape, v.mag, "cast")
        name, dtype, shape = self.pick(ints)
        full = (v.shape[0],) + tuple(shape)
        return self.define("cast(%s, f32) * 0.1" % name, full,
                           0.1 * (self.vocab if dtype == "i32" else 1), "cast")

    def mask_input(self, shape):
        """An i1 input broadcastable to a [..., T, T] value: [batch, 1.., T, T],
        from the data (rows blocked whole among them)."""
        mshape = (shape[0],) + (1,) * (len(shape) - 3) + shape[-2:]
        for name, dtype, s in self.inputs:
            if dtype == "i1" and (shape[0],) + tuple(s) == mshape:
                return name
        name = "m%d" % len(self.inputs)
        self.inputs.append((name, "i1", mshape[1:]))
        return name

    # -- the model -----------------------------------------------------------
    def generate(self):
        rng = self.rng
        batch = rng.randint(1, 4)
        steps = 2
        seq = rng.random() < 0.35
        d_in = rng.randint(1, 5)
        t = rng.randint(2, 4)
        self.inputs = inputs = []
        if seq:
            x = Value("x", (batch, t, d_in), 1.0)
            inputs.append(("x", "f32", (t, d_in)))
        else:
            x = Value("x", (batch, d_in), 1.0)
            inputs.append(("x", "f32", (d_in,)))
        self.pool.append(x)
        embed = rng.random() < 0.2
        self.vocab = vocab = rng.randint(3, 6)
        if embed:
            width = rng.randint(2, 4)
            table = self.param((vocab, width))
            ids_shape = (t,) if seq else (2,)
            inputs.append(("ids", "i32", ids_shape))
            self.define("embedding(ids, %s)" % table.name, (batch,) + ids_shape + (width,), 1.0,
                        "embedding")

        # A first layer of params, so that what follows has gradients.
        first = self.pool[-1]
        self.linear_of(first)

        ops = [(self.unary, 6), (self.binary, 6), (self.linear, 4), (self.matmul, 3),
               (self.reduce, 2), (self.softmax, 2), (self.masked_softmax, 1),
               (self.layer_norm, 2), (self.slice, 2), (self.concat, 2), (self.reshape, 2),
               (self.permute, 1), (self.broadcast, 1), (self.attention, 1),
               (self.gather_scatter, 1), (self.random_op, 1), (self.cast_feature, 1)]
        total = sum(w for _, w in ops)
        for _ in range(rng.randint(3, 14)):
            r = rng.uniform(0, total)
            for f, w in ops:
                r -= w
                if r <= 0:
                    f()
                    break

        # The output: the last value, plus every value nothing used (reduced to
        # one number per row, squashed by tanh), so that all of them count.
        out = self.pool[-1]
        leaves = [v for v in self.pool if v.name not in self.consumed and v is not out]
        if leaves:
            terms = []
            for v in leaves:
                squashed = "tanh(%s)" % v.name
                if v.rank > 1:
                    squashed = "reduce_sum(%s, axes = [%s])" % (
                        squashed, ", ".join(str(a) for a in range(1, v.rank)))
                terms.append(squashed)
            total = self.define(" + ".join(terms), (batch,), float(len(terms)) * 50, "add")
            column = self.define("reshape(%s, %s)" % (total.name,
                                                     shape_text((batch,) + (1,) * (out.rank - 1))),
                                 (batch,) + (1,) * (out.rank - 1), total.mag, "reshape")
            out = self.define("%s + 0.05 * %s" % (out.name, column.name), out.shape,
                              out.mag + 0.05 * column.mag, "add")
        out = self.bounded(out, 50.0)
        classify = rng.random() < 0.3
        targets = []
        if classify:
            flat = out
            if out.rank > 2 and rng.random() < 0.5:
                # Per-position classes: logits [B, T.., C], labels [B, T..].
                classes = out.shape[-1]
                if classes < 2:
                    flat = self.define("linear(%s, %s)" % (out.name, self.param((3, classes)).name),
                                       out.shape[:-1] + (3,), out.mag * 2, "linear")
                labels_shape = flat.shape[1:-1]
            else:
                if out.rank != 2:
                    n = int(np.prod(out.shape[1:]))
                    flat = self.define("reshape(%s, [batch, %d])" % (out.name, n), (batch, n),
                                       out.mag, "reshape")
                if flat.shape[-1] < 2:
                    flat = self.define("linear(%s, %s)" % (flat.name,
                                                         self.param((3, flat.shape[-1])).name),
                                       (batch, 3), flat.mag * 2, "linear")
                labels_shape = ()
            out = flat
            targets.append(("labels", "i32", labels_shape))
            loss = "cross_entropy(%s, labels)" % out.name
        else:
            targets.append(("y", "f32", out.shape[1:]))
            loss = "mse_loss(%s, y)" % out.name
            if rng.random() < 0.2:
                loss = "mse_loss(%s, y) + 0.1 * reduce_mean(%s * %s)" % (out.name, out.name,
                                                                         out.name)

        lr = self.pick([0.05, 0.1, 0.2])
        text = ["// Generated by tests/differential/gen_model.py, seed %d." % self.seed,
                "model diff_%d {" % self.seed,
                "  data npy(%s)" % ", ".join('%s = "%s.npy"' % (n, n)
                                            for n, _, _ in inputs + targets)]
        for name, dtype, shape in inputs:
            text.append("  input %s : %s[batch%s]" % (name, dtype,
                                                      "".join(", %d" % d for d in shape)))
        for name, dtype, shape in targets:
            text.append("  target %s : %s[batch%s]" % (name, dtype,
                                                       "".join(", %d" % d for d in shape)))
        text += self.params
        text += self.lines
        text.append("  output %s" % out.name)
        text.append("  loss = %s" % loss)
        text.append("  train sgd(lr = %s) batch %d steps %d log_every 1" % (fmt(lr), batch,
                                                                             steps))
        text.append("}")
        meta = {
            "seed": self.seed, "batch": batch, "steps": steps, "lr": lr,
            "fields": [{"name": n, "dtype": d, "shape": list(s), "target": False}
                       for n, d, s in inputs] +
                      [{"name": n, "dtype": d, "shape": list(s), "target": True}
                       for n, d, s in targets],
            "output": out.name, "output_shape": list(out.shape[1:]),
            "classes": out.shape[-1] if classify else 0, "vocab": vocab,
            "ops": sorted(set(self.used_ops)),
        }
        return "\n".join(text) + "\n", meta


def write_data(meta, out_dir):
    """One .npy per field, rows = batch * steps: step k trains on batch k."""
    rng = np.random.default_rng(meta["seed"] + 1000003)
    rows = meta["batch"] * meta["steps"]
    paths = []
    for f in meta["fields"]:
        shape = (rows,) + tuple(f["shape"])
        if f["dtype"] == "i32" and f["target"]:
            # Labels, a fifth of them cross_entropy's ignore_index (-100); each
            # batch keeps at least one (a batch of only ignored labels is NaN).
            a = rng.integers(0, meta["classes"], size=shape).astype("<i4")
            ignored = rng.random(size=shape) < 0.2
            a[ignored] = -100
            b = meta["batch"]
            for k in range(meta["steps"]):
                part = a[k * b:(k + 1) * b].reshape(-1)
                if np.all(part == -100):
                    part[0] = 0
                a[k * b:(k + 1) * b] = part.reshape(a[k * b:(k + 1) * b].shape)
        elif f["dtype"] == "i32":
            a = rng.integers(0, meta["vocab"], size=shape).astype("<i4")
        elif f["dtype"] == "i1":
            # A mask: mostly true, a few rows blocked whole (they give zeros).
            a = rng.random(size=shape) < 0.7
            lines = a.reshape(-1, shape[-1])
            lines[rng.random(size=lines.shape[0]) < 0.15] = False
            a = lines.reshape(shape)
        else:
            a = rng.uniform(-1, 1, size=shape)
        path = os.path.join(out_dir, f["name"] + ".npy")
        np.save(path, a)
        paths.append(path)
    meta["data"] = ",".join(paths)
    meta["inputs"] = ",".join(p for p, f in zip(paths, meta["fields"]) if not f["target"])


def main():
    seed, out_dir = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    text, meta = Generator(seed).generate()
    with open(os.path.join(out_dir, "model.vouch"), "w") as f:
        f.write(text)
    write_data(meta, out_dir)
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
