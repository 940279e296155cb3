// RUN: sbp-opt %s -split-input-file --sbp-split-stages="stages=2 micro-batches=4" | FileCheck %s
// RUN: sbp-opt %s -split-input-file --sbp-split-stages="stages=2 micro-batches=4 schedule=gpipe" | FileCheck %s --check-prefix=GPIPE

// Two layers of an MLP in two stages of 4 micro-batches: the input is cut
// along the batch, each stage takes its own weights whole and the second
// receives the first's activations.

// CHECK: module attributes {sbp.pipeline = {function = "mlp", mesh = @pipeline, micro_batches = 4 : i64, outputs = [{combine = "concat", dim = 0 : i64, result = 0 : i64, stage = 1 : i64}], schedule = "1f1b", stages = [@mlp_stage0, @mlp_stage1]}}
// CHECK-NEXT: sbp.mesh @pipeline shape = [2]
// GPIPE: schedule = "gpipe"
// CHECK-LABEL: func.func @mlp_stage0
// CHECK-SAME: %[[X:.*]]: tensor<4x16xf32> {sbp.source = {input = 0 : i64, micro_batch_dim = 0 : i64}}
// CHECK-SAME: %[[W0:.*]]: tensor<16x16xf32> {sbp.source = {input = 1 : i64}}
// CHECK-SAME: -> tensor<4x16xf32>
// The zero accumulator is made again in each stage rather than sent.
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[H:.*]] = linalg.matmul ins(%[[X]], %[[W0]] : {{.*}}) outs(%[[ZERO]] : tensor<4x16xf32>)
// CHECK: return %[[H]]
// CHECK-LABEL: func.func @mlp_stage1
// CHECK-SAME: %[[A:.*]]: tensor<4x16xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}
// CHECK-SAME: %[[W1:.*]]: tensor<16x16xf32> {sbp.source = {input = 2 : i64}}
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%[[A]], %[[W1]]
// CHECK-NOT: func.func @mlp(
func.func @mlp(%x: tensor<16x16xf32>, %w0: tensor<16x16xf32>,
               %w1: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// A loss: the sum over the batch is a partial sum over the micro-batches,
// which the pipeline adds up; the weight norm does not depend on the batch
// and is taken once. Both stages read the weight: arguments go to every
// stage that reads them.

// CHECK: module attributes {sbp.pipeline = {function = "loss", mesh = @pipeline, micro_batches = 4 : i64, outputs = [{combine = "sum", result = 0 : i64, stage = 1 : i64}, {combine = "same", result = 0 : i64, stage = 0 : i64}]
// CHECK-LABEL: func.func @loss_stage0
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32> {sbp.source = {input = 1 : i64}}) -> tensor<f32>
// CHECK-LABEL: func.func @loss_stage1
// CHECK-SAME: %{{.*}}: tensor<2x4xf32> {sbp.source = {input = 0 : i64, micro_batch_dim = 0 : i64}}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {sbp.source = {input = 1 : i64}}
// CHECK: linalg.matmul
// CHECK: linalg.reduce
func.func @loss(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %norm = linalg.reduce ins(%w : tensor<4x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %m = arith.mulf %in, %in : f32
      %a = arith.addf %m, %acc : f32
      linalg.yield %a : f32
    }
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %sum = linalg.reduce ins(%h : tensor<8x4xf32>) outs(%s : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %sum, %norm : tensor<f32>, tensor<f32>
}
