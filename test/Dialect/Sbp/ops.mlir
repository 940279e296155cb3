// RUN: sbp-opt %s -allow-unregistered-dialect | sbp-opt -allow-unregistered-dialect | FileCheck %s
// RUN: sbp-opt %s -allow-unregistered-dialect -mlir-print-op-generic | sbp-opt -allow-unregistered-dialect | FileCheck %s

// CHECK: sbp.mesh @mesh2d shape = [2, 4] axes = ["dp", "tp"]
sbp.mesh @mesh2d shape = [2, 4] axes = ["dp", "tp"]
// CHECK: sbp.mesh @mesh1d shape = [4]{{$}}
sbp.mesh @mesh1d shape = [4]

// CHECK-LABEL: func.func @annotate
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @annotate(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[A:.*]] = sbp.annotate %[[X]] #sbp.nd<@mesh2d, [S(0), B]> : tensor<8x16xf32>
  %a = sbp.annotate %x #sbp.nd<@mesh2d, [S(0), B]> : tensor<8x16xf32>
  // CHECK: sbp.annotate %[[A]] #sbp.nd<@mesh2d, [S(1), S(0)]> : tensor<8x16xf32>
  %b = sbp.annotate %a #sbp.nd<@mesh2d, [S(1), S(0)]> : tensor<8x16xf32>
  // `P` alone is printed as P(sum).
  // CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh2d, [P(sum), S(1)]> : tensor<8x16xf32>
  %c = sbp.annotate %b #sbp.nd<@mesh2d, [P, S(1)]> : tensor<8x16xf32>
  // CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh2d, [P(max), P(max)]> : tensor<8x16xf32>
  %d = sbp.annotate %c #sbp.nd<@mesh2d, [P(max), P(max)]> : tensor<8x16xf32>
  // The attribute may sit on a line of its own.
  // CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh1d, [B]> : tensor<8x16xf32>
  %e = sbp.annotate %d
      #sbp.nd<@mesh1d, [B]>
      : tensor<8x16xf32>
  return %e : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @boxing
func.func @boxing(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: sbp.boxing %{{.*}} #sbp.nd<@mesh2d, [P(sum), B]> -> #sbp.nd<@mesh2d, [B, B]> : tensor<8x16xf32>
  %a = sbp.boxing %x #sbp.nd<@mesh2d, [P, B]> -> #sbp.nd<@mesh2d, [B, B]> : tensor<8x16xf32>
  // CHECK: sbp.boxing %{{.*}} #sbp.nd<@mesh1d, [S(0)]> -> #sbp.nd<@mesh1d, [S(1)]> : tensor<8x16xf32>
  %b = sbp.boxing %a #sbp.nd<@mesh1d, [S(0)]> -> #sbp.nd<@mesh1d, [S(1)]> : tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// A result of a multi-result op, with the portable comma form.
// CHECK-LABEL: func.func @result_number
func.func @result_number(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r:2 = "test.two"(%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  // CHECK: sbp.annotate %{{.*}}#1 #sbp.nd<@mesh1d, [S(0)]> : tensor<8xf32>
  %a = sbp.annotate %r#1 #sbp.nd<@mesh1d, [S(0)]> : tensor<8xf32>
  // CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh1d, [B]> : tensor<8xf32>
  %b = sbp.annotate %a, <@mesh1d, [B]> : tensor<8xf32>
  return %b : tensor<8xf32>
}

// CHECK-LABEL: func.func @function_shardings
// CHECK-SAME: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@mesh2d, [S(0), S(1)]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sbp.sharding = #sbp.nd<@mesh2d, [P(sum), B]>})
func.func @function_shardings(
    %x: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@mesh2d, [S(0), S(1)]>})
    -> (tensor<8x16xf32> {sbp.sharding = #sbp.nd<@mesh2d, [P, B]>}) {
  return %x : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x16xf32>, %y: tensor<8x4xf32>,
                       %d: tensor<?x16xf32>, %i: tensor<4xi32>) {
  // CHECK: sbp.all_reduce %{{.*}} on @mesh2d axes = [1] reduction = sum : tensor<4x16xf32>
  %0 = sbp.all_reduce %x on @mesh2d axes = [1] reduction = sum : tensor<4x16xf32>
  // CHECK: sbp.all_reduce %{{.*}} on @mesh2d axes = [0, 1] reduction = max : tensor<4xi32>
  %1 = sbp.all_reduce %i on @mesh2d axes = [0, 1] reduction = max : tensor<4xi32>
  // CHECK: sbp.all_gather %{{.*}} on @mesh2d axes = [1] gather_dim = 1 : tensor<4x16xf32> -> tensor<4x64xf32>
  %2 = sbp.all_gather %x on @mesh2d axes = [1] gather_dim = 1 : tensor<4x16xf32> -> tensor<4x64xf32>
  // Uneven shards have dynamic sizes.
  // CHECK: sbp.all_gather %{{.*}} on @mesh1d axes = [0] gather_dim = 0 : tensor<?x16xf32> -> tensor<10x16xf32>
  %3 = sbp.all_gather %d on @mesh1d axes = [0] gather_dim = 0 : tensor<?x16xf32> -> tensor<10x16xf32>
  // CHECK: sbp.reduce_scatter %{{.*}} on @mesh2d axes = [0] scatter_dim = 0 reduction = min : tensor<8x4xf32> -> tensor<4x4xf32>
  %4 = sbp.reduce_scatter %y on @mesh2d axes = [0] scatter_dim = 0 reduction = min : tensor<8x4xf32> -> tensor<4x4xf32>
  // CHECK: sbp.all_to_all %{{.*}} on @mesh2d axes = [1] split_dim = 0 concat_dim = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  %5 = sbp.all_to_all %y on @mesh2d axes = [1] split_dim = 0 concat_dim = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  // CHECK: sbp.all_to_all %{{.*}} on @mesh2d axes = [0, 1] split_dim = 0 concat_dim = 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  %6 = sbp.all_to_all %y on @mesh2d axes = [0, 1] split_dim = 0 concat_dim = 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  // CHECK: sbp.broadcast %{{.*}} on @mesh2d axes = [1, 0] root = 7 : tensor<4x16xf32>
  %7 = sbp.broadcast %x on @mesh2d axes = [1, 0] root = 7 : tensor<4x16xf32>
  // CHECK: sbp.send %{{.*}} on @mesh1d axes = [0] peer = 3 : tensor<4x16xf32>
  sbp.send %x on @mesh1d axes = [0] peer = 3 : tensor<4x16xf32>
  // CHECK: sbp.recv on @mesh1d axes = [0] peer = 0 : tensor<4x16xf32>
  %8 = sbp.recv on @mesh1d axes = [0] peer = 0 : tensor<4x16xf32>
  // CHECK: sbp.axis_index @mesh2d axis = 1 : index
  %9 = sbp.axis_index @mesh2d axis = 1 : index
  return
}
