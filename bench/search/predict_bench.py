#!/usr/bin/env python3
"""Predicted against measured step time on this host.

Calibrates the host (`sbp-run --calibrate`), then for an MLP and a
transformer block (bench/search/gen_gpt.py) on 1, 2 and 4 ranks: plans with
`sbp-opt --sbp-auto-parallel` on the calibrated cluster and reads the
predicted step time from its report, and runs the same plan with
`sbp-run --auto --cluster ... --bench N` for the measured median. Prints a
Markdown table with predicted / measured.

  predict_bench.py --build build [--iterations 20]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp(batch, width, hidden, layers):
    f = "f32"
    x = f"tensor<{batch}x{width}x{f}>"
    h = f"tensor<{batch}x{hidden}x{f}>"
    args = ["%x: " + x]
    for l in range(layers):
        args += [f"%w{l}a: tensor<{width}x{hidden}x{f}>",
                 f"%w{l}b: tensor<{hidden}x{width}x{f}>"]
    text = ["#m = affine_map<(i, j) -> (i, j)>",
            f"func.func @mlp({', '.join(args)}) -> {x} {{",
            f"  %zero = arith.constant 0.0 : {f}"]
    cur = "%x"
    for l in range(layers):
        text += [
            f"  %e{l} = tensor.empty() : {h}",
            f"  %z{l} = linalg.fill ins(%zero : {f}) outs(%e{l} : {h}) -> {h}",
            f"  %a{l} = linalg.matmul ins({cur}, %w{l}a : {x}, "
            f"tensor<{width}x{hidden}x{f}>) outs(%z{l} : {h}) -> {h}",
            f"  %r{l} = linalg.generic {{indexing_maps = [#m, #m], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%a{l} : {h}) "
            f"outs(%e{l} : {h}) {{",
            f"  ^bb0(%i: {f}, %o: {f}):",
            f"    %v = arith.maximumf %i, %zero : {f}",
            f"    linalg.yield %v : {f}",
            f"  }} -> {h}",
            f"  %f{l} = tensor.empty() : {x}",
            f"  %y{l} = linalg.fill ins(%zero : {f}) outs(%f{l} : {x}) -> {x}",
            f"  %b{l} = linalg.matmul ins(%r{l}, %w{l}b : {h}, "
            f"tensor<{hidden}x{width}x{f}>) outs(%y{l} : {x}) -> {x}"]
        cur = f"%b{l}"
    text += [f"  return {cur} : {x}", "}"]
    return "\n".join(text) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--ranks", default="1,2,4")
    opts = parser.parse_args()
    opt = os.path.join(opts.build, "bin", "sbp-opt")
    run = os.path.join(opts.build, "bin", "sbp-run")
    with tempfile.TemporaryDirectory() as tmp:
        cluster = os.path.join(tmp, "host.json")
        calibration = subprocess.run([run, "--calibrate", cluster],
                                     capture_output=True, text=True,
                                     check=True).stdout
        print("Calibration:\n\n```\n" + calibration.strip() + "\n```\n")
        models = {}
        models["MLP 256x512, 2 layers of 2048"] = os.path.join(tmp, "mlp.mlir")
        with open(models["MLP 256x512, 2 layers of 2048"], "w") as out:
            out.write(mlp(256, 512, 2048, 2))
        block = os.path.join(tmp, "block.mlir")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"),
                        "--hidden", "256", "--heads", "4", "--batch", "4",
                        "--seq", "64", "-o", block], check=True)
        models["GPT block h256, 4 heads, 4x64 tokens"] = block
        print("| model | ranks | predicted ms | measured ms | predicted / "
              "measured |")
        print("|---|---:|---:|---:|---:|")
        for name, path in models.items():
            for ranks in [int(r) for r in opts.ranks.split(",")]:
                report = os.path.join(tmp, "report.json")
                subprocess.run(
                    [opt, path, f"--sbp-auto-parallel=cluster={cluster} "
                     f"mesh={ranks} report={report}", "-o", os.devnull],
                    check=True)
                predicted = json.load(open(report))["functions"][0]["plan"][
                    "step_time_s"] * 1e3
                out = subprocess.run(
                    [run, path, "--auto", "--cluster", cluster, "--ranks",
                     str(ranks), "--bench", str(opts.iterations)],
                    capture_output=True, text=True, check=True).stdout
                measured = float(re.search(r"time_ms median=([0-9.]+)",
                                           out).group(1))
                print(f"| {name} | {ranks} | {predicted:.3f} | "
                      f"{measured:.3f} | {predicted / measured:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
