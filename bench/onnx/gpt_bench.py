#!/usr/bin/env python3
"""GPT forward latency: sbp on one rank against onnxruntime, same run.

Runs each 2-layer GPT of shared/testdata/onnx (input int64 [2, 32]) with
onnxruntime (CPU provider, one intra-op thread, like sbp's one rank) and with
`sbp-run --bench` (generated code, and --blas), and prints the median
latencies and the ratio onnxruntime / sbp (above 1: sbp is faster).

Usage: build/venv/bin/python bench/onnx/gpt_bench.py --run build/bin/sbp-run
         --shared ../shared/testdata/onnx [--iterations 200]
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnxruntime


def ort_latency(path, feeds, iterations):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options,
                                           providers=["CPUExecutionProvider"])
    for _ in range(10):
        session.run(None, feeds)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def sbp_latency(run, path, name, ids_path, iterations, extra):
    out = subprocess.run([run, path, "--input", "%s=%s" % (name, ids_path),
                          "--bench", str(iterations)] + extra,
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"time_ms median=([0-9.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--shared", required=True)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    import onnx
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for opset in (14, 17):
            path = os.path.join(args.shared, "gpt_none_op%d_static.onnx" % opset)
            name = onnx.load(path).graph.input[0].name
            ids = rng.integers(0, 512, size=(2, 32)).astype(np.int64)
            ids_path = os.path.join(tmp, "ids.npy")
            np.save(ids_path, ids)
            ort = ort_latency(path, {name: ids}, args.iterations)
            generated = sbp_latency(args.run, path, name, ids_path,
                                    args.iterations, [])
            blas = sbp_latency(args.run, path, name, ids_path,
                               args.iterations, ["--blas"])
            print("gpt opset %d [2x32]: onnxruntime %.3f ms, sbp %.3f ms "
                  "(ratio %.2f), sbp --blas %.3f ms (ratio %.2f)" %
                  (opset, ort, generated, ort / generated, blas, ort / blas))


if __name__ == "__main__":
    main()
