// RUN: sbp-opt %s -split-input-file --sbp-propagate -verify-diagnostics | FileCheck %s

// Unannotated arguments and results are replicated; every op records the
// signature it runs with.
// CHECK-LABEL: func.func @defaults
// CHECK-SAME: (%{{.*}}: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [B]>})
// CHECK-SAME: -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [B]>})
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]}
sbp.mesh @m shape = [2]
func.func @defaults(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = math.exp %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Layouts flow forward from an annotation through element-wise ops.
// CHECK-LABEL: func.func @forward
// CHECK: sbp.annotate %{{.*}} #sbp.nd<@m, [S(1)]>
// CHECK: arith.negf %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]}
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]}
sbp.mesh @m shape = [2]
func.func @forward(%x: tensor<8x4xf32>) -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) {
  %a = sbp.annotate %x #sbp.nd<@m, [S(1)]> : tensor<8x4xf32>
  %0 = arith.negf %a : tensor<8x4xf32>
  %1 = math.exp %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// ... and backward from a wanted result layout.
// CHECK-LABEL: func.func @backward
// CHECK: arith.negf %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
sbp.mesh @m shape = [2]
func.func @backward(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %0 = arith.negf %x : tensor<8x4xf32>
  %1 = math.exp %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// An op without a rule runs whole, with a remark.
// CHECK-LABEL: func.func @no_rule
// CHECK: tensor.reshape %{{.*}} {sbp.operands = [#sbp.nd<@m, [B]>, #sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]}
sbp.mesh @m shape = [2]
func.func @no_rule(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) -> tensor<4x8xf32> {
  %shape = arith.constant dense<[4, 8]> : tensor<2xi64>
  // expected-remark @+1 {{no SBP rule for this op on mesh @m: it runs whole, B in, B out}}
  %0 = tensor.reshape %x(%shape) : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A pad keeps the split of a dimension it does not pad.
// CHECK-LABEL: func.func @pad
// CHECK: tensor.pad
// CHECK: } {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]}
sbp.mesh @m shape = [2]
func.func @pad(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>})
    -> (tensor<10x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x4xf32> to tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}

// -----

// A call runs with its callee's layouts; the callee is laid out on its own.
// CHECK-LABEL: func.func @callee
// CHECK-SAME: {sbp.sharding = #sbp.nd<@m, [S(0)]>}
// CHECK: arith.negf %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
// CHECK-LABEL: func.func @caller
// CHECK: call @callee(%{{.*}}) {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
sbp.mesh @m shape = [2]
func.func @callee(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %0 = arith.negf %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func @caller(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = func.call @callee(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A loop carries each value in the layout of its initial value.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
// CHECK: } {sbp.operands = [unit, unit, unit, #sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]}
sbp.mesh @m shape = [2]
func.func @loop(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %0 = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<8x4xf32>) {
    %1 = math.exp %h : tensor<8x4xf32>
    scf.yield %1 : tensor<8x4xf32>
  }
  return %0 : tensor<8x4xf32>
}

// -----

// A boxing already in the program produces its destination layout.
// CHECK-LABEL: func.func @given_boxing
// CHECK: sbp.boxing
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]}
sbp.mesh @m shape = [2]
func.func @given_boxing(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) {
  %0 = sbp.boxing %x #sbp.nd<@m, [S(0)]> -> #sbp.nd<@m, [S(1)]> : tensor<8x4xf32>
  %1 = math.exp %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// A recorded signature is kept although another one would send nothing:
// the operand arrives replicated and is sliced.
// CHECK-LABEL: func.func @recorded_signature
// CHECK: math.exp %{{.*}} {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]}
sbp.mesh @m shape = [2]
func.func @recorded_signature(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A module without meshes is left alone.
// CHECK-LABEL: func.func @no_mesh
// CHECK-NOT: sbp.
func.func @no_mesh(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = math.exp %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
