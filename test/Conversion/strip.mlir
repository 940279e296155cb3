// RUN: sbp-opt %s --sbp-strip | FileCheck %s

// CHECK-NOT: sbp.
// CHECK-LABEL: func.func @f(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: math.exp %{{.*}} : tensor<4xf32>
sbp.mesh @m shape = [2]
func.func @f(%x: tensor<4xf32> {sbp.sharding = #sbp.nd<@m, [B]>})
    -> (tensor<4xf32> {sbp.sharding = #sbp.nd<@m, [B]>}) {
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [B]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
