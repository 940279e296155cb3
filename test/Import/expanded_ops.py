#!/usr/bin/env python3
"""Models of the ONNX ops sbp imports by expanding them into the ops they
are made of: those opsets 18 to 23 added (GroupNormalization,
RMSNormalization, RotaryEmbedding, Attention), written in opset 17, and
LSTM, GRU and RNN, unrolled over their sequence. Each in several forms, run by
onnxruntime for the expected results.

Writes DIR/NAME.onnx with its inputs and expected results, runs each with
sbp-run on one rank and on two under the search's plan, and compares the
results (rtol 1e-4, atol 1e-5; a NaN only where onnxruntime has one). Prints a line per case and a summary;
exits 1 on a mismatch. Then the same for a transformer block that
PyTorch exports at opset 23, against PyTorch. Also writes the forms sbp
reports (error_models). Needs the model venv (onnx, onnxruntime).

Usage: expanded_ops.py --run SBP_RUN DIR
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32


def model(node, inputs, output_shapes, opset=23):
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s, _ in inputs],
        [helper.make_tensor_value_info(n, F, s)
         for n, s in zip([o for o in node.output if o], output_shapes)])
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    if opset >= 21:
        onnx.checker.check_model(m)
    return m


def group_norm_18(x, scale, bias, groups, epsilon):
    """Opset 18's GroupNormalization (scale and bias per group), which
    onnxruntime no longer runs."""
    g = x.reshape(x.shape[0], groups, -1).astype(np.float64)
    g = (g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + epsilon)
    return (g * scale[:, None] + bias[:, None]).reshape(x.shape).astype(np.float32)


def rotary_caches(rng, positions, half):
    angles = rng.uniform(0, 6.3, (positions, half)).astype(np.float32)
    return np.cos(angles), np.sin(angles)


def cases():
    rng = np.random.default_rng(0)
    x3 = rng.standard_normal((2, 5, 8)).astype(np.float32)
    x4 = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    yield ("rms_last", helper.make_node("RMSNormalization", ["x", "s"], ["y"]),
           [("x", F, [2, 5, 8], x3),
            ("s", F, [8], rng.standard_normal(8).astype(np.float32))])
    # Over the last two axes, named positively (the rank from the input's
    # declared type), with another epsilon.
    yield ("rms_axis", helper.make_node("RMSNormalization", ["x", "s"], ["y"],
                                        axis=2, epsilon=0.1),
           [("x", F, [2, 3, 4, 6], x4),
            ("s", F, [4, 6], rng.standard_normal((4, 6)).astype(np.float32))])
    # Groups of channels, scaled per channel (21 and later) and, in opset
    # 18, per group.
    x = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)
    yield ("group_norm", helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3),
        [("x", F, [2, 6, 3, 4], x),
         ("s", F, [6], rng.standard_normal(6).astype(np.float32)),
         ("b", F, [6], rng.standard_normal(6).astype(np.float32))])
    yield ("group_norm_18", helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2,
        epsilon=0.01),
        [("x", F, [2, 6, 3, 4], x),
         ("s", F, [2], rng.standard_normal(2).astype(np.float32)),
         ("b", F, [2], rng.standard_normal(2).astype(np.float32))])
    # [batch, heads, seq, head] read at position ids, rotating halves.
    cos, sin = rotary_caches(rng, 10, 3)
    pos = rng.integers(0, 10, (2, 4)).astype(np.int64)
    yield ("rotary_4d", helper.make_node("RotaryEmbedding",
                                         ["x", "c", "n", "p"], ["y"]),
           [("x", F, [2, 3, 4, 6], x4), ("c", F, [10, 3], cos),
            ("n", F, [10, 3], sin), ("p", I64, [2, 4], pos)])
    # [batch, seq, heads * head], neighbours rotated, half of each head.
    cos, sin = rotary_caches(rng, 10, 1)
    pos = rng.integers(0, 10, (2, 5)).astype(np.int64)
    yield ("rotary_3d", helper.make_node(
        "RotaryEmbedding", ["x", "c", "n", "p"], ["y"], interleaved=1,
        num_heads=2, rotary_embedding_dim=2),
        [("x", F, [2, 5, 8], x3), ("c", F, [10, 1], cos),
         ("n", F, [10, 1], sin), ("p", I64, [2, 5], pos)])
    # Caches already per batch and position (no position ids).
    cos, sin = (a.reshape(2, 5, 2) for a in rotary_caches(rng, 10, 2))
    yield ("rotary_caches", helper.make_node(
        "RotaryEmbedding", ["x", "c", "n"], ["y"], num_heads=2),
        [("x", F, [2, 5, 8], x3), ("c", F, [2, 5, 2], cos),
         ("n", F, [2, 5, 2], sin)])


def attention_cases(rng):
    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # [batch, heads, seq, head]; values of another head size.
    q, k, v = normal(2, 3, 4, 8), normal(2, 3, 6, 8), normal(2, 3, 6, 5)
    yield ("attention_4d", helper.make_node("Attention", ["q", "k", "v"], ["y"]),
           [("q", F, [2, 3, 4, 8], q), ("k", F, [2, 3, 6, 8], k),
            ("v", F, [2, 3, 6, 5], v)], [[2, 3, 4, 5]])
    # [batch, seq, heads * head], two query heads a key head, causal.
    q, k, v = normal(2, 4, 12), normal(2, 4, 6), normal(2, 4, 4)
    yield ("attention_3d_gqa", helper.make_node(
        "Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=2,
        is_causal=1),
        [("q", F, [2, 4, 12], q), ("k", F, [2, 4, 6], k),
         ("v", F, [2, 4, 4], v)], [[2, 4, 8]])
    # A boolean mask (one query row masked from every key), a scale and a
    # softcap.
    q, k, v = normal(2, 2, 4, 8), normal(2, 2, 6, 8), normal(2, 2, 6, 8)
    mask = rng.random((2, 1, 4, 6)) < 0.7
    mask[0, 0, 1, :] = False
    yield ("attention_mask", helper.make_node(
        "Attention", ["q", "k", "v", "m"], ["y"], scale=0.3, softcap=2.0),
        [("q", F, [2, 2, 4, 8], q), ("k", F, [2, 2, 6, 8], k),
         ("v", F, [2, 2, 6, 8], v),
         ("m", TensorProto.BOOL, [2, 1, 4, 6], mask)], [[2, 2, 4, 8]])
    # A float mask, causal after a past of 5 keys and values, with the
    # present keys and values as outputs.
    q, k, v = normal(1, 2, 3, 4), normal(1, 2, 3, 4), normal(1, 2, 3, 4)
    pk, pv = normal(1, 2, 5, 4), normal(1, 2, 5, 4)
    bias = normal(3, 8)
    yield ("attention_past", helper.make_node(
        "Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "kk", "vv"],
        is_causal=1),
        [("q", F, [1, 2, 3, 4], q), ("k", F, [1, 2, 3, 4], k),
         ("v", F, [1, 2, 3, 4], v), ("m", F, [3, 8], bias),
         ("pk", F, [1, 2, 5, 4], pk), ("pv", F, [1, 2, 5, 4], pv)],
        [[1, 2, 3, 4], [1, 2, 8, 4], [1, 2, 8, 4]])


def lstm_cases(rng):
    def normal(*shape):
        return (0.5 * rng.standard_normal(shape)).astype(np.float32)

    # Forward, [seq, batch, input], biases, every output.
    yield ("lstm_forward", helper.make_node(
        "LSTM", ["x", "w", "r", "b"], ["y", "yh", "yc"], hidden_size=4),
        [("x", F, [5, 2, 3], normal(5, 2, 3)), ("w", F, [1, 16, 3], normal(1, 16, 3)),
         ("r", F, [1, 16, 4], normal(1, 16, 4)), ("b", F, [1, 32], normal(1, 32))],
        [[5, 1, 2, 4], [1, 2, 4], [1, 2, 4]])
    # Both directions, [batch, seq, input], initial states.
    yield ("lstm_bidirectional", helper.make_node(
        "LSTM", ["x", "w", "r", "b", "", "h0", "c0"], ["y", "yh"],
        hidden_size=4, direction="bidirectional", layout=1),
        [("x", F, [2, 5, 3], normal(2, 5, 3)), ("w", F, [2, 16, 3], normal(2, 16, 3)),
         ("r", F, [2, 16, 4], normal(2, 16, 4)), ("b", F, [2, 32], normal(2, 32)),
         ("h0", F, [2, 2, 4], normal(2, 2, 4)), ("c0", F, [2, 2, 4], normal(2, 2, 4))],
        [[2, 5, 2, 4], [2, 2, 4]])
    # Reverse, peepholes, a clip, other activations, the last cell only.
    yield ("lstm_peephole", helper.make_node(
        "LSTM", ["x", "w", "r", "", "", "", "", "p"], ["", "", "yc"],
        hidden_size=4, direction="reverse", clip=0.5,
        activations=["Sigmoid", "Relu", "Tanh"]),
        [("x", F, [4, 2, 3], normal(4, 2, 3)), ("w", F, [1, 16, 3], normal(1, 16, 3)),
         ("r", F, [1, 16, 4], normal(1, 16, 4)), ("p", F, [1, 12], normal(1, 12))],
        [[1, 2, 4]])
    # Both directions over sequences of their own lengths (steps past one
    # keep the states and write zeros), initial states.
    yield ("lstm_lengths", helper.make_node(
        "LSTM", ["x", "w", "r", "b", "n", "h0", "c0"], ["y", "yh", "yc"],
        hidden_size=4, direction="bidirectional"),
        [("x", F, [5, 3, 3], normal(5, 3, 3)), ("w", F, [2, 16, 3], normal(2, 16, 3)),
         ("r", F, [2, 16, 4], normal(2, 16, 4)), ("b", F, [2, 32], normal(2, 32)),
         ("n", I32, [3], np.array([5, 2, 4], np.int32)),
         ("h0", F, [2, 3, 4], normal(2, 3, 4)), ("c0", F, [2, 3, 4], normal(2, 3, 4))],
        [[5, 2, 3, 4], [2, 3, 4], [2, 3, 4]])


def gru_rnn_cases(rng):
    def normal(*shape):
        return (0.5 * rng.standard_normal(shape)).astype(np.float32)

    # GRU, the reset gate on the previous state before its product.
    yield ("gru_forward", helper.make_node(
        "GRU", ["x", "w", "r", "b"], ["y", "yh"], hidden_size=4),
        [("x", F, [5, 2, 3], normal(5, 2, 3)), ("w", F, [1, 12, 3], normal(1, 12, 3)),
         ("r", F, [1, 12, 4], normal(1, 12, 4)), ("b", F, [1, 24], normal(1, 24))],
        [[5, 1, 2, 4], [1, 2, 4]])
    # Both directions, the reset gate after the product, initial states.
    yield ("gru_linear_before_reset", helper.make_node(
        "GRU", ["x", "w", "r", "b", "", "h0"], ["y"], hidden_size=4,
        direction="bidirectional", linear_before_reset=1),
        [("x", F, [4, 2, 3], normal(4, 2, 3)), ("w", F, [2, 12, 3], normal(2, 12, 3)),
         ("r", F, [2, 12, 4], normal(2, 12, 4)), ("b", F, [2, 24], normal(2, 24)),
         ("h0", F, [2, 2, 4], normal(2, 2, 4))], [[4, 2, 2, 4]])
    # A plain RNN, reverse, no bias, ReLU.
    yield ("rnn_reverse", helper.make_node(
        "RNN", ["x", "w", "r"], ["y", "yh"], hidden_size=4,
        direction="reverse", activations=["Relu"]),
        [("x", F, [5, 2, 3], normal(5, 2, 3)), ("w", F, [1, 4, 3], normal(1, 4, 3)),
         ("r", F, [1, 4, 4], normal(1, 4, 4))], [[5, 1, 2, 4], [1, 2, 4]])
    # A reverse GRU over sequences of their own lengths: each starts at its
    # last step.
    yield ("gru_lengths", helper.make_node(
        "GRU", ["x", "w", "r", "b", "n"], ["y", "yh"], hidden_size=4,
        direction="reverse"),
        [("x", F, [4, 3, 3], normal(4, 3, 3)), ("w", F, [1, 12, 3], normal(1, 12, 3)),
         ("r", F, [1, 12, 4], normal(1, 12, 4)), ("b", F, [1, 24], normal(1, 24)),
         ("n", I32, [3], np.array([1, 4, 3], np.int32))],
        [[4, 1, 3, 4], [1, 3, 4]])


def batch_first_lstm(node, inputs, output_shapes, out):
    """The results of an LSTM of layout 1, which onnxruntime does not run:
    those of layout 0 on the transposed input and states, transposed."""
    seq_first = helper.make_node("LSTM", list(node.input), list(node.output))
    seq_first.attribute.extend(a for a in node.attribute if a.name != "layout")
    swap = {"x": (1, 0, 2), "h0": (1, 0, 2), "c0": (1, 0, 2)}
    feeds = [(n, t, [s[i] for i in swap[n]] if n in swap else s,
              np.transpose(v, swap[n]) if n in swap else v)
             for n, t, s, v in inputs]
    shapes = [[s[1], s[2], s[0], s[3]] if len(s) == 4 else [s[1], s[0], s[2]]
              for s in output_shapes]
    path = os.path.join(out, "seq_first.onnx")
    onnx.save(model(seq_first, feeds, shapes, 14), path)
    session = onnxruntime.InferenceSession(
        path, providers=["CPUExecutionProvider"])
    y, yh = session.run(None, {n: v for n, _, _, v in feeds})
    return [np.transpose(y, (2, 0, 1, 3)), np.transpose(yh, (1, 0, 2))]


def export(module, x, name, out, **options):
    """Exports `module` on input x as DIR/NAME.onnx with its input and
    PyTorch's result; the ops the exporter wrote."""
    import torch

    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(module, (x,), path, dynamo=True, input_names=["x"],
                      **options)
    np.save(os.path.join(out, name + ".x0.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, name + ".expected0.npy"), module(x).numpy())
    return sorted({n.op_type for n in onnx.load(path).graph.node})


def torch_block(out):
    """A pre-norm transformer block (RMSNorm, causal scaled dot-product
    attention, GELU MLP) exported by PyTorch at opset 23, which writes
    RMSNormalization and Attention; its inputs and PyTorch's result."""
    import torch
    import torch.nn.functional as tf

    class Block(torch.nn.Module):
        def __init__(self, hidden=32, heads=4):
            super().__init__()
            self.heads = heads
            self.norm1 = torch.nn.RMSNorm(hidden)
            self.qkv = torch.nn.Linear(hidden, 3 * hidden)
            self.proj = torch.nn.Linear(hidden, hidden)
            self.norm2 = torch.nn.RMSNorm(hidden)
            self.up = torch.nn.Linear(hidden, 4 * hidden)
            self.down = torch.nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, t, h = x.shape
            split = lambda y: y.view(b, t, self.heads, -1).transpose(1, 2)
            q, k, v = map(split, self.qkv(self.norm1(x)).split(h, dim=-1))
            a = tf.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, h))
            return x + self.down(tf.gelu(self.up(self.norm2(x))))

    torch.manual_seed(0)
    block = Block().eval()
    x = torch.randn(2, 8, 32)
    return export(block, x, "torch_block", out, opset_version=23)


