#!/usr/bin/env python3
"""A 4-layer MLP (batch 64, width 1024, ReLU) on 2 ranks, data-parallel and
Megatron-split: sbp-run (threads backend, generated code and --blas) against
PyTorch on the CPU with the same 2 threads and JAX running the same
shardings on 2 fake CPU devices, all measured in the same run.

Usage: bench/mlp/mlp_bench.py [--build build] [--python VENV/bin/python]
       [--iterations 20]
The Python needs torch==2.13.0 and jax (see docs/benchmarks.md).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

BATCH, WIDTH, LAYERS = 64, 1024, 4


def program(sharding):
    """The MLP in MLIR; `sharding` is "dp" (batch split) or "megatron"
    (odd layers split by columns, even layers by rows)."""
    t = f"tensor<{BATCH}x{WIDTH}xf32>"
    w = f"tensor<{WIDTH}x{WIDTH}xf32>"
    args, lines = [], []
    x_attr = " {sbp.sharding = #sbp.nd<@m, [S(0)]>}" if sharding == "dp" else ""
    args.append(f"%x: {t}{x_attr}")
    for layer in range(LAYERS):
        attr = ""
        if sharding == "megatron":
            attr = (" {sbp.sharding = #sbp.nd<@m, [S(1)]>}" if layer % 2 == 0
                    else " {sbp.sharding = #sbp.nd<@m, [S(0)]>}")
        args.append(f"%w{layer}: {w}{attr}")
    lines.append("  %zero = arith.constant 0.0 : f32")
    lines.append(f"  %e = tensor.empty() : {t}")
    h = "%x"
    for layer in range(LAYERS):
        lines += [
            f"  %f{layer} = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}",
            f"  %m{layer} = linalg.matmul ins({h}, %w{layer} : {t}, {w}) "
            f"outs(%f{layer} : {t}) -> {t}",
            f"  %h{layer} = arith.maximumf %m{layer}, %f{layer} : {t}",
        ]
        h = f"%h{layer}"
    out_attr = " {sbp.sharding = #sbp.nd<@m, [S(0)]>}" if sharding == "dp" else ""
    return "\n".join(
        ["sbp.mesh @m shape = [2]",
         f"func.func @mlp({', '.join(args)}) -> ({t}{out_attr}) {{"] + lines +
        [f"  return {h} : {t}", "}"]) + "\n"


TORCH = """
import sys, time, torch
torch.set_num_threads(2)
B, W, L = %d, %d, %d
N = int(sys.argv[1])
x = torch.randn(B, W)
ws = [torch.randn(W, W) / W ** 0.5 for _ in range(L)]
def mlp():
    h = x
    for w in ws:
        h = torch.relu(h @ w)
    return h
with torch.no_grad():
    mlp()
    times = []
    for _ in range(N):
        t = time.perf_counter(); mlp(); times.append(time.perf_counter() - t)
times.sort()
print("time_ms median=%%.3f" %% (times[len(times) // 2] * 1e3))
""" % (BATCH, WIDTH, LAYERS)

JAX = """
import os, sys, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
B, W, L = %d, %d, %d
MODE, N = sys.argv[1], int(sys.argv[2])
mesh = Mesh(jax.devices()[:2], ("r",))
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (B, W), jnp.float32)
ws = [jax.random.normal(jax.random.PRNGKey(i + 1), (W, W), jnp.float32) / W ** 0.5
      for i in range(L)]
if MODE == "dp":
    x = jax.device_put(x, NamedSharding(mesh, P("r", None)))
    ws = [jax.device_put(w, NamedSharding(mesh, P())) for w in ws]
else:
    x = jax.device_put(x, NamedSharding(mesh, P()))
    ws = [jax.device_put(w, NamedSharding(mesh, P(None, "r") if i %% 2 == 0 else P("r", None)))
          for i, w in enumerate(ws)]
@jax.jit
def mlp(x, ws):
    h = x
    for w in ws:
        h = jax.nn.relu(h @ w)
    return h
mlp(x, ws).block_until_ready()
times = []
for _ in range(N):
    t = time.perf_counter(); mlp(x, ws).block_until_ready(); times.append(time.perf_counter() - t)
times.sort()
print("time_ms median=%%.3f" %% (times[len(times) // 2] * 1e3))
""" % (BATCH, WIDTH, LAYERS)


def median_ms(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    return float(re.search(r"time_ms median=([0-9.]+)", out.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    n = args.iterations
    workdir = tempfile.mkdtemp()
    run = os.path.join(args.build, "bin", "sbp-run")
    torch_ms = median_ms([args.python, "-c", TORCH, str(n)])
    print(f"{LAYERS}-layer MLP, batch {BATCH}, width {WIDTH}, f32, median of {n}")
    print(f"  PyTorch {'(2 threads, one process)':38s} {torch_ms:8.3f} ms")
    for mode in ("dp", "megatron"):
        path = os.path.join(workdir, f"mlp_{mode}.mlir")
        with open(path, "w") as f:
            f.write(program(mode))
        jax_ms = median_ms([args.python, "-c", JAX, mode, str(n)])
        print(f"  JAX {mode + ' on 2 fake CPU devices':42s} {jax_ms:8.3f} ms")
        for flags, name in (([], "generated"), (["--blas"], "--blas")):
            ms = median_ms([run, path, "--bench", str(n)] + flags)
            print(f"  sbp-run {mode + ', 2 ranks, ' + name:38s} {ms:8.3f} ms"
                  f"  PyTorch/sbp {torch_ms / ms:.2f}  JAX/sbp {jax_ms / ms:.2f}")


if __name__ == "__main__":
    main()
