#!/usr/bin/env python3
"""Times partitioning an N-layer Megatron MLP on one core: sbp's
--sbp-parallelize against upstream MLIR's sharding-propagation +
shard-partition on the same model, and checks that both emit one all-reduce
per layer.

Usage: bench/partition_stress.py [--build build] [--layers 200 1000] [--runs 5]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM_PIPELINE = ("builtin.module(func.func(sharding-propagation,"
                     "shard-partition,canonicalize,cse))")


def one_core(cmd):
    # Pinned to one core when taskset is there, as the target asks.
    return (["taskset", "-c", "0"] + cmd) if shutil.which("taskset") else cmd


def timed(cmd, runs):
    times, output = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(one_core(cmd), capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{result.stderr[-2000:]}")
        output = result.stdout
    return statistics.median(times), output


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--layers", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    sbp_opt = os.path.join(opts.build, "bin", "sbp-opt")
    mlir_opt = "/usr/lib/llvm-22/bin/mlir-opt"

    with tempfile.TemporaryDirectory() as tmp:
        for layers in opts.layers:
            paths = {}
            for flavour in ("sbp", "shard"):
                paths[flavour] = os.path.join(tmp, f"{flavour}{layers}.mlir")
                with open(paths[flavour], "w") as f:
                    extra = ["--shard"] if flavour == "shard" else []
                    subprocess.run([sys.executable,
                                    os.path.join(HERE, "gen_mlp.py"),
                                    str(layers)] + extra, stdout=f, check=True)
            sbp_time, sbp_out = timed(
                [sbp_opt, paths["sbp"], "--sbp-parallelize"], opts.runs)
            up_time, up_out = timed(
                [mlir_opt, paths["shard"], f"--pass-pipeline={UPSTREAM_PIPELINE}"],
                opts.runs)
            sbp_reduces = sbp_out.count("sbp.all_reduce")
            up_reduces = up_out.count("shard.all_reduce")
            print(f"layers={layers} sbp_s={sbp_time:.3f} upstream_s={up_time:.3f} "
                  f"upstream/sbp={up_time / sbp_time:.2f} "
                  f"all_reduces sbp={sbp_reduces} upstream={up_reduces}")
            if sbp_reduces != layers:
                sys.exit(f"sbp emitted {sbp_reduces} all-reduces, not {layers}")


main()
