// RUN: sbp-opt %s --sbp-clone-cheap-values -split-input-file | FileCheck %s

// A table computed from an iota (RoPE's angles) read by two products: each
// gets its own copy of the chain, the copies right after the originals.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @table_per_user
func.func @table_per_user(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-COUNT-2: tensor.empty() : tensor<4x8xf32>
  // CHECK: %[[A:.*]] = linalg.generic
  // CHECK: linalg.index 0
  // CHECK: %[[B:.*]] = linalg.generic
  // CHECK: linalg.index 0
  // CHECK-NOT: linalg.index
  // CHECK-DAG: math.cos %[[A]]
  // CHECK-DAG: math.cos %[[B]]
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %c0 = math.cos %t : tensor<4x8xf32>
  %r0 = arith.mulf %x, %c0 : tensor<4x8xf32>
  %c1 = math.cos %t : tensor<4x8xf32>
  %r1 = arith.mulf %y, %c1 : tensor<4x8xf32>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// What depends on an argument is not copied, nor are values with one user.
// CHECK-LABEL: func.func @argument_dependent
func.func @argument_dependent(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-COUNT-1: math.exp
  // CHECK-NOT: math.exp
  // CHECK-COUNT-1: arith.constant
  // CHECK-NOT: arith.constant
  %e = math.exp %x : tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %a = arith.addf %e, %e : tensor<4xf32>
  %b = arith.mulf %e, %one : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A user inside a loop gets a copy outside it, not one per trip.
// CHECK-LABEL: func.func @loop_user
func.func @loop_user(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: arith.constant dense<2.000000e+00>
  // CHECK-NEXT: arith.constant dense<2.000000e+00>
  // CHECK: scf.for
  // CHECK-NOT: arith.constant dense
  // CHECK: scf.yield
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %a = arith.mulf %x, %two : tensor<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %n = arith.addf %acc, %two : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %a, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

// A zero fill (of a scalar constant) shared by two products, as CSE leaves
// it: one fill and one empty tensor each.
// CHECK-LABEL: func.func @shared_fill
func.func @shared_fill(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK-COUNT-2: tensor.empty
  // CHECK-COUNT-2: linalg.fill
  // CHECK: linalg.matmul
  // CHECK-NOT: linalg.fill
  // CHECK: linalg.matmul
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = linalg.matmul ins(%w, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}
