#!/usr/bin/env python3
"""Per-step time of a GPT training step (AdamW, mean squared error) on 4
CPU ranks: sbp-run --train under the plan sbp-auto-parallel chose, against
PyTorch DDP on the gloo backend (4 processes) and JAX on 4 fake CPU devices
running sbp's plan (its layouts of parameters, optimizer state and batch as
shardings), all measured in the same run on the same model
(bench/search/gen_gpt.py: RMS norm, attention, ReLU MLP, residuals).

Usage: bench/train/train_bench.py [--build build] [--python VENV/bin/python]
       [--hidden 256 --heads 4 --batch 8 --seq 64 --layers 2 --steps 20]
The Python needs torch==2.13.0 and jax (see docs/benchmarks.md).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MODEL = r"""
import math
def shapes(h, a, b, s, layers):
    ws = []
    for _ in range(layers):
        ws += [(h, h)] * 4 + [(h, 4 * h), (4 * h, h)]
    return ws
"""

TORCH = MODEL + r"""
import os, sys, time, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
h, a, b, s, layers, steps, rank, world = map(int, sys.argv[1:9])
torch.set_num_threads(1)
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
dist.init_process_group("gloo", rank=rank, world_size=world)
d, n = h // a, b * s
class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.ws = torch.nn.ParameterList(
            [torch.nn.Parameter((torch.rand(shape, generator=g) * 2 - 1) / math.sqrt(shape[0]))
             for shape in shapes(h, a, b, s, layers)])
    def forward(self, x):
        bl = x.shape[0] // s
        def rms(t):
            return t * torch.rsqrt((t * t).sum(-1, keepdim=True) / h + 1e-5)
        for l in range(layers):
            wq, wk, wv, wo, w1, w2 = self.ws[6 * l:6 * l + 6]
            ln = rms(x)
            q = (ln @ wq).view(bl, s, a, d)
            k = (ln @ wk).view(bl, s, a, d)
            v = (ln @ wv).view(bl, s, a, d)
            scores = torch.einsum("biad,bjad->baij", q * d ** -0.5, k)
            p = torch.softmax(scores, -1)
            ctx = torch.einsum("baij,bjad->biad", p, v).reshape(bl * s, h)
            x = x + ctx @ wo
            x = x + torch.relu(rms(x) @ w1) @ w2
        return x
model = DDP(GPT())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
g = torch.Generator().manual_seed(1)
x = torch.rand(n, h, generator=g) * 2 - 1
t = torch.rand(n, h, generator=g) * 2 - 1
rows = n // world
x, t = x[rank * rows:(rank + 1) * rows], t[rank * rows:(rank + 1) * rows]
times = []
for step in range(steps + 1):
    dist.barrier()
    start = time.perf_counter()
    opt.zero_grad()
    loss = ((model(x) - t) ** 2).mean()
    loss.backward()
    opt.step()
    dist.barrier()
    if step:
        times.append(time.perf_counter() - start)
