#!/usr/bin/env python3
"""Search time of sbp-auto-parallel on GPT stacks (bench/search/gen_gpt.py,
hidden 12288, 96 heads, batch 8, sequence 512) for several depths and
meshes, on one core. Prints a Markdown table: layers, cluster, mesh,
seconds of the whole sbp-opt run and of the search alone (from the
report), graph nodes, eliminations answered from the cache, and the
predicted step time and peak memory of the plan.

  search_time.py --sbp-opt build/bin/sbp-opt [--layers 12,24,48,96]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MESHES = [("dgx-a100-8", "8"), ("dgx-a100-8x8", "8x8"),
          ("dgx-a100-8x128", "128x8"), ("dgx-a100-8x128", "16x8x8")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sbp-opt", default="build/bin/sbp-opt")
    parser.add_argument("--layers", default="12,24,48,96")
    parser.add_argument("--meshes", default=None,
                        help="cluster:mesh pairs, comma separated")
    opts = parser.parse_args()
    meshes = MESHES
    if opts.meshes:
        meshes = [tuple(m.split(":")) for m in opts.meshes.split(",")]
    print("| layers | cluster | mesh | sbp-opt s | search s | nodes | "
          "reused | step ms | peak GiB |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in [int(l) for l in opts.layers.split(",")]:
            model = os.path.join(tmp, f"gpt{layers}.mlir")
            subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"),
                            "--hidden", "12288", "--heads", "96", "--batch",
                            "8", "--seq", "512", "--layers", str(layers),
                            "-o", model], check=True)
            for cluster, mesh in meshes:
                report = os.path.join(tmp, "report.json")
                start = time.perf_counter()
                run = subprocess.run(
                    ["taskset", "-c", "0", opts.sbp_opt, model,
                     f"--sbp-auto-parallel=cluster={cluster} mesh={mesh} "
                     f"report={report}", "-o", os.devnull],
                    capture_output=True, text=True)
                total = time.perf_counter() - start
                if run.returncode != 0:
                    message = run.stderr.strip().splitlines()[0]
                    print(f"| {layers} | {cluster} | {mesh} | {total:.2f} | "
                          f"- | - | - | {message} | |")
                    continue
                func = json.load(open(report))["functions"][0]
                search, plan = func["search"], func["plan"]
                print(f"| {layers} | {cluster} | {mesh} | {total:.2f} | "
                      f"{search['seconds']:.2f} | {search['nodes']} | "
                      f"{search['eliminations_reused']} | "
                      f"{plan['step_time_s'] * 1e3:.1f} | "
                      f"{plan['peak_memory_bytes'] / 2**30:.1f} |",
                      flush=True)


if __name__ == "__main__":
    main()
