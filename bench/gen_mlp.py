#!/usr/bin/env python3
"""Writes a Megatron-style MLP of N layers as logical sbp MLIR.

Usage: gen_mlp.py LAYERS [RANKS]
Each layer is h = tanh(h W1) W2 with W1 split by columns and W2 by rows over
a 1-d mesh of RANKS devices (default 4), so a correct partitioning has
exactly one all-reduce per layer.
"""

import sys

layers = int(sys.argv[1])
ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 4
batch, width, hidden = 8, 64, 256

args = ["%x: tensor<{}x{}xf32>".format(batch, width)]
for i in range(layers):
    args.append(f"%w1_{i}: tensor<{width}x{hidden}xf32> "
                f"{{sbp.sharding = #sbp.nd<@m, [S(1)]>}}")
    args.append(f"%w2_{i}: tensor<{hidden}x{width}xf32> "
                f"{{sbp.sharding = #sbp.nd<@m, [S(0)]>}}")

print(f"sbp.mesh @m shape = [{ranks}]")
print(f"func.func @mlp({', '.join(args)}) -> tensor<{batch}x{width}xf32> {{")
print("  %zero = arith.constant 0.0 : f32")
h = "%x"
for i in range(layers):
    print(f"  %e1_{i} = tensor.empty() : tensor<{batch}x{hidden}xf32>")
    print(f"  %f1_{i} = linalg.fill ins(%zero : f32) outs(%e1_{i} : "
          f"tensor<{batch}x{hidden}xf32>) -> tensor<{batch}x{hidden}xf32>")
    print(f"  %a_{i} = linalg.matmul ins({h}, %w1_{i} : "
          f"tensor<{batch}x{width}xf32>, tensor<{width}x{hidden}xf32>) "
          f"outs(%f1_{i} : tensor<{batch}x{hidden}xf32>) -> "
          f"tensor<{batch}x{hidden}xf32>")
    print(f"  %r_{i} = math.tanh %a_{i} : tensor<{batch}x{hidden}xf32>")
    print(f"  %e2_{i} = tensor.empty() : tensor<{batch}x{width}xf32>")
    print(f"  %f2_{i} = linalg.fill ins(%zero : f32) outs(%e2_{i} : "
          f"tensor<{batch}x{width}xf32>) -> tensor<{batch}x{width}xf32>")
    print(f"  %h_{i} = linalg.matmul ins(%r_{i}, %w2_{i} : "
          f"tensor<{batch}x{hidden}xf32>, tensor<{hidden}x{width}xf32>) "
          f"outs(%f2_{i} : tensor<{batch}x{width}xf32>) -> "
          f"tensor<{batch}x{width}xf32>")
    h = f"%h_{i}"
print(f"  return {h} : tensor<{batch}x{width}xf32>")
print("}")
