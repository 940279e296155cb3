#!/usr/bin/env python3
"""Writes a Megatron-style MLP of N layers as a logical program.

Usage: gen_mlp.py LAYERS [--ranks R] [--shard | --logical]
                  [--batch B --width W --hidden H]

Each layer is h = tanh(h W1) W2 with W1 split by columns and W2 by rows over
a 1-d mesh of R devices (default 4), so a correct partitioning has exactly
one all-reduce per layer. The layouts are given with sbp's `sbp.sharding`,
or with `--shard` as upstream MLIR's shard dialect annotations, to run the
same model through upstream's sharding-propagation and shard-partition.
tanh is a linalg.generic because upstream has no rule for math ops on
tensors. `--logical` writes the program without a mesh or layouts, for the
auto-parallel search and pipelines to place.
"""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("layers", type=int)
parser.add_argument("--ranks", type=int, default=4)
parser.add_argument("--shard", action="store_true")
parser.add_argument("--logical", action="store_true")
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--width", type=int, default=64)
parser.add_argument("--hidden", type=int, default=256)
opts = parser.parse_args()

batch, width, hidden = opts.batch, opts.width, opts.hidden
act = f"tensor<{batch}x{hidden}xf32>"
out = f"tensor<{batch}x{width}xf32>"
w1t = f"tensor<{width}x{hidden}xf32>"
w2t = f"tensor<{hidden}x{width}xf32>"


def weight_arg(name, type, split):
    if opts.shard or opts.logical:
        return f"%{name}: {type}"
    return f"%{name}: {type} {{sbp.sharding = #sbp.nd<@m, [S({split})]>}}"


args = [f"%x: {out}"]
for i in range(opts.layers):
    args.append(weight_arg(f"w1_{i}", w1t, 1))
    args.append(weight_arg(f"w2_{i}", w2t, 0))

lines = []
if opts.shard:
    lines.append(f"shard.grid @m(shape = {opts.ranks})")
elif not opts.logical:
    lines.append(f"sbp.mesh @m shape = [{opts.ranks}]")
lines.append(f"func.func @mlp({', '.join(args)}) -> {out} {{")
lines.append("  %zero = arith.constant 0.0 : f32")
if opts.shard:
    lines.append("  %cols = shard.sharding @m split_axes = [[], [0]] "
                 ": !shard.sharding")
    lines.append("  %rows = shard.sharding @m split_axes = [[0]] "
                 ": !shard.sharding")
h = "%x"
for i in range(opts.layers):
    w1, w2 = f"%w1_{i}", f"%w2_{i}"
    if opts.shard:
        lines.append(f"  %w1s_{i} = shard.shard {w1} to %cols : {w1t}")
        lines.append(f"  %w2s_{i} = shard.shard {w2} to %rows : {w2t}")
        w1, w2 = f"%w1s_{i}", f"%w2s_{i}"
    lines += [
        f"  %e1_{i} = tensor.empty() : {act}",
        f"  %f1_{i} = linalg.fill ins(%zero : f32) outs(%e1_{i} : {act}) "
        f"-> {act}",
        f"  %a_{i} = linalg.matmul ins({h}, {w1} : {out}, {w1t}) "
        f"outs(%f1_{i} : {act}) -> {act}",
        f"  %r_{i} = linalg.generic {{indexing_maps = "
        f"[affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%a_{i} : {act}) outs(%e1_{i} : {act}) {{",
        "  ^bb0(%v: f32, %o: f32):",
        "    %t = math.tanh %v : f32",
        "    linalg.yield %t : f32",
        f"  }} -> {act}",
        f"  %e2_{i} = tensor.empty() : {out}",
        f"  %f2_{i} = linalg.fill ins(%zero : f32) outs(%e2_{i} : {out}) "
        f"-> {out}",
        f"  %h_{i} = linalg.matmul ins(%r_{i}, {w2} : {act}, {w2t}) "
        f"outs(%f2_{i} : {out}) -> {out}",
    ]
    h = f"%h_{i}"
lines.append(f"  return {h} : {out}")
lines.append("}")
print("\n".join(lines))
