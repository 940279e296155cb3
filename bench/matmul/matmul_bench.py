#!/usr/bin/env python3
"""Single-rank f32 matmul N^3: sbp's generated code (tiled and vectorized),
sbp with --blas, and OpenBLAS on one thread, measured in the same run.

Usage: bench/matmul/matmul_bench.py [--build build] [--n 1024] [--iterations 10]
"""

import argparse
import os
import re
import subprocess
import tempfile

PROGRAM = """func.func @main(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%f : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %r : tensor<{n}x{n}xf32>
}}
"""


def median_ms(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"time_ms median=([0-9.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "matmul.mlir")
    with open(path, "w") as f:
        f.write(PROGRAM.format(n=args.n))
    run = os.path.join(args.build, "bin", "sbp-run")
    flops = 2 * args.n ** 3
    rows = [
        ("sbp generated (tiled, vectorized)",
         median_ms([run, path, "--bench", str(args.iterations)])),
        ("sbp --blas",
         median_ms([run, path, "--bench", str(args.iterations), "--blas"])),
        ("OpenBLAS sgemm, 1 thread",
         median_ms([os.path.join(args.build, "bin", "sbp-bench-sgemm"),
                    str(args.n), str(args.iterations)])),
    ]
    peer = flops / rows[-1][1] / 1e6
    print(f"f32 matmul {args.n}^3, median of {args.iterations}:")
    for name, ms in rows:
        gflops = flops / ms / 1e6
        print(f"  {name:36s} {ms:9.3f} ms  {gflops:7.1f} GFLOP/s  "
              f"ratio to OpenBLAS {gflops / peer:.2f}")


if __name__ == "__main__":
    main()
