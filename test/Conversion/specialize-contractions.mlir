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

// Not a plain product (scaled), and a product over four loops: left alone.
// CHECK-LABEL: func.func @others
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @others(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %init: tensor<8x4xf32>, %c: tensor<2x8x16xf32>, %d: tensor<2x16x4xf32>, %init3: tensor<2x8x4xf32>) -> (tensor<8x4xf32>, tensor<2x8x4xf32>) {
  %two = arith.constant 2.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %two : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%c, %d : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%init3 : tensor<2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %r, %r3 : tensor<8x4xf32>, tensor<2x8x4xf32>
}
