// RUN: sbp-opt %s -split-input-file --sbp-make-train-step="optimizer=adamw lr=0.01" --sbp-split-stages="stages=2 micro-batches=2" -verify-diagnostics | FileCheck %s
// RUN: sbp-opt %s -split-input-file --sbp-make-train-step="optimizer=adamw lr=0.01" --sbp-split-stages="stages=2 micro-batches=2" -verify-diagnostics --sbp-parallelize | FileCheck %s --check-prefix=SENT

// A training step (AdamW, mean squared error) in two stages of two
// micro-batches: the stages of its loss, a backward function per stage
// that recomputes the stage and returns the gradients of what it received
// and of its parameter, and an update per stage; the updated parameters
// and moments are outputs of the updates, the loss sums the micro-batches.

// CHECK: module attributes {sbp.pipeline = {backward = [@mlp_train_step_stage0_backward, @mlp_train_step_stage1_backward], function = "mlp_train_step", mesh = @pipeline, micro_batches = 2 : i64, outputs = [{combine = "same", result = 0 : i64, stage = 0 : i64, update}, {combine = "same", result = 0 : i64, stage = 1 : i64, update}, {combine = "same", result = 1 : i64, stage = 0 : i64, update}, {combine = "same", result = 2 : i64, stage = 0 : i64, update}, {combine = "same", result = 1 : i64, stage = 1 : i64, update}, {combine = "same", result = 2 : i64, stage = 1 : i64, update}, {combine = "same", result = 3 : i64, stage = 0 : i64, update}, {combine = "sum", result = 0 : i64, stage = 1 : i64}], schedule = "1f1b", stages = [@mlp_train_step_stage0, @mlp_train_step_stage1], update = [@mlp_train_step_stage0_update, @mlp_train_step_stage1_update]}}
// CHECK-LABEL: func.func @mlp_train_step_stage0(
// CHECK-SAME: tensor<4x4xf32> {sbp.source = {input = 7 : i64, micro_batch_dim = 0 : i64}}
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {input = 0 : i64}}) -> tensor<4x8xf32>
// CHECK: linalg.matmul
// CHECK: math.tanh
// CHECK-LABEL: func.func @mlp_train_step_stage1(
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}
// CHECK-SAME: -> tensor<f32>
// The backward of stage 0 recomputes the layer from its input and takes
// the gradient of its output from stage 1's backward.
// CHECK-LABEL: func.func @mlp_train_step_stage0_backward(
// CHECK-SAME: %[[X:.*]]: tensor<4x4xf32> {sbp.source = {input = 7 : i64, micro_batch_dim = 0 : i64}}
// CHECK-SAME: %[[W0:.*]]: tensor<4x8xf32> {sbp.source = {input = 0 : i64}}
// CHECK-SAME: %[[DH:.*]]: tensor<4x8xf32> {sbp.source = {backward = 1 : i64, result = 0 : i64}}) -> tensor<4x8xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[W0]]
// CHECK: math.tanh
// CHECK: return
// CHECK-LABEL: func.func @mlp_train_step_stage1_backward(
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<8x4xf32>)
// Parameter, moments, step count, then the accumulated gradient.
// CHECK-LABEL: func.func @mlp_train_step_stage0_update(
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {input = 0 : i64}}
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {input = 2 : i64}}
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {input = 3 : i64}}
// CHECK-SAME: tensor<f32> {sbp.source = {input = 6 : i64}}
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {gradient = 0 : i64}}) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>)
// CHECK: math.sqrt
// CHECK-LABEL: func.func @mlp_train_step_stage1_update(
// CHECK-SAME: {sbp.source = {input = 1 : i64}}
// CHECK-NOT: func.func @mlp_train_step(

// After partitioning: the forward of stage 1 returns what it received (for
// its backward), whose gradient its backward sends back to stage 0.
// SENT-LABEL: func.func @mlp_train_step_stage0(
// SENT: sbp.send {{.*}} peer = 1
// SENT-LABEL: func.func @mlp_train_step_stage1(
// SENT-SAME: -> (tensor<f32> {{.*}}, tensor<4x8xf32>
// SENT: %[[A:.*]] = sbp.recv {{.*}} peer = 0
// SENT: return %{{.*}}, %[[A]]
// SENT-LABEL: func.func @mlp_train_step_stage0_backward(
// SENT: sbp.recv {{.*}} peer = 1
// SENT-LABEL: func.func @mlp_train_step_stage1_backward(
// SENT-SAME: %{{.*}}: tensor<4x8xf32> {sbp.sharding = {{.*}}, sbp.source = {result = 0 : i64, stage = 0 : i64}}
// SENT: sbp.send {{.*}} peer = 0
// SENT: return %{{.*}} : tensor<8x4xf32>
func.func @mlp(%x: tensor<8x4xf32>, %w0: tensor<4x8xf32>, %w1: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<8x4xf32>, tensor<4x8xf32>) outs(%z0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = math.tanh %h : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%t, %w1 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%z1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A weight that both stages read (tied): its gradient would be summed
// across stages, which a training pipeline does not do.

// expected-error @+1 {{cannot pipeline the training step: parameter #0 is used by stages 0 and 1 other than as disjoint rows that cover it, whose gradients would have to be summed across stages (a weight shared by stages, such as an embedding the logits reuse, is not supported in a training pipeline)}}
func.func @tied(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = math.tanh %h : tensor<8x8xf32>
  %y = linalg.matmul ins(%t, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// The two stages read overlapping rows of %w: not disjoint.

// expected-error @+1 {{cannot pipeline the training step: parameter #0 is used by stages 0 and 1 other than as disjoint rows that cover it}}
func.func @overlapping_rows(%x: tensor<8x8xf32>, %w: tensor<12x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %w0 = tensor.extract_slice %w[0, 0] [8, 8] [1, 1] : tensor<12x8xf32> to tensor<8x8xf32>
  %w1 = tensor.extract_slice %w[4, 0] [8, 8] [1, 1] : tensor<12x8xf32> to tensor<8x8xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = math.tanh %h : tensor<8x8xf32>
  %y = linalg.matmul ins(%t, %w1 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Only some rows of %w are read, by one stage: the others would need an
// update of their own.

// expected-error @+1 {{cannot pipeline the training step: stage 1 uses only some rows of parameter #1 and no stage the others}}
func.func @some_rows(%x: tensor<8x8xf32>, %v: tensor<8x8xf32>, %w: tensor<12x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %w1 = tensor.extract_slice %w[4, 0] [8, 8] [1, 1] : tensor<12x8xf32> to tensor<8x8xf32>
  %h = linalg.matmul ins(%x, %v : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = math.tanh %h : tensor<8x8xf32>
  %y = linalg.matmul ins(%t, %w1 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
