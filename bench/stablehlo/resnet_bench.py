#!/usr/bin/env python3
"""ResNet-50 on one CPU rank, batch 1, 224 x 224: the JAX export in
../shared/testdata/stablehlo/jax_resnet_50.mlir (forward to the pooled
2048 features, batch norm with stored statistics) run by sbp-run with
generated code and with --blas, against PyTorch running the same network
(bottleneck blocks [3, 4, 6, 3], NHWC, eval mode) on one thread, all in
the same run. Also one training step (sbp-run --train, AdamW) against
PyTorch's forward, backward of the summed features and AdamW step.

Usage: bench/stablehlo/resnet_bench.py [--build build]
       [--python VENV/bin/python] [--iterations 5] [--no-train]
The Python needs torch==2.13.0 (see docs/benchmarks.md).
"""

import argparse
import os
import re
import subprocess
import sys

MODEL = "../shared/testdata/stablehlo/jax_resnet_50.mlir"

TORCH = """
import sys, time, torch
from torch import nn
torch.set_num_threads(1)
train = sys.argv[2] == "train"

class Bottleneck(nn.Module):
    def __init__(self, inp, width, stride):
        super().__init__()
        out = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(inp, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(), nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out))
        self.skip = (nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False),
                                   nn.BatchNorm2d(out))
                     if stride != 1 or inp != out else nn.Identity())
    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))

layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
          nn.MaxPool2d(3, 2, 1)]
inp = 64
for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
    for b in range(blocks):
        layers.append(Bottleneck(inp, width, stride if b == 0 else 1))
        inp = width * 4
net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1))
net = net.to(memory_format=torch.channels_last).eval()
x = torch.randn(1, 3, 224, 224).to(memory_format=torch.channels_last)
optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)

def step():
    if train:
        optimizer.zero_grad()
        net(x).sum().backward()
        optimizer.step()
    else:
        with torch.no_grad():
            net(x)

step()
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    step()
    times.append(time.perf_counter() - t)
times.sort()
print("median_ms=%.3f" % (1000 * times[len(times) // 2]))
"""


def sbp_run(build, args):
    out = subprocess.run([os.path.join(build, "bin", "sbp-run"), MODEL] + args,
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"time_ms median=([0-9.]+)", out).group(1))


def torch_run(python, iterations, mode):
    out = subprocess.run([python, "-c", TORCH, str(iterations), mode],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median_ms=([0-9.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", default="build/venv/bin/python")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--no-train", action="store_true")
    args = parser.parse_args()
    n = str(args.iterations)
    rows = [("forward", sbp_run(args.build, ["--bench", n]),
             sbp_run(args.build, ["--bench", n, "--blas"]),
             torch_run(args.python, args.iterations, "forward"))]
    if not args.no_train:
        train = ["--train", "--steps", str(args.iterations + 1), "--bench", "1"]
        rows.append(("training step", sbp_run(args.build, train),
                     sbp_run(args.build, train + ["--blas"]),
                     torch_run(args.python, args.iterations, "train")))
    print("| | sbp-run | sbp-run --blas | PyTorch, 1 thread | "
          "PyTorch / sbp | PyTorch / sbp --blas |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, generated, blas, torch in rows:
        print(f"| {name} | {generated:.1f} ms | {blas:.1f} ms | {torch:.1f} ms "
              f"| {torch / generated:.2f} | {torch / blas:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
