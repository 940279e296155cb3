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

// A clamp is the minimum with its upper bound, then the maximum with its
// lower one, on tensors and in payloads alike.
// CHECK-LABEL: func.func @clampf
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[LO:.*]]: tensor<4xf32>, %[[HI:.*]]: tensor<4xf32>)
// CHECK-NOT: math.clampf
// CHECK: %[[BELOW:.*]] = arith.minimumf %[[X]], %[[HI]] : tensor<4xf32>
// CHECK: %[[Y:.*]] = arith.maximumf %[[BELOW]], %[[LO]] : tensor<4xf32>
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[B:.*]] = arith.minimumf %[[V]], %{{.*}} : f32
// CHECK: arith.maximumf %[[B]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.addf %[[Y]], %{{.*}} : tensor<4xf32>
// CHECK: return %[[S]]
func.func @clampf(%x: tensor<4xf32>, %lo: tensor<4xf32>, %hi: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.clampf %x to [%lo, %hi] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %c = math.clampf %v to [%zero, %one] : f32
    linalg.yield %c : f32
  } -> tensor<4xf32>
  %2 = arith.addf %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
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
