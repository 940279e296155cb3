#!/usr/bin/env python3
"""Writes small ONNX models for the importer's lit tests into a folder.

Needs Debian's python3-onnx. Each model is one or a few nodes built with
onnx.helper, so that a test's input is visible in this file.
"""

import os
import sys

from onnx import TensorProto, helper, numpy_helper
import numpy as np

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    models = {
        # Two unsupported ops: the error lists both.
        "unsupported": model(
            [helper.make_node("NonZero", ["x"], ["nz"], name="find"),
             helper.make_node("TopK", ["x", "k"], ["v", "i"], name="best")],
            [vi("x", [4]), vi("k", [1], TensorProto.INT64)],
            [vi("nz", None, TensorProto.INT64), vi("v", None)]),
        "opset18": model([helper.make_node("Relu", ["x"], ["y"])],
                         [vi("x", [4])], [vi("y", [4])], opset=18),
        "dynamic": model([helper.make_node("Relu", ["x"], ["y"])],
                         [vi("x", ["batch", 4])], [vi("y", ["batch", 4])]),
        # Broadcasting add, Gemm with transB and a weight initializer.
        "gemm": model(
            [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1,
                              name="fc")],
            [vi("x", [2, 3])], [vi("y", [2, 4])],
            [numpy_helper.from_array(np.ones((4, 3), np.float32), "w"),
             numpy_helper.from_array(np.ones((4,), np.float32), "b")]),
        "conv": model(
            [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1],
                              strides=[2, 2], group=2, name="conv")],
            [vi("x", [1, 4, 8, 8]), vi("w", [6, 2, 3, 3])],
            [vi("y", [1, 6, 4, 4])]),
        # Pad in every mode, one pad negative (a crop), the constant value
        # an input (here an initializer); f64 for the gradient check.
        "pads": model(
            [helper.make_node("Pad", ["x", "p1"], ["r"], mode="reflect"),
             helper.make_node("Pad", ["r", "p2"], ["e"], mode="edge"),
             helper.make_node("Pad", ["e", "p3", "v"], ["c"]),
             helper.make_node("Tanh", ["c"], ["y"])],
            [vi("x", [2, 5], TensorProto.DOUBLE)],
            [vi("y", [5, 10], TensorProto.DOUBLE)],
            [numpy_helper.from_array(np.array([0, 2, 1, 3], np.int64), "p1"),
             numpy_helper.from_array(np.array([1, 1, 0, 0], np.int64), "p2"),
             numpy_helper.from_array(np.array([0, -1, 1, 0], np.int64), "p3"),
             numpy_helper.from_array(np.array(0.5), "v")]),
        # Layout ops (DepthToSpace in CRD mode, SpaceToDepth, Tile) around
        # InstanceNormalization; f64 for the gradient check.
        "layout": model(
            [helper.make_node("DepthToSpace", ["x"], ["d"], blocksize=2,
                              mode="CRD"),
             helper.make_node("SpaceToDepth", ["d"], ["s"], blocksize=2),
             helper.make_node("InstanceNormalization", ["s", "g", "b"],
                              ["i"], epsilon=1e-3),
             helper.make_node("Tile", ["i", "r"], ["y"])],
            [vi("x", [1, 8, 2, 3], TensorProto.DOUBLE)],
            [vi("y", [1, 8, 4, 3], TensorProto.DOUBLE)],
            [numpy_helper.from_array(np.linspace(0.5, 1.5, 8), "g"),
             numpy_helper.from_array(np.linspace(-1, 1, 8), "b"),
             numpy_helper.from_array(np.array([1, 1, 2, 1], np.int64), "r")]),
        # ScatterND adding rows (one twice) and ScatterElements setting
        # along axis 1 (a column of indices with a repeat, one negative),
        # then Tanh; f64 for the gradient check.
        "scatters": model(
            [helper.make_node("ScatterND", ["x", "rows", "u"], ["a"],
                              reduction="add"),
             helper.make_node("ScatterElements", ["a", "cols", "v"], ["s"],
                              axis=1),
             helper.make_node("Tanh", ["s"], ["y"])],
            [vi("x", [5, 4], TensorProto.DOUBLE),
             vi("u", [3, 4], TensorProto.DOUBLE),
             vi("v", [5, 2], TensorProto.DOUBLE)],
            [vi("y", [5, 4], TensorProto.DOUBLE)],
            [numpy_helper.from_array(np.array([[1], [3], [1]], np.int64),
                                     "rows"),
             numpy_helper.from_array(
                 np.array([[0, 2], [1, 1], [3, -1], [2, 0], [1, 3]],
                          np.int64), "cols")]),
        # GatherND of index pairs (one repeated, one negative); f64.
        "gathernd": model(
            [helper.make_node("GatherND", ["x", "at"], ["g"]),
             helper.make_node("Tanh", ["g"], ["y"])],
            [vi("x", [4, 3, 2], TensorProto.DOUBLE)],
            [vi("y", [3, 2], TensorProto.DOUBLE)],
            [numpy_helper.from_array(
                np.array([[1, 2], [3, -3], [1, 2]], np.int64), "at")]),
        # An embedding lookup with negative ids; f64.
        "lookup": model(
            [helper.make_node("Gather", ["table", "ids"], ["g"]),
             helper.make_node("Tanh", ["g"], ["y"])],
            [vi("table", [6, 3], TensorProto.DOUBLE)],
            [vi("y", [3, 2, 3], TensorProto.DOUBLE)],
            [numpy_helper.from_array(
                np.array([[0, -1], [5, 2], [-1, 3]], np.int64), "ids")]),
        # An MLP exported with its loss (PyTorch's cross_entropy): class
        # weights, labels of -1 ignored.
        "mlp_loss": model(
            [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"]),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["logits"],
                              name="fc2"),
             helper.make_node("SoftmaxCrossEntropyLoss",
                              ["logits", "labels", "class_weights"],
                              ["loss"], ignore_index=-1, name="xent")],
            [vi("x", [8, 16]), vi("labels", [8], TensorProto.INT64)],
            [vi("loss", [])],
            [numpy_helper.from_array(
                np.random.default_rng(0).normal(0, 0.3, (16, 32))
                .astype(np.float32), "w1"),
             numpy_helper.from_array(np.zeros(32, np.float32), "b1"),
             numpy_helper.from_array(
                 np.random.default_rng(1).normal(0, 0.3, (32, 5))
                 .astype(np.float32), "w2"),
             numpy_helper.from_array(np.zeros(5, np.float32), "b2"),
             numpy_helper.from_array(
                 np.array([1, 2, 1, 1, 0.5], np.float32), "class_weights")]),
        # A reduction the loss ops do not have.
        "loss_reduction": model(
            [helper.make_node("NegativeLogLikelihoodLoss", ["x", "labels"],
                              ["loss"], reduction="avg", name="nll")],
            [vi("x", [4, 3]), vi("labels", [4], TensorProto.INT64)],
            [vi("loss", [])]),
        "gather": model(
            [helper.make_node("Gather", ["table", "ids"], ["y"], name="embed")],
            [vi("table", [10, 8]), vi("ids", [2, 3], TensorProto.INT64)],
            [vi("y", [2, 3, 8])]),
        # A shape computed from Shape/Gather/Concat, folded at import.
        "shape": model(
            [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Concat", ["n", "minus"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"], name="flat")],
            [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
            [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus")]),
        # A weight held by a Constant node, and a scalar one.
        "constweight": model(
            [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(
                np.ones((3, 4), np.float32), "w")),
             helper.make_node("Constant", [], ["two"], value_float=2.0),
             helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
             helper.make_node("Mul", ["xw", "two"], ["y"], name="scale")],
            [vi("x", [2, 3])], [vi("y", [2, 4])]),
        # Shapes that do not broadcast, in a node without a name.
        "badshapes": model([helper.make_node("Add", ["x", "y"], ["z"])],
                           [vi("x", [2, 3]), vi("y", [4])], [vi("z", [2, 4])]),
        "reshape_input": model(
            [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
            [vi("x", [2, 6]), vi("shape", [2], TensorProto.INT64)],
            [vi("y", [3, 4])]),
    }
    for name, m in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
