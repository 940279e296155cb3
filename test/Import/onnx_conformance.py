#!/usr/bin/env python3
"""Runs the ONNX backend node tests through sbp.

Every case of the node suite (model.onnx with input_N.pb/output_N.pb data
sets) whose ops sbp imports is imported and run with sbp-run on one rank,
and, partitioned, on two ranks with each graph input split along its first
dimension (data parallelism; the weights of a case are replicated). Results
are compared with the expected outputs as ONNX's own backend test does
(rtol 1e-3, atol 1e-7; exact for integers and bools).

Prints one line per failure and `N passed, N failed, N skipped`. Exits 1 when
a case fails that the expected-failures file does not list (or a listed one
passes, so that the list stays true). --markdown writes the per-op table of
docs/onnx.md.

Needs Debian's python3-onnx (and numpy): run it with /usr/bin/python3.
"""

import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import google.protobuf.message
import numpy as np
import onnx
from onnx import numpy_helper

from sharding import shard_inputs

# The ops sbp imports (docs/onnx.md), and Constant, which any may use.
SUPPORTED = {
    "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal",
    "Neg", "Exp", "Log", "Erf", "Tanh", "Sigmoid", "Relu", "LeakyRelu",
    "HardSigmoid", "Softmax", "LogSoftmax", "LayerNormalization", "ReduceMean",
    "ReduceSum", "ReduceMax", "Reshape", "Transpose", "Flatten", "Squeeze",
    "Unsqueeze", "Concat", "Split", "Slice", "Gather", "Where", "Equal", "Less",
    "Greater", "Cast", "Identity", "Expand", "Shape", "Range",
    "ConstantOfShape", "Conv", "ConvTranspose", "BatchNormalization", "Clip",
    "MaxPool", "AveragePool", "GlobalAveragePool", "Resize", "Einsum",
    "Abs", "GlobalMaxPool", "GreaterOrEqual", "LessOrEqual", "ReduceMin",
    "ReduceProd", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
    "Asinh", "Acosh", "Atanh", "Floor", "Ceil", "Round", "Sign", "Softplus",
    "Softsign", "Elu", "Selu", "Min", "Max", "Sum", "Mean", "Dropout",
    "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "CastLike", "ThresholdedRelu", "HardSwish", "Celu",
    "PRelu", "Trilu", "CumSum", "NegativeLogLikelihoodLoss",
    "SoftmaxCrossEntropyLoss", "ArgMax", "ArgMin", "GatherElements", "Mod",
    "Constant", "And", "Or", "Xor", "Not", "IsNaN", "IsInf", "Shrink",
    "Pad", "InstanceNormalization", "Tile", "DepthToSpace", "SpaceToDepth",
    "Size", "EyeLike", "OneHot", "ScatterElements", "Scatter", "ScatterND",
    "GatherND", "TopK", "Gelu", "GroupNormalization", "RMSNormalization",
    "RotaryEmbedding", "Attention", "LSTM", "GRU", "RNN", "LRN",
    "MeanVarianceNormalization", "Hardmax", "Upsample",
}


# Case name prefixes that abbreviate their op (the expanded cross-entropy
# cases compute it with the likelihood loss).
ALIASES = {"sce": ["SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"],
           "nllloss": ["NegativeLogLikelihoodLoss"]}


def main_op(name, ops):
    """The op a case is about: the one its name starts with."""
    key = name[len("test_"):].replace("_", "").lower()
    for prefix, aliased in ALIASES.items():
        for op in aliased:
            if name.startswith("test_%s_" % prefix) and op in ops:
                return op
    best = None
    for op in ops:
        if key.startswith(op.lower()) and (best is None or len(op) > len(best)):
            best = op
    return best or sorted(ops)[0]


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def compare(actual, expected):
    if actual.shape != expected.shape:
        return "shape %s, expected %s" % (actual.shape, expected.shape)
    if expected.dtype.kind in "biu":
        if not np.array_equal(actual.astype(expected.dtype), expected):
            return "values differ"
        return None
    if not np.allclose(actual, expected, rtol=1e-3, atol=1e-7, equal_nan=True):
        err = np.max(np.abs(actual.astype(np.float64) - expected))
        return "max abs error %.3g" % err
    return None


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    for line in lines:
        if "error" in line.lower() or "sbp-run:" in line or ": " in line:
            return line.strip()[:300]
    return (lines[0] if lines else "no output").strip()[:300]


