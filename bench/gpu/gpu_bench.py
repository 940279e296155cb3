#!/usr/bin/env python3
"""GPU figures of the cuda backend against their peers, in one run.

1. GEMM: an f32 matmul C = A B (M = N = K = --gemm) through sbp-run
   --backend cuda on one rank (the program calls cuBLAS through the
   runtime), against cuBLAS called directly (sbp-bench-cublas). Target:
   sbp within 90% of cuBLAS.
2. A fused element-wise chain, z = exp(x) * y + x on --elements f32 values:
   one generated kernel reading x and y and writing z; its bandwidth (12
   bytes per element over the median time) against --peak-gbs (the H200's
   HBM3e, 4800 GB/s). Target: 70% or more.

sbp-run's time per iteration is the program call up to the end of its
kernels on the stream (inputs are uploaded once, results downloaded once).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(command):
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"gpu_bench.py: {' '.join(command)} failed:\n"
                 f"{out.stdout}{out.stderr}")
    return out.stdout


def median_ms(output):
    match = re.search(r"time_ms median=([0-9.]+)", output)
    if not match:
        sys.exit("gpu_bench.py: no time in sbp-run's output:\n" + output)
    return float(match.group(1))


def write_programs(work, n, elements):
    """The GEMM and the chain as MLIR files; their paths."""
    gemm = os.path.join(work, "gemm.mlir")
    with open(gemm, "w") as f:
        f.write(f"""func.func @gemm(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) outs(%c : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %r : tensor<{n}x{n}xf32>
}}
""")
    t = f"tensor<{elements // 1024}x1024xf32>"
    chain = os.path.join(work, "chain.mlir")
    with open(chain, "w") as f:
        f.write(f"""func.func @chain(%x: {t}, %y: {t}) -> {t} {{
  %e = math.exp %x : {t}
  %m = arith.mulf %e, %y : {t}
  %z = arith.addf %m, %x : {t}
  return %z : {t}
}}
""")
    return {"gemm": gemm, "chain": chain}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="build/bin/sbp-run")
    parser.add_argument("--peer", default="build/bin/sbp-bench-cublas")
    parser.add_argument("--gemm", type=int, default=8192)
    parser.add_argument("--elements", type=int, default=1 << 28)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--peak-gbs", type=float, default=4800.0)
    parser.add_argument("--save", default=None,
                        help="only compile and save both programs into SAVE "
                             "(no GPU needed), without their inputs")
    parser.add_argument("--saved", default=None,
                        help="run the programs saved in SAVED with --exec "
                             "instead of compiling them")
    parser.add_argument("--exec", default="build/bin/sbp-exec")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sbp-gpu-bench-")
    n, elements = args.gemm, args.elements
    programs = write_programs(work, n, elements)

    if args.save:
        for name, path in programs.items():
            target = os.path.join(args.save, name)
            run([args.run, path, "--backend", "cuda", "--save-program", target])
            # Random inputs are made where the program runs.
            for file in os.listdir(target):
                if file.startswith("arg") and file.endswith(".npy"):
                    os.remove(os.path.join(target, file))
        print(f"saved gemm and chain in {args.save}")
        return

    def time_ms(name):
        bench = ["--bench", str(args.iterations)]
        if args.saved:
            return median_ms(run([args.exec, os.path.join(args.saved, name)] +
                                 bench))
        return median_ms(run([args.run, programs[name], "--backend", "cuda",
                              "--random-inputs"] + bench))

    sbp = time_ms("gemm")
    peer_out = run([args.peer, str(n), str(n), str(n), str(args.iterations)])
    peer = float(re.search(r"cublas_ms=([0-9.]+)", peer_out).group(1))
    flops = 2.0 * n * n * n
    print(f"gemm f32 {n}^3: sbp {sbp:.3f} ms ({flops / sbp / 1e9:.1f} TFLOP/s), "
          f"cuBLAS {peer:.3f} ms ({flops / peer / 1e9:.1f} TFLOP/s), "
          f"sbp/cuBLAS throughput {peer / sbp:.3f}")

    ms = time_ms("chain")
    count = elements // 1024 * 1024
    gbs = 12.0 * count / ms / 1e6
    print(f"element-wise chain, {count} f32: {ms:.3f} ms, {gbs:.0f} GB/s, "
          f"{gbs / args.peak_gbs:.3f} of {args.peak_gbs:.0f} GB/s")


if __name__ == "__main__":
    main()
