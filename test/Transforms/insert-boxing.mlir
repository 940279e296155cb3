// RUN: sbp-opt %s -split-input-file --sbp-insert-boxing | FileCheck %s

// Uses that need one layout share one boxing, right after the definition;
// a use that needs another layout gets its own; a use that needs the
// layout the value has gets none.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>
// CHECK-DAG: %[[TOB:.*]] = sbp.boxing %[[X]] #sbp.nd<@m, [S(0)]> -> #sbp.nd<@m, [B]> : tensor<8x4xf32>
// CHECK-DAG: %[[TOP:.*]] = sbp.boxing %[[X]] #sbp.nd<@m, [S(0)]> -> #sbp.nd<@m, [S(1)]> : tensor<8x4xf32>
// CHECK: math.exp %[[TOB]]
// CHECK-NEXT: math.exp %[[TOB]]
// CHECK-NEXT: math.exp %[[TOP]]
// CHECK-NEXT: math.exp %[[X]]
sbp.mesh @m shape = [2]
func.func @shared(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]} : tensor<8x4xf32>
  %1 = math.exp %x {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]} : tensor<8x4xf32>
  %2 = math.exp %x {sbp.operands = [#sbp.nd<@m, [S(1)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]} : tensor<8x4xf32>
  %3 = math.exp %x {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(0)]>]} : tensor<8x4xf32>
  return
}

// -----

// Returned values are boxed to the function's result layout, op results
// right after their op.
// CHECK-LABEL: func.func @to_result
// CHECK: %[[P:.*]] = math.exp
// CHECK-NEXT: %[[B:.*]] = sbp.boxing %[[P]] #sbp.nd<@m, [P(sum)]> -> #sbp.nd<@m, [B]>
// CHECK-NEXT: return %[[B]]
sbp.mesh @m shape = [2]
func.func @to_result(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [P]>})
    -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [B]>}) {
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [P]>], sbp.results = [#sbp.nd<@m, [P]>]} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
