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
             helper.make_node("Unique", ["x"], ["v"], name="distinct")],
            [vi("x", [4])],
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
    # Gathers at constant indices: a scalar and a run are slices, others
    # stay gathers.
    models["const_gathers"] = model(
        [helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))),
         helper.make_node("Constant", [], ["run"], value=numpy_helper.from_array(np.array([-3, -2], np.int64))),
         helper.make_node("Constant", [], ["jump"], value=numpy_helper.from_array(np.array([2, 0], np.int64))),
         helper.make_node("Gather", ["x", "one"], ["y0"], axis=0),
         helper.make_node("Gather", ["x", "run"], ["y1"], axis=1),
         helper.make_node("Gather", ["x", "jump"], ["y2"], axis=1)],
        [vi("x", [3, 4])], [vi("y0", [4]), vi("y1", [3, 2]), vi("y2", [3, 2])])
    models.update(folded_shapes())
    models.update(later_opsets())
    models.update(external_data(out))
    for name, m in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


def folded_shapes():
    """Expand's shape computed from constants alone, by ops the importer
    builds as loops: each node whose inputs are constants is evaluated at
    import time. The output's shape is left unknown to shape inference."""
    def const(name, value, dtype=np.int64):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
            np.array(value, dtype), name))
    expand = helper.make_node("Expand", ["x", "shape"], ["y"], name="/Expand")
    io = ([vi("x", [1, 1, 8])], [vi("y", ["a", "b", "c"])])
    return {
        # The class token's expand of a ViT exported by TorchScript.
        "fold_where": model(
            [const("three", [3]),
             helper.make_node("ConstantOfShape", ["three"], ["ones"],
                              value=numpy_helper.from_array(np.array([1], np.int64))),
             const("minus", -1),
             helper.make_node("Mul", ["ones", "minus"], ["neg"]),
             const("target", [2, -1, -1]),
             helper.make_node("Equal", ["target", "neg"], ["unset"]),
             helper.make_node("Where", ["unset", "ones", "target"], ["shape"]),
             expand], *io),
        # Float math, Range, CumSum, a reduction and Tile.
        "fold_math": model(
            [const("zero", 0.0, np.float32), const("two", 2.0, np.float32),
             helper.make_node("Cos", ["zero"], ["one"]),
             helper.make_node("Mul", ["one", "two"], ["twof"]),
             helper.make_node("Cast", ["twof"], ["n"], to=TensorProto.INT64),
             const("start", 0), const("step", 1),
             helper.make_node("Range", ["start", "n", "step"], ["r"]),
             const("axis", 0),
             helper.make_node("CumSum", ["r", "axis"], ["c"]),
             helper.make_node("ReduceMax", ["c"], ["m"], keepdims=1),
             const("reps", [1]),
             helper.make_node("Tile", ["m", "reps"], ["one1"]),
             helper.make_node("Add", ["one1", "one1"], ["two1"]),
             const("rest", [1, 8]),
             helper.make_node("Concat", ["two1", "rest"], ["shape"], axis=0),
             expand], *io),
    }


def later_opsets():
    """Ops whose form changed after opset 17, at opset 20 ("adapted20"),
    and the same computation written in opset 17 ("adapted17")."""
    I64 = TensorProto.INT64
    axes1 = numpy_helper.from_array(np.array([1], np.int64), "axes1")
    axes0 = numpy_helper.from_array(np.array([0], np.int64), "axes0")
    const = lambda name, v: helper.make_node("Constant", [], [name], value_float=v)
    io = ([vi("x", [2, 6])],
          [vi("y0", [2, 3]), vi("y1", [2, 6]), vi("y2", [6]), vi("y3", [2, 6])])
    later = model(
        [helper.make_node("ReduceMean", ["x", "axes1"], ["m"], keepdims=1),
         helper.make_node("Sub", ["x", "m"], ["d"]),
         helper.make_node("Gelu", ["d"], ["g"]),
         helper.make_node("Gelu", ["d"], ["y1"], approximate="tanh"),
         helper.make_node("Split", ["g"], ["s0", "s1"], axis=1, num_outputs=2),
         helper.make_node("ReduceMax", ["s0", ""], ["k0"], noop_with_empty_axes=1),
         helper.make_node("Add", ["k0", "s1"], ["y0"]),
         helper.make_node("ReduceSumSquare", ["x", "axes0"], ["y2"], keepdims=0),
         helper.make_node("Cast", ["d"], ["y3"], to=TensorProto.FLOAT, saturate=1)],
        *io, [axes1, axes0], opset=20)
    gelu = lambda x, y, p: [
        const(p + "c", 0.7071067812), helper.make_node("Mul", [x, p + "c"], [p + "a"]),
        helper.make_node("Erf", [p + "a"], [p + "e"]), const(p + "one", 1.0),
        helper.make_node("Add", [p + "e", p + "one"], [p + "p"]),
        helper.make_node("Mul", [x, p + "p"], [p + "q"]), const(p + "h", 0.5),
        helper.make_node("Mul", [p + "q", p + "h"], [y])]
    gelu_tanh = [
        helper.make_node("Mul", ["d", "d"], ["d2"]), helper.make_node("Mul", ["d2", "d"], ["d3"]),
        const("k1", 0.044715), helper.make_node("Mul", ["d3", "k1"], ["t1"]),
        helper.make_node("Add", ["d", "t1"], ["t2"]), const("k2", 0.7978845608),
        helper.make_node("Mul", ["t2", "k2"], ["t3"]), helper.make_node("Tanh", ["t3"], ["t4"]),
        const("t1one", 1.0), helper.make_node("Add", ["t4", "t1one"], ["t5"]),
        helper.make_node("Mul", ["d", "t5"], ["t6"]), const("th", 0.5),
        helper.make_node("Mul", ["t6", "th"], ["y1"])]
    before = model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
         helper.make_node("Sub", ["x", "m"], ["d"])] + gelu("d", "g", "g") + gelu_tanh +
        [helper.make_node("Split", ["g"], ["s0", "s1"], axis=1),
         helper.make_node("Add", ["s0", "s1"], ["y0"]),
         helper.make_node("ReduceSumSquare", ["x"], ["y2"], axes=[0], keepdims=0),
         helper.make_node("Identity", ["d"], ["y3"])], *io)
    # Errors: axes computed at run time; an opset newer than any known.
    runtime_axes = model(
        [helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean")],
        [vi("x", [2, 6]), vi("axes", [1], I64)], [vi("y", None)], opset=18)
    newest = model([helper.make_node("Relu", ["x"], ["y"])],
                   [vi("x", [4])], [vi("y", [4])], opset=24)
    return {"adapted20": later, "adapted17": before,
            "runtime_axes": runtime_axes, "opset24": newest}


def external_data(out):
    """gemm's weights in a file beside the model, and three broken forms."""
    def gemm(location, offset=0, length=None):
        w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
        w.ClearField("raw_data")
        w.ClearField("float_data")
        w.data_location = TensorProto.EXTERNAL
        entries = {"location": location, "offset": str(offset)}
        if length is not None:
            entries["length"] = str(length)
        for key, value in entries.items():
            entry = w.external_data.add()
            entry.key, entry.value = key, value
        return model(
            [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1, name="fc")],
            [vi("x", [2, 3])], [vi("y", [2, 4])], [w])
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + np.arange(12, dtype=np.float32).tobytes())
    return {"external": gemm("weights.bin", 16, 48),
            "external_missing": gemm("absent.bin"),
            "external_outside": gemm("../weights.bin"),
            "external_short": gemm("weights.bin", 16, 64)}


if __name__ == "__main__":
    main(sys.argv[1])
