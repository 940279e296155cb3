"""StableHLO exported by JAX, imported and run by sbp against JAX.

  train  an MLP's Adam step (jax.value_and_grad) on 1 rank and on 4 with the
         batch split (data parallel): updated parameters within 1e-4;
  gpt    a GPT block with Megatron shardings on 4 ranks, against JAX;
  cnn    a small CNN (convolutions, grouped too, pooling) on 1 rank and on
         4 with the batch split, against JAX;
  twin   JAX's generic-form print and its pretty print of the GPT block
         import to the same program;
  bert   BERT-base exported by torch-xla (--bert FILE) with valid token,
         type and position ids, on 1 rank and on 4 with its MLP weights
         split Megatron-style, each against sbp's one-rank reference.
"""

import argparse
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_models  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", False)


def run(args, text, inputs, tmp, name, ranks):
    path = os.path.join(tmp, name + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + "_out")
    cmd = [args.run, path, "--output-dir", out, "--ranks", str(ranks)]
    for i, a in enumerate(inputs):
        npy = os.path.join(tmp, "%s_in%d.npy" % (name, i))
        np.save(npy, np.asarray(a))
        cmd += ["--input", "arg%d=%s" % (i, npy)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise SystemExit("%s: sbp-run exited %d:\n%s" % (name, proc.returncode, proc.stderr))
    k = 0
    results = []
    while os.path.exists(os.path.join(out, "result%d.npy" % k)):
        results.append(np.load(os.path.join(out, "result%d.npy" % k)))
        k += 1
    return results


def compare(name, got, want, tol):
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(want)]
    if len(got) != len(want):
        print("FAIL %s: %d results, JAX has %d" % (name, len(got), len(want)))
        return False
    worst = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
    ok = worst <= tol
    print("%s %s: %d results, max abs difference to JAX %.2e" %
          ("ok  " if ok else "FAIL", name, len(got), worst))
    return ok


def train(args, tmp):
    rng = np.random.default_rng(0)
    inputs = jax_models.adam_inputs(rng)
    want = jax.jit(jax_models.adam_step)(*inputs)
    leaves = jax.tree_util.tree_leaves(inputs)
    ok = True
    for ranks in (1, 4):
        shardings = None
        if ranks > 1:
            mesh = jax.make_mesh((ranks,), ("dp",), axis_types=(jax.sharding.AxisType.Auto,))
            rep = NamedSharding(mesh, P())
            shardings = jax.tree.map(lambda _: rep, inputs[:3]) + (
                NamedSharding(mesh, P("dp")), NamedSharding(mesh, P("dp")))
        step = jax.jit(jax_models.adam_step, in_shardings=shardings)
        text = step.lower(*inputs).as_text()
        got = run(args, text, leaves, tmp, "adam%d" % ranks, ranks)
        ok &= compare("adam step on %d rank(s)" % ranks, got, want, 1e-4)
    return ok


def gpt_setup(d=64, heads=4, batch=2, seq=16, ranks=4):
    rng = np.random.default_rng(1)
    params = jax_models.gpt_params(rng, d)
    x = rng.standard_normal((batch, seq, d)).astype(np.float32)
    mesh = jax.make_mesh((ranks,), ("tp",), axis_types=(jax.sharding.AxisType.Auto,))
    shardings = (jax_models.megatron_shardings(mesh, params), NamedSharding(mesh, P()))
    fn = jax.jit(lambda p, x: jax_models.gpt_block(p, x, heads), in_shardings=shardings)
    return fn, (params, x)


def gpt(args, tmp):
    fn, inputs = gpt_setup()
    text = fn.lower(*inputs).as_text()
    got = run(args, text, jax.tree_util.tree_leaves(inputs), tmp, "gpt", 4)
    return compare("gpt block, Megatron shardings, 4 ranks", got, fn(*inputs), 1e-4)


