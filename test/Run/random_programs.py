#!/usr/bin/env python3
"""Random programs through sbp-run's gradient check and training.

Each seed makes a random f64 program on tensors: element-wise ops,
matmuls, batch matmuls, transposes, sum and max reductions broadcast
back, softmax, slices, inserts, concatenations, reshapes, pads, selects,
divisions and elements read out and splat; operands are drawn mostly
from the last values made, so the result depends on much of the program.
Each runs `--check-gradients` on one rank and on four under the search's
plan, and three training steps on a 2x2 mesh against one rank, every
argument a parameter. Prints one line per failure and a summary; exits 1
on a failure.
"""

import argparse
import random
import re
import subprocess
import sys


def tensor_type(shape):
    return "tensor<%sxf64>" % "x".join(map(str, shape))


class Program:
    def __init__(self, seed, extended=False):
        self.r = random.Random(seed)
        self.lines = []
        self.count = 0
        self.extended = extended
        self.args = []

    def new(self):
        self.count += 1
        return "%%v%d" % self.count

    def emit(self, line):
        self.lines.append(line)

    def filled(self, shape, value):
        """A tensor of `shape` filled with the f64 literal `value`."""
        scalar, empty, fill = self.new(), self.new(), self.new()
        t = tensor_type(shape)
        self.emit("%s = arith.constant %s : f64" % (scalar, value))
        self.emit("%s = tensor.empty() : %s" % (empty, t))
        self.emit("%s = linalg.fill ins(%s : f64) outs(%s : %s) -> %s" %
                  (fill, scalar, empty, t, t))
        return fill

    def argument(self, shape):
        """A new argument of `shape` (a convolution's filter)."""
        name = "%%a%d" % len(self.args)
        self.args.append((name, shape))
        return name

    def extended_step(self, values):
        """Convolutions, pooling and loops over images [N, C, H, W]."""
        r = self.r
        images = [v for v in values if len(v[1]) == 4]
        n, s = r.choice(images[-2:])
        t = tensor_type(s)
        kind = r.choice(["conv", "conv", "pool", "loop"])
        if kind == "conv":
            if s[2] < 3 or s[3] < 3:
                return None
            filters = r.choice([2, 3])
            stride = r.choice([1, 2]) if s[2] >= 5 and s[3] >= 5 else 1
            weight = self.argument([filters, s[1], 3, 3])
            out = [s[0], filters, (s[2] - 3) // stride + 1,
                   (s[3] - 3) // stride + 1]
            init, o = self.filled(out, "0.0"), self.new()
            self.emit("%s = linalg.conv_2d_nchw_fchw {dilations = dense<1> : "
                      "tensor<2xi64>, strides = dense<%d> : tensor<2xi64>} "
                      "ins(%s, %s : %s, %s) outs(%s : %s) -> %s" %
                      (o, stride, n, weight, t,
                       tensor_type([filters, s[1], 3, 3]), init,
                       tensor_type(out), tensor_type(out)))
            return o, out
        if kind == "pool":
            if s[2] < 2 or s[3] < 2:
                return None
            maximum = r.random() < 0.5
            out = [s[0], s[1], s[2] - 1, s[3] - 1]
            init = self.filled(out, "0xFFF0000000000000" if maximum else "0.0")
            window, o = self.new(), self.new()
            self.emit("%s = tensor.empty() : tensor<2x2xf64>" % window)
            self.emit("%s = linalg.pooling_nchw_%s {dilations = dense<1> : "
                      "tensor<2xi64>, strides = dense<1> : tensor<2xi64>} "
                      "ins(%s, %s : %s, tensor<2x2xf64>) outs(%s : %s) -> %s" %
                      (o, "max" if maximum else "sum", n, window, t, init,
                       tensor_type(out), tensor_type(out)))
            return o, out
        # A loop of two or three layers, each reading a value from above.
        m = r.choice([v for v in values if v[1] == s])[0]
        lower, upper, one = self.new(), self.new(), self.new()
        h, product, bounded, o = (self.new() for _ in range(4))
        self.emit("%s = arith.constant 0 : index" % lower)
        self.emit("%s = arith.constant %d : index" % (upper, r.choice([2, 3])))
        self.emit("%s = arith.constant 1 : index" % one)
        self.emit("%s = scf.for %%i%s = %s to %s step %s iter_args(%s = %s) -> "
                  "(%s) {\n    %s = arith.mulf %s, %s : %s\n    %s = math.tanh "
                  "%s : %s\n    %s = arith.addf %s, %s : %s\n    scf.yield %s : "
                  "%s\n  }" % (o, o[2:], lower, upper, one, h, n, t, product,
                                h, m, t, bounded, product, t, h + "_next",
                                bounded, h, t, h + "_next", t))
        return o, s

    def step(self, values):
        """Appends one op; its result and shape, or None."""
        r = self.r
        if self.extended and r.random() < 0.5 and any(
                len(v[1]) == 4 for v in values):
            return self.extended_step(values)
        n, s = r.choice(values[-3:]) if r.random() < 0.7 else r.choice(values)
        t = tensor_type(s)
        same = [v for v in values if v[1] == s]
        kind = r.choice(["ew", "ew", "unary", "matmul", "transpose", "reduce",
                         "softmax", "slice", "concat", "collapse", "pad",
                         "maxreduce", "select", "div", "bmm", "insert",
                         "expand", "scalar"])
        if kind == "unary":
            op = r.choice(["math.tanh", "math.sin", "arith.negf", "math.exp"])
            if op == "math.exp":  # of a tanh, to stay bounded
                bounded = self.new()
                self.emit("%s = math.tanh %s : %s" % (bounded, n, t))
                n = bounded
            o = self.new()
            self.emit("%s = %s %s : %s" % (o, op, n, t))
            return o, s
        if kind == "ew":
            m = r.choice(same)[0]
            op = r.choice(["arith.addf", "arith.mulf", "arith.subf",
                           "arith.maximumf"])
            o = self.new()
            self.emit("%s = %s %s, %s : %s" % (o, op, n, m, t))
            return o, s
        if kind == "select":
            m = r.choice(same)[0]
            c, o = self.new(), self.new()
            self.emit("%s = arith.cmpf ogt, %s, %s : %s" % (c, n, m, t))
            self.emit("%s = arith.select %s, %s, %s : tensor<%sxi1>, %s" %
                      (o, c, m, n, "x".join(map(str, s)), t))
            return o, s
        if kind == "div":
            m = r.choice(same)[0]
            square, one, denominator, o = (self.new() for _ in range(4))
            self.emit("%s = arith.mulf %s, %s : %s" % (square, m, m, t))
            self.emit("%s = arith.constant dense<1.0> : %s" % (one, t))
            self.emit("%s = arith.addf %s, %s : %s" % (denominator, square,
                                                       one, t))
            self.emit("%s = arith.divf %s, %s : %s" % (o, n, denominator, t))
            return o, s
        if kind in ("matmul", "bmm"):
            batched = kind == "bmm"
            if len(s) != (3 if batched else 2):
                return None
            width = r.choice([2, 4, 6, 8])
            rhs = s[:-2] + [s[-1], width] if batched else [s[1], width]
            candidates = [v for v in values if v[1] == rhs]
            if not candidates:
                return None
            out = s[:-1] + [width]
            init, o = self.filled(out, "0.0"), self.new()
            self.emit("%s = linalg.%s ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                      % (o, "batch_matmul" if batched else "matmul", n,
                         r.choice(candidates)[0], t, tensor_type(rhs), init,
                         tensor_type(out), tensor_type(out)))
            return o, out
        if kind == "transpose":
            if len(s) < 2:
                return None
            perm = list(range(len(s)))
            r.shuffle(perm)
            out = [s[p] for p in perm]
            empty, o = self.new(), self.new()
            self.emit("%s = tensor.empty() : %s" % (empty, tensor_type(out)))
            self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
                      "permutation = [%s]" % (o, n, t, empty, tensor_type(out),
                                              ", ".join(map(str, perm))))
            return o, out
        if kind in ("reduce", "maxreduce"):
            if len(s) < 2:
                return None
            axis = r.randrange(len(s))
            out = s[:axis] + s[axis + 1:]
            maximum = kind == "maxreduce"
            init = self.filled(out, "0xFFF0000000000000" if maximum else "0.0")
            reduced = self.new()
            self.emit("%s = linalg.reduce { arith.%s } ins(%s : %s) outs(%s : "
                      "%s) dimensions = [%d]" %
                      (reduced, "maximumf" if maximum else "addf", n, t, init,
                       tensor_type(out), axis))
            if maximum:
                return reduced, out
            empty, o = self.new(), self.new()
            self.emit("%s = tensor.empty() : %s" % (empty, t))
            self.emit("%s = linalg.broadcast ins(%s : %s) outs(%s : %s) "
                      "dimensions = [%d]" % (o, reduced, tensor_type(out),
                                             empty, t, axis))
            return o, s
        if kind == "softmax":
            empty, o = self.new(), self.new()
            self.emit("%s = tensor.empty() : %s" % (empty, t))
            self.emit("%s = linalg.softmax dimension(%d) ins(%s : %s) outs(%s "
                      ": %s) -> %s" % (o, r.randrange(len(s)), n, t, empty, t,
                                       t))
            return o, s
        if kind == "slice":
            axis = r.randrange(len(s))
            if s[axis] < 4:
                return None
            out = list(s)
            out[axis] = s[axis] // 2
            offsets = [0] * len(s)
            offsets[axis] = r.randint(0, s[axis] - out[axis])
            o = self.new()
            self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" %
                      (o, n, ", ".join(map(str, offsets)),
                       ", ".join(map(str, out)), ", ".join(["1"] * len(s)), t,
                       tensor_type(out)))
            return o, out
        if kind == "insert":
            smaller = [v for v in values if len(v[1]) == len(s) and v[1] != s
                       and all(a <= b for a, b in zip(v[1], s))]
            if not smaller:
                return None
            m, ms = r.choice(smaller)
            offsets = [r.randint(0, b - a) for a, b in zip(ms, s)]
            o = self.new()
            self.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s] : %s "
                      "into %s" % (o, m, n, ", ".join(map(str, offsets)),
                                   ", ".join(map(str, ms)),
                                   ", ".join(["1"] * len(s)), tensor_type(ms),
                                   t))
            return o, s
        if kind == "concat":
            m, ms = r.choice([v for v in values if len(v[1]) == len(s)])
            axis = r.randrange(len(s))
            if any(ms[d] != s[d] for d in range(len(s)) if d != axis):
                return None
            out = list(s)
            out[axis] += ms[axis]
            o = self.new()
            self.emit("%s = tensor.concat dim(%d) %s, %s : (%s, %s) -> %s" %
                      (o, axis, n, m, t, tensor_type(ms), tensor_type(out)))
            return o, out
        if kind in ("collapse", "expand"):
            collapse = kind == "collapse"
            if (len(s) < 2) if collapse else (s[0] % 2):
                return None
            out = [s[0] * s[1]] + s[2:] if collapse else [2, s[0] // 2] + s[1:]
            rank = len(s) if collapse else len(out)
            groups = "[[0, 1]" + "".join(", [%d]" % d
                                         for d in range(2, rank)) + "]"
            o = self.new()
            if collapse:
                self.emit("%s = tensor.collapse_shape %s %s : %s into %s" %
                          (o, n, groups, t, tensor_type(out)))
            else:
                self.emit("%s = tensor.expand_shape %s %s output_shape [%s] : "
                          "%s into %s" % (o, n, groups,
                                          ", ".join(map(str, out)), t,
                                          tensor_type(out)))
            return o, out
        if kind == "pad":
            low = [r.randint(0, 2) for _ in s]
            high = [r.randint(0, 1) for _ in s]
            out = [a + b + c for a, b, c in zip(s, low, high)]
            value, o = self.new(), self.new()
            indices = ", ".join("%%i%d: index" % d for d in range(len(s)))
            self.emit("%s = arith.constant 0.5 : f64" % value)
            self.emit("%s = tensor.pad %s low[%s] high[%s] {\n  ^bb0(%s):\n"
                      "    tensor.yield %s : f64\n  } : %s to %s" %
                      (o, n, ", ".join(map(str, low)),
                       ", ".join(map(str, high)), indices, value, t,
                       tensor_type(out)))
            return o, out
        # An element read out, splat and multiplied in.
        indices = []
        for size in s:
            index = self.new()
            self.emit("%s = arith.constant %d : index" % (index,
                                                          r.randrange(size)))
            indices.append(index)
        element, splat, o = self.new(), self.new(), self.new()
        self.emit("%s = tensor.extract %s[%s] : %s" % (element, n,
                                                      ", ".join(indices), t))
        self.emit("%s = tensor.splat %s : %s" % (splat, element, t))
        self.emit("%s = arith.mulf %s, %s : %s" % (o, splat, n, t))
        return o, s

    def text(self):
        r = self.r
        for _ in range(r.randint(2, 4)):
            self.argument([r.choice([2, 4, 6, 8])
                           for _ in range(r.choice([1, 2, 2, 3]))])
        if self.extended:
            self.argument([2, r.choice([1, 2, 3]), r.choice([5, 6, 7]),
                           r.choice([5, 6, 8])])
        values = list(self.args)
        for _ in range(r.randint(4, 10)):
            made = self.step(values)
            if made:
                values.append(made)
        result, shape = values[-1]
        return "func.func @f(%s) -> %s {\n  %s\n  return %s : %s\n}\n" % (
            ", ".join("%s: %s" % (a, tensor_type(s)) for a, s in self.args),
            tensor_type(shape), "\n  ".join(self.lines), result,
            tensor_type(shape))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--seeds", default="1-40", help="first-last")
    parser.add_argument("--images", action="store_true",
                        help="also an image argument [N, C, H, W] and "
                        "convolutions, pooling and loops over images")
    parser.add_argument("dir")
    args = parser.parse_args()
    first, last = map(int, args.seeds.split("-"))
    failed = 0
    for seed in range(first, last + 1):
        text = Program(seed, args.images).text()
        path = "%s/p%d.mlir" % (args.dir, seed)
        with open(path, "w") as f:
            f.write(text)
        params = ",".join("arg%s" % k for k in
                          sorted(set(re.findall(r"%a(\d+):", text))))
        runs = [["--check-gradients"],
                ["--check-gradients", "--ranks", "4", "--auto"],
                ["--train", "--steps", "3", "--mesh", "2x2", "--auto",
                 "--reference", "--plain-reference", "--params", params]]
        for flags in runs:
            done = subprocess.run([args.run, path] + flags,
                                  capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                failed += 1
                tail = (done.stdout + done.stderr).strip().splitlines()[-2:]
                print("FAIL seed %d (%s): exit %d: %s" % (
                    seed, " ".join(flags[:3]), done.returncode, " | ".join(tail)))
    total = 3 * (last - first + 1)
    print("random programs: %d passed, %d failed" % (total - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
