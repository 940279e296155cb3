"""Self-checking suite of the StableHLO importer against JAX.

For every op the importer converts, small JAX functions are exported with
`jax.jit(f).lower(*args).as_text()` (each must contain the op it covers),
run through sbp-run, and their results compared with JAX's own. Each case
runs on 1 rank and on 2 ranks with the arguments split by JAX's GSPMD
shardings (`mhlo.sharding`, imported as sbp layouts) where a dimension
divides. Prints one line per case and `N passed, N failed`; exits 1 on any
failure.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", False)
rng = np.random.default_rng(0)


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def i32(*shape, low=0, high=5):
    return rng.integers(low, high, shape).astype(np.int32)


def cases():
    """(name, op that must appear, function, arguments)."""
    x, y = f32(4, 6), f32(4, 6)
    pos = f32(4, 6, low=0.1, high=3.0)
    ints, ints2 = i32(4, 6, low=-7, high=8), i32(4, 6, low=1, high=5)
    bools, bools2 = x > 0, y > 0
    yield "constant", "constant", lambda a: a + jnp.array([1., 2., 3., 4., 5., 6.], jnp.float32), (x,)
    yield "iota", "iota", lambda a: a * jnp.arange(6, dtype=jnp.float32), (x,)
    yield "add", "add", lambda a, b: a + b, (x, y)
    yield "add_i32", "add", lambda a, b: a + b, (ints, ints2)
    yield "subtract", "subtract", lambda a, b: a - b, (x, y)
    yield "multiply", "multiply", lambda a, b: a * b, (x, y)
    yield "divide", "divide", lambda a, b: a / b, (x, pos)
    yield "divide_i32", "divide", lambda a, b: lax.div(a, b), (ints, ints2)
    yield "maximum", "maximum", jnp.maximum, (x, y)
    yield "minimum", "minimum", jnp.minimum, (x, y)
    yield "power", "power", lambda a, b: a ** b, (pos, y)
    yield "negate", "negate", lambda a: -a, (x,)
    yield "abs", "abs", jnp.abs, (x,)
    yield "abs_i32", "abs", jnp.abs, (ints,)
    yield "exponential", "exponential", jnp.exp, (x,)
    yield "log", "log", jnp.log, (pos,)
    yield "sqrt", "sqrt", jnp.sqrt, (pos,)
    yield "rsqrt", "rsqrt", lax.rsqrt, (pos,)
    yield "tanh", "tanh", jnp.tanh, (x,)
    yield "erf", "chlo.erf", jax.scipy.special.erf, (x,)
    yield "erf_inv", "chlo.erf_inv", jax.scipy.special.erfinv, (jnp.tanh(x).at[0, :3].set(jnp.array([1.0, -1.0, 0.0])),)
    yield "gelu", "chlo.erfc", lambda a: jax.nn.gelu(a, approximate=False), (x,)
    yield "convert_f2i", "convert", lambda a: (a * 3).astype(jnp.int32), (x,)
    yield "convert_i2f", "convert", lambda a: a.astype(jnp.float32), (ints,)
    yield "convert_b2f", "convert", lambda a: (a > 0).astype(jnp.float32), (x,)
    for op in ["lt", "le", "gt", "ge", "eq", "ne"]:
        yield "compare_" + op, "compare", getattr(lax, op), (x, jnp.where(bools, x, y))
        yield "compare_i32_" + op, "compare", getattr(lax, op), (ints, ints2)
    # Unsigned integers (above 2^31 too): converted from and to floats,
    # divided, compared, maximum; JAX's random bits are uint32 arithmetic.
    big = (jnp.abs(jnp.tanh(x)) * 4.2e9).astype(jnp.uint32)
    yield "unsigned", "convert", lambda a, b: ((a // jnp.uint32(3)) + jnp.maximum(a, b) // jnp.uint32(2)).astype(jnp.float32) + jnp.where(a > b, 1.0, 0.0), (big, (jnp.abs(jnp.tanh(y)) * 4.2e9).astype(jnp.uint32))
    yield "random", "bitcast_convert", lambda a: jnp.where(jax.random.bernoulli(jax.random.key(1), 0.8, a.shape), a / 0.8, 0.0) + jax.random.normal(jax.random.key(2), a.shape), (x,)
    yield "select", "select", jnp.where, (bools, x, y)
    yield "clamp", "clamp", lambda a: lax.clamp(-0.5, a, 0.5), (x,)
    yield "clamp_tensor", "clamp", lax.clamp, (x - 1, y, x + 1)
    yield "and", "and", jnp.logical_and, (bools, bools2)
    yield "and_i32", "and", jnp.bitwise_and, (ints, ints2)
    yield "or", "or", jnp.logical_or, (bools, bools2)
    yield "not", "not", jnp.logical_not, (bools,)
    yield "not_i32", "not", jnp.bitwise_not, (ints,)
    yield "broadcast_in_dim", "broadcast_in_dim", lambda a, b: a[:, None, :] + b[None, :, :4], (f32(4, 4), f32(3, 6))
    yield "reshape", "reshape", lambda a: a.reshape(2, 12) * 2, (x,)
    yield "transpose", "transpose", lambda a: jnp.transpose(a, (2, 0, 1)), (f32(2, 3, 4),)
    yield "concatenate", "concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=1), (x, y)
    yield "slice", "slice", lambda a: a[1:4, ::2], (x,)
    yield "dynamic_slice", "dynamic_slice", lambda a: lax.dynamic_slice(a, (1, 2), (2, 3)), (x,)
    yield "dynamic_slice_clamped", "dynamic_slice", lambda a: lax.dynamic_slice(a, (3, 5), (2, 3)), (x,)
    yield "pad", "pad", lambda a: jnp.pad(a, ((1, 2), (0, 3)), constant_values=1.5), (x,)
    yield "pad_interior", "pad", lambda a: lax.pad(a, 0.0, ((1, -1, 1), (-2, 1, 0))), (x,)
    yield "reverse", "reverse", lambda a: jnp.flip(a, (0, 1)), (x,)
    yield "dot_general", "dot_general", lambda a, b: a @ b, (x, f32(6, 5))
    yield "dot_general_3d", "dot_general", lambda a, b: a @ b, (f32(2, 4, 6), f32(6, 5))
    yield "dot_general_batch", "dot_general", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (f32(3, 4, 6), f32(3, 6, 5))
    yield "dot_general_nt", "dot_general", lambda a, b: jnp.einsum("ij,kj->ik", a, b), (x, y)
    yield "dot_general_multi", "dot_general", lambda a, b: jnp.einsum("bhqd,bhkd->bhqk", a, b), (f32(2, 3, 4, 5), f32(2, 3, 4, 5))
    yield "reduce_sum", "reduce", lambda a: jnp.sum(a, axis=1), (x,)
    yield "reduce_max", "reduce", lambda a: jnp.max(a, axis=(0, 2)), (f32(2, 3, 4),)
    yield "reduce_min_i32", "reduce", lambda a: jnp.min(a, axis=0), (ints,)
    yield "reduce_prod", "reduce", lambda a: jnp.prod(a, axis=0), (x,)
    yield "reduce_any", "reduce", lambda a: jnp.any(a, axis=1), (bools,)
    yield "argmax", "reduce", lambda a: jnp.argmax(a, axis=1), (x,)
    yield "argmin", "reduce", lambda a: jnp.argmin(a, axis=0), (x,)
    yield "softmax", "reduce", lambda a: jax.nn.softmax(a, axis=-1), (x,)
    yield "max_pool", "reduce_window", lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), (f32(2, 7, 7, 3),)
    yield "avg_pool", "reduce_window", lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4, (f32(2, 6, 6, 3),)
    # The gradient of max pooling: overlapping windows, padding, and ties
    # (rounded values), where the first maximum takes the gradient.
    pool = lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    yield "select_and_scatter", "select_and_scatter", lambda a, g: jax.vjp(pool, a)[1](g)[0], (jnp.round(f32(2, 7, 7, 3)), f32(2, 4, 4, 3))
    yield "conv_nhwc", "convolution", lambda a, w: lax.conv_general_dilated(a, w, (2, 2), ((1, 1), (1, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC")), (f32(2, 8, 8, 3), f32(3, 3, 3, 4))
    yield "conv_nchw", "convolution", lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME", rhs_dilation=(2, 1)), (f32(2, 3, 7, 6), f32(4, 3, 3, 2))
    yield "conv_grouped", "convolution", lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2), (f32(2, 5, 5, 4), f32(3, 3, 2, 6))
    yield "conv_1d", "convolution", lambda a, w: lax.conv_general_dilated(a, w, (1,), ((2, 0),)), (f32(2, 3, 9), f32(5, 3, 3))
    yield "conv_transpose", "convolution", lambda a, w: lax.conv_transpose(a, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (f32(2, 4, 4, 2), f32(3, 3, 2, 3))
    yield "conv_reversed_cropped", "convolution", lambda a, w: lax.conv_general_dilated(a, w, (1,), ((-1, 2),), lhs_dilation=(2,)) + lax.conv_transpose(a, w, (1,), "VALID", dimension_numbers=("NCH", "OIH", "NCH"), transpose_kernel=True)[:, :, :1], (f32(2, 3, 6), f32(3, 3, 3))
    yield "bitcast_convert", "bitcast_convert", lambda a: lax.bitcast_convert_type(a, jnp.int32) >> 23, (x,)
    yield "optimization_barrier", "optimization_barrier", jax.grad(lambda w, a: jnp.sum(jax.checkpoint(lambda h: jnp.tanh(h @ w))(a) ** 2)), (f32(6, 6), x)
    table = f32(10, 6)
    yield "gather_take", "gather", lambda t, i: jnp.take(t, i, axis=0), (table, i32(4, 3, low=0, high=10))
    yield "gather_index", "gather", lambda t, i: t[i], (table, i32(5, low=-10, high=10))
    yield "gather_columns", "gather", lambda t, i: t[:, i], (table, i32(3, low=0, high=6))
    yield "scatter_add", "scatter", lambda t, i, u: t.at[i].add(u), (table, i32(7, low=0, high=10), f32(7, 6))
    yield "scatter_set", "scatter", lambda t, i, u: t.at[i].set(u), (table, np.array([1, 4, 7], np.int32), f32(3, 6))
    yield "embedding_grad", "scatter", lambda i, g: jnp.zeros((10, 6), jnp.float32).at[i].add(g), (i32(2, 5, low=0, high=10), f32(2, 5, 6))
    yield "gather_batching", "gather", lambda a, i: jnp.take_along_axis(a, i, axis=1), (x, i32(4, 3, low=0, high=6))
    yield "scatter_batching", "scatter", lambda a, i, u: jnp.put_along_axis(a, i, u, axis=1, inplace=False), (x, np.array([[0, 5], [1, 2], [3, 3], [4, 0]], np.int32), f32(4, 2))
    yield "dynamic_update_slice", "dynamic_update_slice", lambda a, u: lax.dynamic_update_slice(a, u, (1, 4)), (x, f32(2, 3))
    # Indices known only at run time, clamped as StableHLO specifies.
    yield "dynamic_slice_runtime", "dynamic_slice", lambda a, k: lax.dynamic_slice(a, (k, k - 1), (2, 3)), (x, np.array(3, np.int32))
    yield "dynamic_update_slice_runtime", "dynamic_update_slice", lambda a, u, k: lax.dynamic_update_slice(a, u, (k, 0)), (x, f32(2, 6), np.array(1, np.int32))
    yield "sort", "sort", lambda a: jnp.sort(a, axis=1), (jnp.where(bools, x, 0.0).at[0, :3].set(jnp.array([-0.0, jnp.nan, -jnp.inf])),)
    yield "sort_i32_dim0", "sort", lambda a: jnp.sort(a, axis=0), (ints,)
    yield "argsort_ties", "sort", lambda a: jnp.argsort(a, axis=1, stable=True), (ints,)
    yield "sort_keys", "sort", lambda k, v: lax.sort((k, v), num_keys=1), (ints, x)
    yield "top_k", "chlo.top_k", lambda a: lax.top_k(a, 3), (jnp.round(x),)
    yield "while", "while", lambda a: lax.fori_loop(0, 5, lambda k, v: v * 0.5 + k, a), (x,)
    yield "while_scan", "while", lambda a: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(6, jnp.float32), a), (x,)
    yield "while_update", "while", lambda a: lax.fori_loop(0, 4, lambda i, v: v.at[i].set(v[i] * 2 + i), a), (x,)
    # Trip counts known only at run time, and one too long to unroll: loops.
    yield "while_runtime", "while", lambda a, n: lax.fori_loop(0, n, lambda k, v: jnp.tanh(v) + 0.1, a), (x, np.array(3, np.int32))
    yield "while_converge", "while", lambda a: lax.while_loop(lambda c: c[1] < 20.0, lambda c: (c[0] * 1.5, c[1] + jnp.sum(jnp.abs(c[0]))), (a, 0.0))[0], (x,)
    yield "while_long", "while", lambda a: lax.fori_loop(0, 5000, lambda k, v: v * 0.999 + 0.001, a), (x,)
    yield "case", "case", lambda a: lax.switch(1, [jnp.sin, jnp.cos, jnp.tanh], a), (x,)
    yield "case_clamped", "case", lambda a: lax.switch(7, [jnp.sin, jnp.cos, jnp.tanh], a), (x,)
    # Indices known only at run time: branches.
    yield "cond_runtime", "case", lambda a, k: lax.cond(k > 1, jnp.sin, jnp.cos, a), (x, np.array(3, np.int32))
    yield "switch_runtime", "case", lambda a, k: lax.switch(k, [jnp.sin, jnp.cos, lambda v: v * v], a), (x, np.array(1, np.int32))
    yield "sharding", "custom_call @Sharding", lambda a: jnp.tanh(lax.with_sharding_constraint(a * 2, NamedSharding(MESH, P("x", None)))), (x,)
    yield "shardy", "sdy.sharding_constraint", lambda a: jnp.tanh(lax.with_sharding_constraint(a * 2, NamedSharding(MESH, P(None, "x")))), (x,)


# Ops JAX 0.10 no longer emits (it writes logistic as 1 / (1 + exp(-x)) and
# every product as dot_general): StableHLO written by hand, checked against
# the JAX function of the same meaning.
HANDWRITTEN = {
    "logistic": """func.func @main(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.logistic %a : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}""",
    "dot": """func.func @main(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %0 = stablehlo.dot %a, %b, precision = [DEFAULT, DEFAULT] : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}""",
    "conv_window_reversal": """func.func @main(%a: tensor<2x3x6xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x4x6xf32> {
  %0 = stablehlo.convolution(%a, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[1, 1]], reverse = [true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3x6xf32>, tensor<4x3x3xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}""",
    # JAX pads the operand itself: the op's own padding, which no window
    # selects.
    "select_and_scatter_padded": """func.func @main(%x: tensor<4x7xf32>, %g: tensor<4x3xf32>) -> tensor<4x7xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %g, %z) <{padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x7xf32>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}""",
}


def handwritten_cases():
    yield "select_and_scatter_padded", "select_and_scatter", lambda a, g: jax.vjp(lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 3), (1, 3), ((0, 0), (1, 1))), a)[1](g)[0], (-jnp.abs(f32(4, 7)), f32(4, 3))
    yield "logistic", "logistic", jax.nn.sigmoid, (f32(4, 6),)
    yield "conv_window_reversal", "convolution", lambda a, w: lax.conv_general_dilated(a, jnp.flip(w, 2), (1,), ((1, 1),)), (f32(2, 3, 6), f32(4, 3, 3))
    yield "dot", "dot", lambda a, b: a @ b, (f32(4, 6), f32(6, 5))


MESH = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))


def run_case(args, name, op, fn, inputs, tmp, ranks):
    shardings = None
    if ranks > 1:
        shardings = tuple(
            NamedSharding(MESH, P("x") if np.ndim(a) and np.shape(a)[0] % ranks == 0 else P())
            for a in inputs)
    jitted = jax.jit(fn, in_shardings=shardings) if shardings else jax.jit(fn)
    # JAX's default partitioner, Shardy, prints sdy.* shardings.
    jax.config.update("jax_use_shardy_partitioner", name == "shardy")
    text = HANDWRITTEN.get(name) or jitted.lower(*inputs).as_text()
    jax.config.update("jax_use_shardy_partitioner", False)
    pattern = op if "." in op.split()[0] else "stablehlo." + op
    if not re.search(re.escape(pattern) + r"\b", text):
        return "the export has no %s" % pattern
    path = os.path.join(tmp, "%s_%d.mlir" % (name, ranks))
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, "%s_%d_out" % (name, ranks))
    cmd = [args.run, path, "--output-dir", out, "--ranks", str(ranks)]
    for i, a in enumerate(inputs):
        npy = os.path.join(tmp, "%s_in%d.npy" % (name, i))
        np.save(npy, np.asarray(a))
        cmd += ["--input", "arg%d=%s" % (i, npy)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timed out"
    if proc.returncode:
        return "sbp-run exited %d: %s" % (proc.returncode, proc.stderr.strip()[-800:])
    expected = jax.tree_util.tree_leaves(jax.jit(fn)(*inputs))
    for k, want in enumerate(expected):
        want = np.asarray(want)
        got = np.load(os.path.join(out, "result%d.npy" % k))
        if got.shape != want.shape:
            return "result %d has shape %s, JAX's %s" % (k, got.shape, want.shape)
        if want.dtype.kind == "f":
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True):
                return "result %d differs by %.3g" % (k, np.max(np.abs(got - want)))
        elif not np.array_equal(got.astype(want.dtype), want):
            return "result %d differs" % k
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="sbp-run")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--only", default="", help="run cases whose name has this")
    args = parser.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, fn, inputs in list(cases()) + list(handwritten_cases()):
            if args.only not in name:
                continue
            problems = []
            # A program with a sharding constraint names its mesh.
            for r in ranks if name not in ("sharding", "shardy") else [r for r in ranks if r > 1]:
                problem = run_case(args, name, op, fn, inputs, tmp, r)
                if problem:
                    problems.append("%d rank(s): %s" % (r, problem))
            if problems:
                failed += 1
                print("FAIL %s (%s): %s" % (name, op, "; ".join(problems)))
            else:
                passed += 1
                print("ok   %s (%s)" % (name, op))
    print("stablehlo ops: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
