// RUN: sbp-opt %s -split-input-file --sbp-strip | FileCheck %s

// CHECK-NOT: sbp.
// CHECK-LABEL: func.func @f(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: math.exp %{{.*}} : tensor<4xf32>
sbp.mesh @m shape = [2]
func.func @f(%x: tensor<4xf32> {sbp.sharding = #sbp.nd<@m, [B]>})
    -> (tensor<4xf32> {sbp.sharding = #sbp.nd<@m, [B]>}) {
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A logical program runs as it is on one rank: annotations and boxing leave
// the value unchanged.
// CHECK-NOT: sbp.
// CHECK-LABEL: func.func @logical(%{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %arg0
// CHECK-NEXT: return %[[E]]
sbp.mesh @m shape = [2]
func.func @logical(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = sbp.annotate %x #sbp.nd<@m, [S(0)]> : tensor<4x8xf32>
  %e = math.exp %a : tensor<4x8xf32>
  %b = sbp.boxing %e #sbp.nd<@m, [S(0)]> -> #sbp.nd<@m, [B]> : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
