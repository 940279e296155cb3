// RUN: sbp-opt %s -split-input-file --sbp-split-stages | FileCheck %s

// Stages written by hand with sbp.stage. The residual %h skips stage 1 and
// goes straight from stage 0 to stage 2; the zero fill has no stage and is
// made again where used; one micro-batch, so nothing is cut.

// CHECK: sbp.pipeline = {function = "skip", mesh = @pipeline, micro_batches = 1 : i64, outputs = [{combine = "same", result = 0 : i64, stage = 2 : i64}], schedule = "1f1b", stages = [@skip_stage0, @skip_stage1, @skip_stage2]}
// CHECK-LABEL: func.func @skip_stage0
// CHECK-SAME: (%{{.*}}: tensor<8x4xf32> {sbp.source = {input = 0 : i64}}, %{{.*}}: tensor<4x4xf32> {sbp.source = {input = 1 : i64}})
// CHECK-SAME: -> tensor<8x4xf32>
// CHECK-LABEL: func.func @skip_stage1
// CHECK-SAME: (%[[H:.*]]: tensor<8x4xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}, %{{.*}}: tensor<4x4xf32> {sbp.source = {input = 2 : i64}})
// CHECK-LABEL: func.func @skip_stage2
// CHECK-SAME: (%[[H1:.*]]: tensor<8x4xf32> {sbp.source = {result = 0 : i64, stage = 1 : i64}}, %[[H0:.*]]: tensor<8x4xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}})
// CHECK: linalg.add ins(%[[H1]], %[[H0]]
// CHECK-NOT: sbp.stage
func.func @skip(%x: tensor<8x4xf32>, %w0: tensor<4x4xf32>, %w1: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul {sbp.stage = 0} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = linalg.matmul {sbp.stage = 1} ins(%h, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.add {sbp.stage = 2} ins(%g, %h : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