times.sort()
if rank == 0:
    print("time_ms median=%.3f" % (times[len(times) // 2] * 1e3))
dist.destroy_process_group()
"""

JAX = MODEL + r"""
import json, os, sys, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
h, a, b, s, layers, steps = map(int, sys.argv[1:7])
layouts = json.loads(sys.argv[7])
d, n = h // a, b * s
mesh = Mesh(jax.devices()[:4], ("r",))
def spec(layout, rank):
    # "#sbp.nd<@mesh, [S(1)]>" -> P(None, "r"); B -> P()
    entry = layout.split("[")[1].split("]")[0]
    parts = [None] * rank
    if entry.startswith("S("):
        parts[int(entry[2:-1])] = "r"
    return NamedSharding(mesh, P(*parts))
ws_shapes = shapes(h, a, b, s, layers)
np_ = len(ws_shapes)
key = jax.random.PRNGKey(0)
ws = [jax.random.uniform(jax.random.PRNGKey(i), sh, jnp.float32, -1, 1) / sh[0] ** 0.5
      for i, sh in enumerate(ws_shapes)]
ms = [jnp.zeros(sh, jnp.float32) for sh in ws_shapes]
vs = [jnp.zeros(sh, jnp.float32) for sh in ws_shapes]
x = jax.random.uniform(jax.random.PRNGKey(100), (n, h), jnp.float32, -1, 1)
t = jax.random.uniform(jax.random.PRNGKey(101), (n, h), jnp.float32, -1, 1)
# sbp's step takes the parameters, then (m, v) per parameter, the step
# count, the input and the target.
w_sh = [spec(layouts[i], 2) for i in range(np_)]
m_sh = [spec(layouts[np_ + 2 * i], 2) for i in range(np_)]
v_sh = [spec(layouts[np_ + 2 * i + 1], 2) for i in range(np_)]
x_sh, t_sh = spec(layouts[3 * np_ + 1], 2), spec(layouts[3 * np_ + 2], 2)
ws = [jax.device_put(w, sh) for w, sh in zip(ws, w_sh)]
ms = [jax.device_put(m, sh) for m, sh in zip(ms, m_sh)]
vs = [jax.device_put(v, sh) for v, sh in zip(vs, v_sh)]
x, t = jax.device_put(x, x_sh), jax.device_put(t, t_sh)
def forward(ws, x):
    def rms(u):
        return u * jax.lax.rsqrt((u * u).sum(-1, keepdims=True) / h + 1e-5)
    for l in range(layers):
        wq, wk, wv, wo, w1, w2 = ws[6 * l:6 * l + 6]
        ln = rms(x)
        q = (ln @ wq).reshape(b, s, a, d)
        k = (ln @ wk).reshape(b, s, a, d)
        v = (ln @ wv).reshape(b, s, a, d)
        scores = jnp.einsum("biad,bjad->baij", q * d ** -0.5, k)
        p = jax.nn.softmax(scores, -1)
        ctx = jnp.einsum("baij,bjad->biad", p, v).reshape(n, h)
        x = x + ctx @ wo
        x = x + jax.nn.relu(rms(x) @ w1) @ w2
    return x
def step(ws, ms, vs, count, x, t):
    loss, gs = jax.value_and_grad(lambda ws: ((forward(ws, x) - t) ** 2).mean())(ws)
    count = count + 1
    c1, c2 = 1 - 0.9 ** count, 1 - 0.999 ** count
    ms = [0.9 * m + 0.1 * g for m, g in zip(ms, gs)]
    vs = [0.999 * v + 0.001 * g * g for v, g in zip(vs, gs)]
    ws = [w - 1e-3 * ((m / c1) / (jnp.sqrt(v / c2) + 1e-8) + 0.01 * w)
          for w, m, v in zip(ws, ms, vs)]
    return ws, ms, vs, count, loss
step = jax.jit(step, out_shardings=(w_sh, m_sh, v_sh, None, None),
               donate_argnums=(0, 1, 2))
count = jnp.float32(0)
ws, ms, vs, count, loss = step(ws, ms, vs, count, x, t)
loss.block_until_ready()
times = []
for _ in range(steps):
    start = time.perf_counter()
    ws, ms, vs, count, loss = step(ws, ms, vs, count, x, t)
    loss.block_until_ready()
    times.append(time.perf_counter() - start)
times.sort()
print("time_ms median=%.3f" % (times[len(times) // 2] * 1e3))
"""


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return out.stdout


def median_ms(text):
    return float(re.search(r"time_ms median=([0-9.]+)", text).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    dims = [args.hidden, args.heads, args.batch, args.seq, args.layers]
    work = tempfile.mkdtemp()
    model = os.path.join(work, "gpt.mlir")
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run([sys.executable, os.path.join(src, "search", "gen_gpt.py"),
         "--hidden", str(args.hidden), "--heads", str(args.heads),
         "--batch", str(args.batch), "--seq", str(args.seq),
         "--layers", str(args.layers), "-o", model])
    bin_dir = os.path.join(args.build, "bin")
    # The plan sbp chooses for the step, for JAX to run too.
    step = os.path.join(work, "step.mlir")
    report = os.path.join(work, "report.json")
    run([os.path.join(bin_dir, "sbp-opt"), model, "--sbp-make-train-step",
         "-o", step])
    run([os.path.join(bin_dir, "sbp-opt"), step,
         f"--sbp-auto-parallel=mesh=4 report={report}", "-o", os.devnull])
    with open(report) as f:
        arguments = json.load(f)["functions"][0]["arguments"]
    layouts = [arg["layout"] for arg in sorted(arguments,
                                               key=lambda a: a["argument"])]

    print(f"GPT training step: hidden {args.hidden}, {args.heads} heads, "
          f"batch {args.batch} x seq {args.seq}, {args.layers} layers, AdamW, "
          f"f32, 4 ranks, median of {args.steps} steps")
    env = dict(os.environ, MASTER_PORT="29517")
    procs = [subprocess.Popen(
        [args.python, "-c", TORCH] + [str(v) for v in dims] +
        [str(args.steps), str(r), "4"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env) for r in range(4)]
    outs = [p.communicate() for p in procs]
    if any(p.returncode for p in procs):
        sys.exit("PyTorch DDP failed:\n" + "\n".join(o[1] for o in outs))
    torch_ms = median_ms(outs[0][0])
    print(f"  PyTorch DDP, gloo, 4 processes x 1 thread   {torch_ms:9.3f} ms")
    jax_ms = median_ms(run([args.python, "-c", JAX] + [str(v) for v in dims] +
                           [str(args.steps), json.dumps(layouts)]))
    print(f"  JAX, sbp's plan on 4 fake CPU devices       {jax_ms:9.3f} ms")
    for flags, name in (([], "generated"), (["--blas"], "--blas")):
        out = run([os.path.join(bin_dir, "sbp-run"), model, "--train",
                   "--steps", str(args.steps + 1), "--ranks", "4", "--auto",
                   "--bench", "1"] + flags)
        ms = median_ms(out)
        print(f"  sbp-run --train, 4 ranks, {name:18s} {ms:9.3f} ms"
              f"  PyTorch/sbp {torch_ms / ms:.2f}  JAX/sbp {jax_ms / ms:.2f}")


if __name__ == "__main__":
    main()