def torch_lstm(out):
    """A bidirectional LSTM over [batch, seq, input] and a linear layer,
    exported by PyTorch at its default opset, which writes an LSTM node."""
    import torch

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(6, 8, batch_first=True,
                                      bidirectional=True)
            self.out = torch.nn.Linear(16, 3)

        def forward(self, x):
            return self.out(self.lstm(x)[0])

    torch.manual_seed(0)
    tagger = Tagger().eval()
    x = torch.randn(2, 7, 6)
    return export(tagger, x, "torch_lstm", out)


def upsample_cases(rng):
    # Upsample of opset 7, its scales an attribute: nearest and linear
    # (Resize of opset 10 under its former name).
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    for mode in ("nearest", "linear"):
        yield ("upsample_%s" % mode, helper.make_node(
            "Upsample", ["x"], ["y"], mode=mode, scales=[1.0, 1.0, 2.0, 3.0]),
            [("x", F, [1, 2, 3, 4], x)], [[1, 2, 6, 12]])


def error_models(out):
    """Forms the expansions cannot take, each reported by node: unknown
    shapes or ranks, a missing head count, the scores as an output, the
    LSTM's coupled input and forget gates."""
    unknown = lambda n: helper.make_tensor_value_info(n, F, None)
    known = lambda n, s: helper.make_tensor_value_info(n, F, s)
    graphs = {
        "rms_unknown_rank": ([helper.make_node(
            "RMSNormalization", ["x", "s"], ["y"], axis=1, name="norm")],
            [unknown("x"), known("s", [4])], [unknown("y")]),
        "rotary_no_heads": ([helper.make_node(
            "RotaryEmbedding", ["x", "c", "n"], ["y"], name="rope")],
            [known("x", [2, 5, 8]), known("c", [2, 5, 2]),
             known("n", [2, 5, 2])], [unknown("y")]),
        "attention_unknown_shape": ([helper.make_node(
            "Attention", ["q", "k", "v"], ["y"], name="attn")],
            [unknown("q"), known("k", [1, 2, 3, 4]), known("v", [1, 2, 3, 4])],
            [unknown("y")]),
        "attention_scores": ([helper.make_node(
            "Attention", ["q", "k", "v"], ["y", "", "", "qk"], name="attn")],
            [known(n, [1, 2, 3, 4]) for n in "qkv"],
            [unknown("y"), unknown("qk")]),
    }
    graphs["lstm_input_forget"] = ([helper.make_node(
        "LSTM", ["x", "w", "r"], ["y"], hidden_size=2, input_forget=1,
        name="rnn")],
        [known("x", [3, 1, 2]), known("w", [1, 8, 2]), known("r", [1, 8, 2])],
        [unknown("y")])
    for name, (nodes, inputs, outputs) in graphs.items():
        opset = 14 if name.startswith("lstm") else 23
        m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 10
        onnx.save(m, os.path.join(out, name + ".onnx"))