def run_case(case_dir, args):
    try:
        return run_case_checked(case_dir, args)
    except (ValueError, onnx.onnx_cpp2py_export.checker.ValidationError,
            google.protobuf.message.DecodeError) as e:
        # Sequence or optional data, which no op sbp imports produces.
        name = os.path.basename(case_dir)
        return name, "(data)", "skipped", "data not a tensor: %s" % e


def run_case_checked(case_dir, args):
    name = os.path.basename(case_dir)
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    ops = sorted({n.op_type for n in model.graph.node})
    op = main_op(name, ops) if ops else "(none)"
    unsupported = [o for o in ops if o not in SUPPORTED]
    if not ops or unsupported:
        return name, op, "skipped", "ops not imported: " + ", ".join(unsupported)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    data_sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    model_path = os.path.join(case_dir, "model.onnx")
    sharded = [i.name for i in inputs
               if len(i.type.tensor_type.shape.dim) > 0 and
               i.type.tensor_type.shape.dim[0].dim_value > 1]
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        if args.check_gradients:
            return check_gradients(name, op, model_path, inputs,
                                   data_sets[:1], tmp, args)
        for data_set in data_sets:
            flags = input_flags(inputs, data_set, tmp)
            for ranks in args.ranks:
                program = model_path
                if ranks > 1:
                    # Partitioned: import to MLIR, split the inputs.
                    opt = subprocess.run(
                        [args.opt, model_path, "--onnx-weights=constants"] +
                        ["--onnx-input-value=" + f for f in flags],
                        capture_output=True, text=True, timeout=args.timeout)
                    if opt.returncode != 0:
                        return (name, op, "failed",
                                "import: " + first_line(opt.stderr))
                    program = os.path.join(tmp, "sharded.mlir")
                    with open(program, "w") as f:
                        f.write(shard_inputs(opt.stdout, sharded, ranks))
                out_dir = os.path.join(tmp, "out%d" % ranks)
                cmd = [args.run, program, "--ranks", str(ranks),
                       "--output-dir", out_dir] + ["--input=" + f for f in flags]
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True,
                                          timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    return name, op, "failed", "%d rank(s): timed out" % ranks
                if proc.returncode != 0:
                    return (name, op, "failed", "%d rank(s): exit %d: %s" %
                            (ranks, proc.returncode,
                             first_line(proc.stderr + proc.stdout)))
                for k in range(len(model.graph.output)):
                    expected = load_tensor(
                        os.path.join(data_set, "output_%d.pb" % k))
                    actual = np.load(os.path.join(out_dir, "result%d.npy" % k))
                    problem = compare(actual, expected)
                    if problem:
                        return (name, op, "failed", "%d rank(s): output %d: %s"
                                % (ranks, k, problem))
    return name, op, "passed", ""


# Why a case has no training step to check: no float argument, a result
# no loss is made from, parameters of two float types, or a loss that is
# not a number at the inputs.
NOT_TRAINABLE = ("the first result is not a float tensor", "has no parameters",
                 "the parameters have different element types",
                 "at these inputs; give inputs inside")


def input_flags(inputs, data_set, tmp, floats=None):
    """--input flags giving the data set's inputs (saved as .npy in `tmp`):
    all of them, or, where `floats` is given, the floats of rank at most
    `floats` and the others."""
    flags = []
    for k, info in enumerate(inputs):
        path = os.path.join(data_set, "input_%d.pb" % k)
        if not os.path.exists(path):
            continue
        value = load_tensor(path)
        if floats is not None and value.dtype.kind == "f" and value.ndim > floats:
            continue
        npy = os.path.join(tmp, "input_%d.npy" % k)
        np.save(npy, value)
        flags.append("%s=%s" % (info.name, npy))
    return flags


