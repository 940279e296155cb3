#!/usr/bin/env python3
"""Measured pipeline bubble on CPU ranks against the model's prediction.

For each number of micro-batches, an MLP is cut into stages by the search
(sbp-auto-parallel, pipeline-stages=K) on K CPU ranks, one per stage. The
prediction is the search's report: the bubble of the simulated schedule
(its stage times from the cost model) and the textbook (p-1)/(m+p-1). The
measurement is `sbp-run --bench`: the fraction of the step each rank spends
outside its tasks, median over the iterations.

  bubble_bench.py [--build build] [--stages 4] [--micro-batches 1 4 16]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("--stages", type=int, default=4)
parser.add_argument("--micro-batches", type=int, nargs="+", default=[1, 4, 16])
parser.add_argument("--layers", type=int, default=8)
parser.add_argument("--batch", type=int, default=256)
parser.add_argument("--width", type=int, default=256)
parser.add_argument("--hidden", type=int, default=1024)
parser.add_argument("--iterations", type=int, default=10)
parser.add_argument("--schedule", default="1f1b")
opts = parser.parse_args()

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tools = os.path.join(opts.build, "bin")
with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "mlp.mlir")
    with open(model, "w") as out:
        subprocess.run([sys.executable, os.path.join(root, "bench", "gen_mlp.py"),
                        str(opts.layers), "--logical", "--batch", str(opts.batch),
                        "--width", str(opts.width), "--hidden", str(opts.hidden)],
                       stdout=out, check=True)
    print(f"MLP of {opts.layers} layers, batch {opts.batch}, {opts.width} -> "
          f"{opts.hidden} -> {opts.width}; {opts.stages} stages on "
          f"{opts.stages} CPU ranks, {opts.schedule}; {os.cpu_count()} cores")
    print("| micro-batches | predicted bubble | (p-1)/(m+p-1) | measured bubble "
          "| measured / predicted | predicted step ms | measured step ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for m in opts.micro_batches:
        report = os.path.join(tmp, f"report{m}.json")
        search = (f"mesh={opts.stages} pipeline-stages={opts.stages} "
                  f"micro-batches={m} schedule={opts.schedule} report={report}")
        subprocess.run([os.path.join(tools, "sbp-opt"), model,
                        f"--sbp-auto-parallel={search}", "-o", os.devnull],
                       check=True)
        with open(report) as f:
            pipe = json.load(f)["pipeline"]
        run = subprocess.run(
            [os.path.join(tools, "sbp-run"), model, "--ranks", str(opts.stages),
             "--auto", "--pipeline-stages", str(opts.stages), "--micro-batches",
             str(m), "--schedule", opts.schedule, "--bench", str(opts.iterations)],
            check=True, capture_output=True, text=True).stdout
        measured = float(re.search(r"bubble=([0-9.]+)", run).group(1))
        step = float(re.search(r"time_ms median=([0-9.]+)", run).group(1))
        print(f"| {m} | {pipe['bubble']:.3f} | {pipe['uniform_bubble']:.3f} | "
              f"{measured:.3f} | {measured / max(pipe['bubble'], 1e-9):.2f} | "
              f"{pipe['step_time_s'] * 1e3:.3f} | {step:.3f} |")
