// RUN: sbp-opt %s -split-input-file -verify-diagnostics --sbp-insert-transfers | FileCheck %s
// RUN: sbp-opt %s -split-input-file -verify-diagnostics --sbp-insert-transfers --sbp-insert-transfers | FileCheck %s --check-prefix=TWICE

// Three stages of two devices each: stage 0 sends its result to stages 1
// and 2, stage 1 sends to stage 2, which receives in the order its senders
// send (by stage, then result) whatever the order of its arguments.
// Results that travel are no longer returned; the program's output is
// renumbered.

// CHECK: sbp.pipeline = {function = "f", mesh = @pipeline, micro_batches = 2 : i64, outputs = [{combine = "concat", dim = 0 : i64, result = 0 : i64, stage = 2 : i64}, {combine = "same", result = 0 : i64, stage = 0 : i64}]
// CHECK-LABEL: func.func @f_stage0
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32> {sbp.source = {input = 0 : i64, micro_batch_dim = 0 : i64}}) -> tensor<4xf32>
// CHECK: %[[H:.*]] = arith.negf %[[X]]
// CHECK: sbp.send %[[H]] on @pipeline axes = [0] peer = 1 : tensor<2x4xf32>
// CHECK-NEXT: sbp.send %[[H]] on @pipeline axes = [0] peer = 2 : tensor<2x4xf32>
// CHECK-NEXT: return %{{.*}} : tensor<4xf32>
// CHECK-LABEL: func.func @f_stage1
// CHECK-SAME: () {
// CHECK-NEXT: %[[A:.*]] = sbp.recv on @pipeline axes = [0] peer = 0 : tensor<2x4xf32>
// CHECK-NEXT: %[[G:.*]] = arith.negf %[[A]]
// CHECK-NEXT: sbp.send %[[G]] on @pipeline axes = [0] peer = 2 : tensor<2x4xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @f_stage2
// CHECK-SAME: () -> tensor<2x4xf32> {
// CHECK-NEXT: %[[FROM0:.*]] = sbp.recv on @pipeline axes = [0] peer = 0
// CHECK-NEXT: %[[FROM1:.*]] = sbp.recv on @pipeline axes = [0] peer = 1
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[FROM1]], %[[FROM0]]
// CHECK-NEXT: return %[[R]]
// TWICE-COUNT-3: sbp.send
// TWICE-NOT: sbp.send
module attributes {sbp.partitioned, sbp.pipeline = {function = "f", mesh = @pipeline, micro_batches = 2 : i64, outputs = [{combine = "concat", dim = 0 : i64, result = 0 : i64, stage = 2 : i64}, {combine = "same", result = 1 : i64, stage = 0 : i64}], schedule = "1f1b", stages = [@f_stage0, @f_stage1, @f_stage2]}} {
  sbp.mesh @pipeline shape = [3, 2]
  func.func @f_stage0(%x: tensor<2x4xf32> {sbp.source = {input = 0 : i64, micro_batch_dim = 0 : i64}}) -> (tensor<2x4xf32>, tensor<4xf32>) {
    %h = arith.negf %x : tensor<2x4xf32>
    %c = arith.constant dense<1.0> : tensor<4xf32>
    return %h, %c : tensor<2x4xf32>, tensor<4xf32>
  }
  func.func @f_stage1(%a: tensor<2x4xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}) -> tensor<2x4xf32> {
    %g = arith.negf %a : tensor<2x4xf32>
    return %g : tensor<2x4xf32>
  }
  func.func @f_stage2(%g: tensor<2x4xf32> {sbp.source = {result = 0 : i64, stage = 1 : i64}}, %h: tensor<2x4xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}) -> tensor<2x4xf32> {
    %r = arith.addf %g, %h : tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
}

// -----

// Not a pipeline: unchanged.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: return
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A received type that is not what the sender sends: the stages are not
// partitioned alike.
module attributes {sbp.pipeline = {function = "f", mesh = @pipeline, micro_batches = 1 : i64, outputs = [{combine = "same", result = 0 : i64, stage = 1 : i64}], schedule = "1f1b", stages = [@s0, @s1]}} {
  sbp.mesh @pipeline shape = [2]
  func.func @s0(%x: tensor<4xf32> {sbp.source = {input = 0 : i64}}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  // expected-error @+1 {{sbp-insert-transfers: argument #0 of @s1 has type 'tensor<2xf32>' but @s0 sends 'tensor<4xf32>'; partition the stages first}}
  func.func @s1(%a: tensor<2xf32> {sbp.source = {result = 0 : i64, stage = 0 : i64}}) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}
