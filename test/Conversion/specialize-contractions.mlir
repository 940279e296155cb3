// RUN: sbp-opt %s --pass-pipeline="builtin.module(func.func(sbp-specialize-contractions))" -split-input-file | FileCheck %s

// The gradient of a matmul's weight, dW = X^T dY: X is read as (k, m), so
// it is transposed into a plain matmul.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[DY:.*]]: tensor<8x4xf32>, %[[INIT:.*]]: tensor<16x4xf32>)
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<16x8xf32>) permutation = [1, 0]
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[XT]], %[[DY]] : tensor<16x8xf32>, tensor<8x4xf32>) outs(%[[INIT]] : tensor<16x4xf32>)
// CHECK: return %[[R]]
func.func @weight_gradient(%x: tensor<8x16xf32>, %dy: tensor<8x4xf32>, %init: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(k, m, n) -> (k, m)>, affine_map<(k, m, n) -> (k, n)>, affine_map<(k, m, n) -> (m, n)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x, %dy : tensor<8x16xf32>, tensor<8x4xf32>) outs(%init : tensor<16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}

// -----

// The gradient of a matmul's input, dX = dY W^T, with the operands in the
// other order.
// CHECK-LABEL: func.func @input_gradient
// CHECK-SAME: (%[[W:.*]]: tensor<16x4xf32>, %[[DY:.*]]: tensor<8x4xf32>, %[[INIT:.*]]: tensor<8x16xf32>)
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<16x4xf32>)
// CHECK: linalg.matmul ins(%[[DY]], %[[WT]] : tensor<8x4xf32>, tensor<4x16xf32>) outs(%[[INIT]] : tensor<8x16xf32>)
func.func @input_gradient(%w: tensor<16x4xf32>, %dy: tensor<8x4xf32>, %init: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %dy : tensor<16x4xf32>, tensor<8x4xf32>) outs(%init : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Not a plain product (scaled): left alone. A weight read by every row of
// a batch (rows b and m, read by the input and the output, not the
// weight): one matmul over the merged rows.
// CHECK-LABEL: func.func @others
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %{{.*}}: tensor<8x4xf32>, %[[X:.*]]: tensor<2x8x16xf32>, %[[INIT:.*]]: tensor<2x8x4xf32>)
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[XC]], %[[W]] : tensor<16x16xf32>, tensor<16x4xf32>) outs(%[[C]] : tensor<16x4xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2]] output_shape [2, 8, 4]
// CHECK: return %[[SCALED]], %[[R]]
func.func @others(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %init: tensor<8x4xf32>, %c: tensor<2x8x16xf32>, %init3: tensor<2x8x4xf32>) -> (tensor<8x4xf32>, tensor<2x8x4xf32>) {
  %two = arith.constant 2.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %two : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%c, %b : tensor<2x8x16xf32>, tensor<16x4xf32>) outs(%init3 : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %r, %r3 : tensor<8x4xf32>, tensor<2x8x4xf32>
}

// -----

// A batched product in order: one linalg.batch_matmul, nothing moved.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x16xf32>, %[[B:.*]]: tensor<2x16x4xf32>, %[[INIT:.*]]: tensor<2x8x4xf32>)
// CHECK-NEXT: %[[R:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%[[INIT]] : tensor<2x8x4xf32>)
// CHECK-NEXT: return %[[R]]
func.func @batched(%c: tensor<2x8x16xf32>, %d: tensor<2x16x4xf32>, %init3: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %r3 = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%c, %d : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%init3 : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %r3 : tensor<2x8x4xf32>
}

// -----