def cnn(args, tmp):
    rng = np.random.default_rng(3)
    params = jax_models.cnn_params(rng)
    x = rng.standard_normal((8, 16, 16, 3)).astype(np.float32)
    want = jax.jit(jax_models.cnn)(params, x)
    ok = True
    for ranks in (1, 4):
        shardings = None
        if ranks > 1:
            mesh = jax.make_mesh((ranks,), ("dp",), axis_types=(jax.sharding.AxisType.Auto,))
            shardings = (jax.tree.map(lambda _: NamedSharding(mesh, P()), params),
                         NamedSharding(mesh, P("dp")))
        text = jax.jit(jax_models.cnn, in_shardings=shardings).lower(params, x).as_text()
        got = run(args, text, jax.tree_util.tree_leaves((params, x)), tmp,
                  "cnn%d" % ranks, ranks)
        ok &= compare("cnn on %d rank(s)" % ranks, got, want, 1e-4)
    return ok


def twin(args, tmp):
    fn, inputs = gpt_setup()
    lowered = fn.lower(*inputs)
    pretty = lowered.as_text()
    generic = lowered.compiler_ir("stablehlo").operation.get_asm(
        print_generic_op_form=True, enable_debug_info=False)
    if '"stablehlo.dot_general"' not in generic or '"stablehlo.dot_general"' in pretty:
        print("FAIL twin: the two prints are not generic and pretty")
        return False
    programs = []
    for name, text in (("pretty", pretty), ("generic", generic)):
        path = os.path.join(tmp, name + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([args.opt, path], capture_output=True, text=True)
        if proc.returncode:
            print("FAIL twin: sbp-opt %s exited %d:\n%s" % (name, proc.returncode, proc.stderr))
            return False
        programs.append(proc.stdout)
    same = programs[0] == programs[1] and "linalg.matmul" in programs[0]
    print("%s twin: the generic and pretty prints import to %s programs (%d lines)" %
          ("ok  " if same else "FAIL", "the same" if same else "different",
           programs[0].count("\n")))
    return same


def bert(args, tmp):
    """The ids must be in range: out-of-range ids gather NaN (jnp.take's
    fill mode), which would compare equal to a NaN reference."""
    import re
    text = open(args.bert).read()
    rng = np.random.default_rng(2)
    ids = {"arg199": np.arange(512, dtype=np.int32).reshape(1, 512),
           "arg200": rng.integers(0, 30522, (1, 7)).astype(np.int32),
           "arg201": rng.integers(0, 2, (1, 7)).astype(np.int32)}
    flags = []
    for name, value in ids.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, value)
        flags += ["--input", "%s=%s" % (name, path)]

    # Megatron's MLP split: the 3072-wide dimension over 4 devices.
    def split(m):
        dims = m.group(1).split("x")[:-1]
        if "3072" not in dims:
            return m.group(0)
        tiles = ",".join("4" if d == "3072" else "1" for d in dims)
        return 'tensor<%s> {mhlo.sharding = "{devices=[%s]<=[4]}"}' % (m.group(1), tiles)
    sharded = re.sub(r'tensor<([0-9x]+f32)> \{mhlo.sharding = "\{replicated\}"\}',
                     split, text)
    ok = True
    for name, program, ranks in (("bert", text, 1), ("bert_tp", sharded, 4)):
        path = os.path.join(tmp, name + ".mlir")
        with open(path, "w") as f:
            f.write(program)
        out = os.path.join(tmp, name + "_out")
        proc = subprocess.run([args.run, path, "--reference", "--output-dir", out] + flags,
                              capture_output=True, text=True, timeout=900)
        result = np.load(os.path.join(out, "result0.npy")) if proc.returncode == 0 else None
        finite = result is not None and bool(np.isfinite(result).all())
        line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
        good = proc.returncode == 0 and finite and "on %d rank" % ranks in proc.stdout
        ok &= good
        print("%s BERT-base on %d rank(s)%s: %s%s" % (
            "ok  " if good else "FAIL", ranks,
            " (MLP split over 4)" if ranks > 1 else "", line,
            "" if finite else " (results not finite)"))
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True)
    parser.add_argument("--opt", required=True)
    parser.add_argument("--bert", help="pt_bert.mlir, for the bert check")
    parser.add_argument("checks", nargs="*", default=["train", "gpt", "cnn", "twin"])
    args = parser.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for check in args.checks:
            if globals()[check](args, tmp):
                passed += 1
            else:
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
