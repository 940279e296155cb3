// RUN: sbp-opt %s -split-input-file --sbp-auto-parallel="cluster=dgx-a100-8" | FileCheck %s

// A wide batch and small weights: data parallel, nothing moves.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %{{.*}}: tensor<4096x256xf32> {sbp.sharding = #sbp.nd<@mesh, [S(0)]>}
// CHECK-SAME: %{{.*}}: tensor<256x256xf32> {sbp.sharding = #sbp.nd<@mesh, [B]>}
// CHECK-SAME: -> (tensor<4096x256xf32> {sbp.sharding = #sbp.nd<@mesh, [S(0)]>})
// CHECK: linalg.matmul {sbp.operands = [#sbp.nd<@mesh, [S(0)]>, #sbp.nd<@mesh, [B]>, #sbp.nd<@mesh, [S(0)]>]
func.func @mlp(%x: tensor<4096x256xf32>, %w: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4096x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  return %y : tensor<4096x256xf32>
}

// -----

// Annotations are kept: the weight must stay split by columns, so the
// matmul follows it.
// CHECK-LABEL: func.func @annotated
// CHECK-SAME: %{{.*}}: tensor<256x1024xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}
// CHECK: linalg.matmul {sbp.operands = [#sbp.nd<@m, [B]>, #sbp.nd<@m, [S(1)]>, #sbp.nd<@m, [S(1)]>]
sbp.mesh @m shape = [8]
func.func @annotated(%x: tensor<64x256xf32>, %w: tensor<256x1024xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%z : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// Loop-carried values keep their initial value's layout: the search prices
// the body once per iteration and the yield against the initial value.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: %{{.*}}: tensor<64x64xf32> {sbp.sharding = #sbp.nd<@mesh, [S(0)]>}
// CHECK: scf.for
// CHECK: linalg.matmul {sbp.operands = [#sbp.nd<@mesh, [S(0)]>, #sbp.nd<@mesh, [B]>, #sbp.nd<@mesh, [S(0)]>]
// CHECK: math.tanh %{{.*}} {sbp.operands = [#sbp.nd<@mesh, [S(0)]>], sbp.results = [#sbp.nd<@mesh, [S(0)]>]}
func.func @loop(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<64x64xf32>) {
    %e = tensor.empty() : tensor<64x64xf32>
    %zero = arith.constant 0.0 : f32
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
    %y = linalg.matmul ins(%acc, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
    %t = math.tanh %y : tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}