// Attention's probabilities times values, ctx[b, i, a, d] += p[b, a, i, j]
// * v[b, j, a, d]: batch loops b and a (in the output's order), the
// operands and the output moved to (batch, rows, columns), the batch loops
// merged for one linalg.batch_matmul, and the product put back in the
// output's order.
// CHECK-LABEL: func.func @attention_values
// CHECK-SAME: (%[[P:.*]]: tensor<2x3x5x5xbf16>, %[[V:.*]]: tensor<2x5x3x4xbf16>, %[[INIT:.*]]: tensor<2x5x3x4xbf16>)
// CHECK: %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<2x5x3x4xbf16>) outs(%{{.*}} : tensor<2x3x5x4xbf16>) permutation = [0, 2, 1, 3]
// CHECK: %[[CT:.*]] = linalg.transpose ins(%[[INIT]] : tensor<2x5x3x4xbf16>) outs(%{{.*}} : tensor<2x3x5x4xbf16>) permutation = [0, 2, 1, 3]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[CT]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x4xbf16> into tensor<6x5x4xbf16>
// CHECK: %[[PC:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x5xbf16> into tensor<6x5x5xbf16>
// CHECK: %[[VC:.*]] = tensor.collapse_shape %[[VT]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x4xbf16> into tensor<6x5x4xbf16>
// CHECK: %[[BM:.*]] = linalg.batch_matmul ins(%[[PC]], %[[VC]] : tensor<6x5x5xbf16>, tensor<6x5x4xbf16>) outs(%[[C]] : tensor<6x5x4xbf16>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[BM]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 5, 4]
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[E]] : tensor<2x3x5x4xbf16>) outs(%{{.*}} : tensor<2x5x3x4xbf16>) permutation = [0, 2, 1, 3]
// CHECK: return %[[R]]
func.func @attention_values(%p: tensor<2x3x5x5xbf16>, %v: tensor<2x5x3x4xbf16>, %init: tensor<2x5x3x4xbf16>) -> tensor<2x5x3x4xbf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, a, d, j) -> (b, a, i, j)>, affine_map<(b, i, a, d, j) -> (b, j, a, d)>, affine_map<(b, i, a, d, j) -> (b, i, a, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x3x5x5xbf16>, tensor<2x5x3x4xbf16>) outs(%init : tensor<2x5x3x4xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %m = arith.mulf %x, %y : bf16
    %s = arith.addf %o, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<2x5x3x4xbf16>
  return %r : tensor<2x5x3x4xbf16>
}

// -----

// A weight's gradient summed over batch and sequence, dW[i, o] += x[b, s,
// i] * dy[b, s, o]: two reductions, merged (in x's order) after x is
// moved to (i, b, s).
// CHECK-LABEL: func.func @two_reductions
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[DY:.*]]: tensor<2x3x5xf32>, %[[INIT:.*]]: tensor<4x5xf32>)
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: %[[XC:.*]] = tensor.collapse_shape %[[XT]] {{\[}}[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK: %[[DYC:.*]] = tensor.collapse_shape %[[DY]] {{\[}}[0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[XC]], %[[DYC]] : tensor<4x6xf32>, tensor<6x5xf32>) outs(%[[INIT]] : tensor<4x5xf32>)
// CHECK: return %[[R]]
func.func @two_reductions(%x: tensor<2x3x4xf32>, %dy: tensor<2x3x5xf32>, %init: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, i, o) -> (b, s, i)>, affine_map<(b, s, i, o) -> (b, s, o)>, affine_map<(b, s, i, o) -> (i, o)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%x, %dy : tensor<2x3x4xf32>, tensor<2x3x5xf32>) outs(%init : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// Not products: an output dimension no input reads, and a reduction only
// one input reads.
// CHECK-LABEL: func.func @not_products
// CHECK-NOT: matmul
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: matmul
func.func @not_products(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %init3: tensor<2x8x4xf32>, %c: tensor<8x16x3xf32>, %init: tensor<8x4xf32>) -> (tensor<2x8x4xf32>, tensor<8x4xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(r, m, n, k) -> (m, k)>, affine_map<(r, m, n, k) -> (k, n)>, affine_map<(r, m, n, k) -> (r, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init3 : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k, j)>, affine_map<(m, n, k, j) -> (k, n)>, affine_map<(m, n, k, j) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%c, %b : tensor<8x16x3xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r, %q : tensor<2x8x4xf32>, tensor<8x4xf32>
}
