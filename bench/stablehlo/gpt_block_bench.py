#!/usr/bin/env python3
"""GPT block forward on 4 CPU ranks: JAX (GSPMD) against sbp, same run.

One pre-LN GPT block (causal attention, GELU MLP) with Megatron's shardings
(q/k/v and the first MLP weight split by columns, the output projections by
rows, over 4 devices). JAX runs it jitted on 4 fake CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=4); sbp runs the StableHLO
that JAX exports for the same sharded function with `sbp-run --ranks 4
--bench`, and once more without the shardings, planned by sbp's own
search (`sbp-run --auto`, cpu-local model, or `--cluster FILE`). Prints the
medians and the ratios against the search's plan (above 1: the plan is
faster).

Usage: build/venv/bin/python bench/stablehlo/gpt_block_bench.py
         --run build/bin/sbp-run [--hidden 256 --heads 8 --batch 4 --seq 128]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Import"))
import jax_models  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", False)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="sbp-run")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--cluster", default="cpu-local",
                        help="cluster for sbp-run --auto")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    params = jax_models.gpt_params(rng, args.hidden)
    x = rng.standard_normal((args.batch, args.seq, args.hidden)).astype(np.float32)
    mesh = jax.make_mesh((4,), ("tp",), axis_types=(jax.sharding.AxisType.Auto,))
    shardings = (jax_models.megatron_shardings(mesh, params), NamedSharding(mesh, P()))
    fn = jax.jit(lambda p, x: jax_models.gpt_block(p, x, args.heads),
                 in_shardings=shardings)
    placed = jax.device_put((params, x), shardings)
    for _ in range(5):
        fn(*placed).block_until_ready()
    times = []
    for _ in range(args.iterations):
        start = time.perf_counter()
        fn(*placed).block_until_ready()
        times.append((time.perf_counter() - start) * 1e3)
    jax_ms = statistics.median(times)

    def run_sbp(tmp, exported, extra):
        path = os.path.join(tmp, "gpt_block.mlir")
        with open(path, "w") as f:
            f.write(exported.lower(params, x).as_text())
        cmd = [args.run, path, "--ranks", "4", "--bench", str(args.iterations)]
        for i, a in enumerate(jax.tree_util.tree_leaves((params, x))):
            npy = os.path.join(tmp, "in%d.npy" % i)
            np.save(npy, a)
            cmd += ["--input", "arg%d=%s" % (i, npy)]
        out = subprocess.run(cmd + extra, capture_output=True, text=True,
                             check=True).stdout
        return float(re.search(r"time_ms median=([0-9.]+)", out).group(1))

    plain = jax.jit(lambda p, x: jax_models.gpt_block(p, x, args.heads))
    with tempfile.TemporaryDirectory() as tmp:
        sbp_ms = run_sbp(tmp, fn, [])
        auto_ms = run_sbp(tmp, plain, ["--auto", "--cluster", args.cluster])
    print("gpt block hidden=%d heads=%d batch=%d seq=%d, 4 ranks"
          % (args.hidden, args.heads, args.batch, args.seq))
    print("jax (GSPMD, Megatron shardings, 4 fake CPU devices): %.2f ms" % jax_ms)
    print("sbp-run, Megatron shardings:                         %.2f ms" % sbp_ms)
    print("sbp-run --auto (no shardings, the search's plan):    %.2f ms" % auto_ms)
    print("ratio jax/sbp-megatron: %.2f" % (jax_ms / sbp_ms))
    print("ratio jax/sbp-auto: %.2f" % (jax_ms / auto_ms))
    print("ratio sbp-megatron/sbp-auto: %.2f" % (sbp_ms / auto_ms))


if __name__ == "__main__":
    main()
