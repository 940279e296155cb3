#!/usr/bin/env python3
"""Compile time of a 9M-parameter Flax transformer: sbp-run against XLA.

A Flax language model (vocabulary 4096, width 256, 8 pre-LN layers of
8-head attention and a 4x GELU MLP; 8.4M parameters, batch 2, sequence 128)
is exported as StableHLO with its parameters as arguments. Timed, each the
median of --repeat runs:

- XLA: `jax.jit(f).lower(...).compile()` (tracing, lowering and XLA's CPU
  compilation), the peer;
- sbp-run on one rank with an empty compilation cache (`--cache` in a fresh
  directory): the whole command, import to results;
- the same with `--ranks 2 --reference` (the program for two ranks and the
  one-rank reference, compiled side by side);
- the one-rank command again from the cache.

Prints one line per measurement with its ratio to XLA's compile time, and
`--timing`'s steps of the cold one-rank run.

Usage: build/venv/bin/python bench/zoo/compile_bench.py --run build/bin/sbp-run
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402


def build_model(vocab, width, layers, heads, batch, seq):
    import flax.linen as nn

    class LM(nn.Module):
        @nn.compact
        def __call__(self, ids):
            x = nn.Embed(vocab, width)(ids)
            for _ in range(layers):
                y = nn.LayerNorm()(x)
                y = nn.SelfAttention(num_heads=heads, qkv_features=width,
                                     deterministic=True)(y)
                x = x + y
                y = nn.LayerNorm()(x)
                x = x + nn.Dense(width)(nn.gelu(nn.Dense(4 * width)(y)))
            return nn.Dense(vocab)(nn.LayerNorm()(x))

    model = LM()
    ids = np.random.default_rng(0).integers(0, vocab, (batch, seq)).astype(
        np.int32)
    params = model.init(jax.random.PRNGKey(0), ids)["params"]
    leaves, tree = jax.tree_util.tree_flatten(params)
    leaves = [np.asarray(leaf) for leaf in leaves]

    def flat(*args):
        p = jax.tree_util.tree_unflatten(tree, args[:-1])
        return model.apply({"params": p}, args[-1])
    return flat, leaves + [ids]


def timed(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (done.returncode, " ".join(command),
                                          done.stderr[-2000:]))
    return seconds, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, help="sbp-run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    flat, inputs = build_model(4096, 256, 8, 8, 2, 128)
    count = sum(a.size for a in inputs[:-1])
    workdir = tempfile.mkdtemp(prefix="sbp-compile-")
    path = os.path.join(workdir, "lm.mlir")
    with open(path, "w") as f:
        f.write(jax.jit(flat).lower(*inputs).as_text())
    print("model: Flax LM, %.1fM parameters, StableHLO %d KB" % (
        count / 1e6, os.path.getsize(path) // 1024))

    xla = []
    for _ in range(args.repeat):
        jax.clear_caches()
        start = time.perf_counter()
        jax.jit(flat).lower(*inputs).compile()
        xla.append(time.perf_counter() - start)
    peer = statistics.median(xla)
    print("XLA jit compile: %.2f s" % peer)

    def cold(flags):
        times = []
        for _ in range(args.repeat):
            cache = os.path.join(workdir, "cache")
            shutil.rmtree(cache, ignore_errors=True)
            seconds, done = timed([args.run, path, "--cache", cache] + flags)
            times.append(seconds)
        return statistics.median(times), done

    one, done = cold(["--timing"])
    steps = [line for line in done.stderr.splitlines()
             if line.startswith("    ") and "(" in line
             and line.split(")")[-1].strip() in (
                 "import", "compile", "lowering to LLVM",
                 "LLVM optimization and code generation", "linking", "run")]
    print("sbp-run, 1 rank, cold: %.2f s (%.2fx XLA's compile)" % (
        one, one / peer))
    for line in steps:
        print("  " + line.strip())
    two, done = cold(["--ranks", "2", "--reference"])
    print("sbp-run, --ranks 2 --reference, cold: %.2f s (%.2fx); %s" % (
        two, two / peer, done.stdout.strip().splitlines()[-1]))
    cache = os.path.join(workdir, "cache")
    timed([args.run, path, "--cache", cache])
    warm = statistics.median(
        timed([args.run, path, "--cache", cache])[0]
        for _ in range(args.repeat))
    print("sbp-run, 1 rank, cached: %.2f s (%.2fx)" % (warm, warm / peer))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
