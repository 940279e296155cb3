// RUN: sbp-opt %s --sbp-make-train-step="optimizer=adamw lr=0.01" --sbp-split-stages="stages=2 micro-batches=2" | FileCheck %s
// RUN: sbp-opt %s --sbp-make-train-step="optimizer=adamw lr=0.01" --sbp-split-stages="stages=2 micro-batches=2" --sbp-parallelize | FileCheck %s --check-prefix=PART

// Layers as one scf.for over a stacked weight %w: the loop is split into
// one loop per stage, each stage takes only its layers' rows of %w
// (`offset`), and its update updates those rows and their AdamW moments;
// the step's updated %w (and moments) is the two updates' results one
// after another along dimension 0.

// CHECK: outputs = [{combine = "same", result = 0 : i64, stage = 0 : i64, update}, {combine = "concat", dim = 0 : i64, result = [1, 0], stage = [0, 1], update}, {combine = "same", result = 2 : i64, stage = 0 : i64, update}, {combine = "same", result = 3 : i64, stage = 0 : i64, update}, {combine = "concat", dim = 0 : i64, result = [4, 1], stage = [0, 1], update}, {combine = "concat", dim = 0 : i64, result = [5, 2], stage = [0, 1], update}, {combine = "same", result = 6 : i64, stage = 0 : i64, update}, {combine = "sum", result = 0 : i64, stage = 1 : i64}]
// Each forward also returns its loop's layer inputs (and the last stage its
// loop's output, which the loss's gradient reads) for its backward, which
// takes them as `saved` arguments and runs only the backward loop: each
// layer recomputed from its saved input, never the forward loop again.
// CHECK-LABEL: func.func @stack_train_step_stage0(
// CHECK-SAME: tensor<2x8x8xf32> {sbp.source = {input = 1 : i64, offset = 0 : i64}}) -> (tensor<4x8xf32>, tensor<2x4x8xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c2
// CHECK: tensor.extract_slice %{{.*}} : tensor<2x8x8xf32> to tensor<8x8xf32>
// CHECK: tensor.insert_slice %{{.*}} : tensor<4x8xf32> into tensor<2x4x8xf32>
// CHECK-LABEL: func.func @stack_train_step_stage1(
// CHECK-SAME: tensor<2x8x8xf32> {sbp.source = {input = 1 : i64, offset = 2 : i64}}) -> (tensor<f32>, tensor<4x8xf32>, tensor<2x4x8xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c2
// CHECK-LABEL: func.func @stack_train_step_stage0_backward(
// CHECK-SAME: tensor<4x8xf32> {sbp.source = {backward = 1 : i64, result = 0 : i64}}, %[[TAPE0:arg[0-9]+]]: tensor<2x4x8xf32> {sbp.source = {saved = 0 : i64}})
// CHECK-SAME: -> (tensor<8x8xf32>, tensor<2x8x8xf32>)
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[TAPE0]]
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @stack_train_step_stage1_backward(
// CHECK-SAME: %[[OUT:arg[0-9]+]]: tensor<4x8xf32> {sbp.source = {saved = 0 : i64}}, %[[TAPE1:arg[0-9]+]]: tensor<2x4x8xf32> {sbp.source = {saved = 1 : i64}})
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<2x8x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[OUT]],
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[TAPE1]]
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @stack_train_step_stage0_update(
// CHECK-SAME: tensor<2x8x8xf32> {sbp.source = {input = 1 : i64, offset = 0 : i64}}
// CHECK-SAME: tensor<2x8x8xf32> {sbp.source = {input = 4 : i64, offset = 0 : i64}}
// CHECK-SAME: tensor<2x8x8xf32> {sbp.source = {input = 5 : i64, offset = 0 : i64}}
// CHECK-LABEL: func.func @stack_train_step_stage1_update(
// CHECK-SAME: %{{.*}}: tensor<2x8x8xf32> {sbp.source = {input = 1 : i64, offset = 2 : i64}}, %{{.*}}: tensor<2x8x8xf32> {sbp.source = {input = 4 : i64, offset = 2 : i64}}, %{{.*}}: tensor<2x8x8xf32> {sbp.source = {input = 5 : i64, offset = 2 : i64}}, %{{.*}}: tensor<f32> {sbp.source = {input = 6 : i64}}, %{{.*}}: tensor<2x8x8xf32> {sbp.source = {gradient = 0 : i64}})

// No weight crosses the cut: only the layer's output goes forward and its
// gradient back.
// PART-LABEL: func.func @stack_train_step_stage0(
// PART: sbp.send {{.*}} : tensor<4x8xf32>
// PART-NOT: sbp.send
// PART-LABEL: func.func @stack_train_step_stage1(
// PART: sbp.recv {{.*}} : tensor<4x8xf32>
// PART-NOT: sbp.recv
// PART-LABEL: func.func @stack_train_step_stage0_backward(

func.func @stack(%x: tensor<8x8xf32>, %win: tensor<8x8xf32>, %w: tensor<4x8x8xf32>) -> tensor<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %h0 = linalg.matmul ins(%x, %win : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<8x8xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<8x8xf32>
    %e = tensor.empty() : tensor<8x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %m = linalg.matmul ins(%h, %wi : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    %t = math.tanh %m : tensor<8x8xf32>
    scf.yield %t : tensor<8x8xf32>
  }
  return %y : tensor<8x8xf32>
}
