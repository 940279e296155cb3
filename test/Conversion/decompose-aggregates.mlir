// RUN: sbp-opt %s --pass-pipeline="builtin.module(func.func(sbp-decompose-aggregates))" -split-input-file | FileCheck %s

// A softmax becomes the row maximum, the shifted exponential, its row sum
// and the division: structured ops both lowerings fuse and tile.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf32>)
// CHECK-NOT: linalg.softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x16xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x16xf32>, tensor<2xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<2x16xf32>)
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x16xf32>, tensor<2xf32>)
// CHECK: arith.divf
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %e = tensor.empty() : tensor<2x16xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<2x16xf32>) outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// Other ops are left alone.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: return
func.func @matmul(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>, %c: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<2x4xf32>, tensor<4x8xf32>) outs(%c : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