def check(run, out, name, inputs, count):
    """Runs case `name` with sbp-run on 1 and 2 ranks; its worst error, or
    a message."""
    worst = 0.0
    for ranks in (1, 2):
        results = os.path.join(out, "%s.r%d" % (name, ranks))
        command = [run, os.path.join(out, name + ".onnx"), "--output-dir",
                   results]
        if ranks > 1:
            command += ["--ranks", str(ranks), "--auto"]
        for k, (n, _, _, _) in enumerate(inputs):
            command += ["--input",
                        "%s=%s" % (n, os.path.join(out, "%s.x%d.npy" % (name, k)))]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            return "exit %d: %s" % (done.returncode, done.stderr.strip()[-300:])
        for r in range(count):
            got = np.load(os.path.join(results, "result%d.npy" % r))
            want = np.load(os.path.join(out, "%s.expected%d.npy" % (name, r)))
            if got.shape != want.shape:
                return "result %d: shape %s, expected %s" % (r, got.shape,
                                                             want.shape)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True):
                return "result %d on %d ranks: max_abs_err %.3g" % (
                    r, ranks, np.nanmax(np.abs(got - want)))
            worst = max(worst, float(np.nanmax(np.abs(got - want))))
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", required=True)
    parser.add_argument("dir")
    args = parser.parse_args()
    out = args.dir
    os.makedirs(out, exist_ok=True)
    all_cases = [(name, node, inputs, [list(inputs[0][3].shape)])
                 for name, node, inputs in cases()]
    all_cases += attention_cases(np.random.default_rng(1))
    all_cases += lstm_cases(np.random.default_rng(2))
    all_cases += gru_rnn_cases(np.random.default_rng(3))
    all_cases += upsample_cases(np.random.default_rng(4))
    error_models(out)
    failed = 0
    for name, node, inputs, output_shapes in all_cases:
        m = model(node, inputs, output_shapes,
                  18 if name.endswith("_18")
                  else 14 if name.startswith(("lstm", "gru", "rnn"))
                  else 7 if name.startswith("upsample") else 23)
        path = os.path.join(out, name + ".onnx")
        onnx.save(m, path)
        if name == "group_norm_18":
            results = [group_norm_18(*(v for _, _, _, v in inputs), 2, 0.01)]
        elif name == "lstm_bidirectional":
            results = batch_first_lstm(node, inputs, output_shapes, out)
        else:
            session = onnxruntime.InferenceSession(
                path, providers=["CPUExecutionProvider"])
            results = session.run(None, {n: v for n, _, _, v in inputs})
        for k, (_, _, _, v) in enumerate(inputs):
            np.save(os.path.join(out, "%s.x%d.npy" % (name, k)), v)
        for r, y in enumerate(results):
            np.save(os.path.join(out, "%s.expected%d.npy" % (name, r)), y)
        outcome = check(args.run, out, name, inputs, len(results))
        if isinstance(outcome, str):
            failed += 1
            print("FAIL %s: %s" % (name, outcome))
        else:
            print("ok   %s max_abs_err=%.1e" % (name, outcome))
    exported = [("torch_block", torch_block), ("torch_lstm", torch_lstm)]
    for name, export in exported:
        print("%s ops: %s" % (name, " ".join(export(out))))
        outcome = check(args.run, out, name, [("x", F, None, None)], 1)
        if isinstance(outcome, str):
            failed += 1
            print("FAIL %s: %s" % (name, outcome))
        else:
            print("ok   %s max_abs_err=%.1e" % (name, outcome))
    # The block without the types of its intermediate values: the
    # expansions take Q, K and V's shapes from shape inference instead.
    bare = onnx.load(os.path.join(out, "torch_block.onnx"))
    del bare.graph.value_info[:]
    onnx.save(bare, os.path.join(out, "torch_block_bare.onnx"))
    for suffix in ("x0", "expected0"):
        np.save(os.path.join(out, "torch_block_bare.%s.npy" % suffix),
                np.load(os.path.join(out, "torch_block.%s.npy" % suffix)))
    outcome = check(args.run, out, "torch_block_bare", [("x", F, None, None)], 1)
    if isinstance(outcome, str):
        failed += 1
        print("FAIL torch_block_bare: %s" % outcome)
    else:
        print("ok   torch_block_bare max_abs_err=%.1e" % outcome)
    # An Attention whose mask comes from an RMSNormalization: its shape is
    # known only in the second round, after the first expanded the
    # normalization and left the Attention as it was.
    late = helper.make_graph(
        [helper.make_node("RMSNormalization", ["m", "s"], ["mn"]),
         helper.make_node("Greater", ["mn", "zero"], ["mask"]),
         helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"])],
        "g", [helper.make_tensor_value_info(n, F, shape) for n, shape in
              [("q", [1, 2, 3, 4]), ("k", [1, 2, 5, 4]), ("v", [1, 2, 5, 4]),
               ("m", [3, 5]), ("s", [5])]],
        [helper.make_tensor_value_info("y", F, [1, 2, 3, 4])],
        [onnx.numpy_helper.from_array(np.array(0, np.float32), "zero")])
    late_model = helper.make_model(
        late, opset_imports=[helper.make_opsetid("", 23)])
    late_model.ir_version = 10
    path = os.path.join(out, "attention_late_mask.onnx")
    onnx.save(late_model, path)
    rng = np.random.default_rng(4)
    feeds = [(n, F, None, rng.standard_normal(shape).astype(np.float32))
             for n, shape in [("q", (1, 2, 3, 4)), ("k", (1, 2, 5, 4)),
                              ("v", (1, 2, 5, 4)), ("m", (3, 5)), ("s", (5,))]]
    for k, (_, _, _, v) in enumerate(feeds):
        np.save(os.path.join(out, "attention_late_mask.x%d.npy" % k), v)
    (y,) = onnxruntime.InferenceSession(
        path, providers=["CPUExecutionProvider"]).run(
            None, {n: v for n, _, _, v in feeds})
    np.save(os.path.join(out, "attention_late_mask.expected0.npy"), y)
    outcome = check(args.run, out, "attention_late_mask", feeds, 1)
    if isinstance(outcome, str):
        failed += 1
        print("FAIL attention_late_mask: %s" % outcome)
    else:
        print("ok   attention_late_mask max_abs_err=%.1e" % outcome)
    total = len(all_cases) + len(exported) + 2
    print("expanded ops: %d passed, %d failed" % (total - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