def check_gradients(name, op, model_path, inputs, data_sets, tmp, args):
    """sbp-run --check-gradients: every float argument's gradient against
    central finite differences of the loss, at random float inputs (the
    data sets' own sit on kinks and jumps by design: ReLU's and Floor's at
    0 and 2) and the first data set's others (indices, shapes, axes); where
    the import needs their values, the data set's float scalars and
    vectors too (Resize's scales, OneHot's depth, Pad's value)."""
    if name in args.expected:
        return name, op, "skipped", "fails without gradients"
    for floats in (-1, 1):
        flags = input_flags(inputs, data_sets[0], tmp, floats)
        cmd = [args.run, model_path, "--check-gradients"] + [
            "--input=" + f for f in flags]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return name, op, "failed", "gradients: timed out"
        output = proc.stderr + proc.stdout
        if proc.returncode != 2 or any(s in output for s in NOT_TRAINABLE):
            break
    if proc.returncode == 0:
        return name, op, "passed", ""
    if proc.returncode == 2 and any(s in output for s in NOT_TRAINABLE):
        return name, op, "skipped", "no training step: " + first_line(output)
    return name, op, "failed", "gradients: exit %d: %s" % (
        proc.returncode, first_line(output))


def write_markdown(path, results):
    """The per-op table of docs/onnx.md: cases whose ops are all imported."""
    per_op = {}
    for name, op, status, reason in results:
        if status != "skipped":
            per_op.setdefault(op, []).append(status)
    lines = ["| op | cases | passed | failed |", "|---|---|---|---|"]
    for op in sorted(per_op):
        statuses = per_op[op]
        lines.append("| %s | %d | %d | %d |" % (
            op, len(statuses), statuses.count("passed"),
            statuses.count("failed")))
    lines += ["", "Failures:", ""]
    for name, op, status, reason in sorted(results):
        if status == "failed":
            reason = re.sub(r"\S*/model\.onnx: ", "", reason)
            lines.append("- `%s` (%s): %s" % (name, op, reason))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--data",
                        default="/usr/share/libonnx-testdata/data/node")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--filter", default="", help="regex on case names")
    parser.add_argument("--expected-failures", default="")
    parser.add_argument("--markdown", default="")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--check-gradients", action="store_true",
                        help="check each case's gradients against finite "
                        "differences instead of its outputs")
    args = parser.parse_args()
    args.ranks = [int(r) for r in args.ranks.split(",")]
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)

    expected = set()
    if args.expected_failures:
        with open(args.expected_failures) as f:
            for line in f:
                line = line.split("#")[0].strip()
                if line:
                    expected.add(line)
    args.expected = expected

    cases = sorted(d for d in glob.glob(os.path.join(args.data, "test_*"))
                   if re.search(args.filter, os.path.basename(d)))
    if not cases:
        print("no cases under %s" % args.data)
        return 2
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, args), cases))

    status = 0
    for name, op, result, reason in results:
        if result == "failed":
            mark = "" if name in expected else "  (unexpected)"
            print("FAIL %s (%s): %s%s" % (name, op, reason, mark))
            if name not in expected:
                status = 1
        elif result == "passed" and name in expected:
            print("UNEXPECTED PASS %s (%s): remove it from %s" %
                  (name, op, args.expected_failures))
            status = 1
    passed = sum(1 for r in results if r[2] == "passed")
    failed = sum(1 for r in results if r[2] == "failed")
    skipped = sum(1 for r in results if r[2] == "skipped")
    rate = 100.0 * passed / max(passed + failed, 1)
    if args.check_gradients:
        print("onnx node tests, gradients: %.1f%% of %d trainable cases pass"
              % (rate, passed + failed))
    else:
        print("onnx node tests on ranks %s: %.1f%% of %d imported cases pass"
              % (",".join(map(str, args.ranks)), rate, passed + failed))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if args.markdown:
        write_markdown(args.markdown, results)
    return status


if __name__ == "__main__":
    sys.exit(main())
