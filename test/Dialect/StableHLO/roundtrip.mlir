// The printed forms of StableHLO as JAX and torch-xla write them parse, print
// back the same, and survive the generic form.
// RUN: sbp-opt --import-stablehlo=false %s | sbp-opt --import-stablehlo=false | FileCheck %s
// RUN: sbp-opt --import-stablehlo=false --mlir-print-op-generic %s | sbp-opt --import-stablehlo=false | FileCheck %s

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xi32>, %p: tensor<4xi1>) -> tensor<4xf32> {
  // CHECK: stablehlo.add %{{.*}}, %{{.*}} : tensor<4xf32>
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  // CHECK: stablehlo.convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
  %1 = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xf32>
  // CHECK: stablehlo.compare LT, %{{.*}}, %{{.*}}, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.compare  LT, %0, %1,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>
  %3 = stablehlo.select %2, %0, %1 : tensor<4xi1>, tensor<4xf32>
  %c = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  // CHECK: stablehlo.clamp %{{.*}}, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = stablehlo.clamp %c, %3, %c : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: chlo.erf %{{.*}} : tensor<4xf32> -> tensor<4xf32>
  %5 = chlo.erf %4 : tensor<4xf32> -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// CHECK-LABEL: func @shapes
func.func @shapes(%a: tensor<2x3xf32>, %i: tensor<i32>) -> tensor<3x2xf32> {
  // CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>
  // CHECK: stablehlo.slice %{{.*}} [0:2, 1:3, 0:4:2] : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  %1 = stablehlo.slice %0 [0:2, 1:3, 0:4:2] : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  // CHECK: stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 1 : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x4x2xf32>
  %2 = stablehlo.concatenate %1, %1, dim = 1 : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x4x2xf32>
  // CHECK: stablehlo.dynamic_slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, sizes = [1, 3, 2] : (tensor<2x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x2xf32>
  %3 = stablehlo.dynamic_slice %2, %i, %i, %i, sizes = [1, 3, 2] : (tensor<2x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x2xf32>
  // CHECK: stablehlo.reshape %{{.*}} : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  %4 = stablehlo.reshape %3 : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  // CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [1, 0], high = [-1, 0], interior = [0, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %5 = stablehlo.pad %4, %z, low = [1, 0], high = [-1, 0], interior = [0, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  // CHECK: stablehlo.reverse %{{.*}}, dims = [0] : tensor<3x2xf32>
  %6 = stablehlo.reverse %5, dims = [0] : tensor<3x2xf32>
  // CHECK: stablehlo.iota dim = 1 : tensor<3x2xf32>
  %7 = stablehlo.iota dim = 1 : tensor<3x2xf32>
  %8 = stablehlo.add %6, %7 : tensor<3x2xf32>
  return %8 : tensor<3x2xf32>
}

// CHECK-LABEL: func @contractions
func.func @contractions(%a: tensor<2x4x8xf32>, %b: tensor<2x8x5xf32>, %x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> (tensor<2x4x5xf32>, tensor<1x4x4x4xf32>) {
  // CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  // CHECK: stablehlo.convolution(%{{.*}}, %{{.*}}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = {{\[\[}}1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  return %0, %1 : tensor<2x4x5xf32>, tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func @regions
func.func @regions(%a: tensor<4x4xf32>, %t: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<2x2xf32>, tensor<5x3xf32>, tensor<4x4xf32>) {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  // CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK-NEXT: reducer(%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>)
  // CHECK: stablehlo.maximum
  %0 = stablehlo.reduce(%a init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %iota = stablehlo.iota dim = 1 : tensor<4x4xi32>
  // CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}), (%{{.*}} init: %{{.*}}) across dimensions = [1]
  %1:2 = stablehlo.reduce(%a init: %cst), (%iota init: %c) across dimensions = [1] : (tensor<4x4xf32>, tensor<4x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%x: tensor<f32>, %y: tensor<f32>) (%xi: tensor<i32>, %yi: tensor<i32>)  {
    %p = stablehlo.compare GT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %p, %x, %y : tensor<i1>, tensor<f32>
    %k = stablehlo.select %p, %xi, %yi : tensor<i1>, tensor<i32>
    stablehlo.return %v, %k : tensor<f32>, tensor<i32>
  }
  // CHECK: "stablehlo.reduce_window"
  %2 = "stablehlo.reduce_window"(%a, %cst) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  // CHECK: "stablehlo.scatter"
  // CHECK-SAME: #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
  %3 = "stablehlo.scatter"(%t, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  // CHECK: stablehlo.while(%[[I:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<4x4xf32>
  // CHECK: cond {
  // CHECK: } do {
  %4:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %a) : tensor<i32>, tensor<4x4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %iterArg, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %iterArg, %one : tensor<i32>
    %twice = stablehlo.add %iterArg_0, %iterArg_0 : tensor<4x4xf32>
    stablehlo.return %next, %twice : tensor<i32>, tensor<4x4xf32>
  }
  // CHECK: stablehlo.custom_call @Sharding(%{{.*}}) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = stablehlo.custom_call @Sharding(%4#1) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1#1, %2, %3, %5 : tensor<4xf32>, tensor<4xi32>, tensor<2x2xf32>, tensor<5x3xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func @gather
func.func @gather(%t: tensor<10x6xf32>, %i: tensor<2x3x1xi32>) -> tensor<2x3x6xf32> {
  // CHECK: "stablehlo.gather"
  // CHECK-SAME: #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<10x6xf32>, tensor<2x3x1xi32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// CHECK-LABEL: func @selection
func.func @selection(%a: tensor<4x6xf32>, %u: tensor<2x6xf32>, %i: tensor<i32>) -> (tensor<4x6xf32>, tensor<4x2xi32>, tensor<4x6xi32>) {
  // CHECK: stablehlo.dynamic_update_slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x6xf32>, tensor<2x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<4x6xf32>, tensor<2x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  // CHECK: %{{.*}}:2 = stablehlo.optimization_barrier %{{.*}}, %{{.*}} : tensor<4x6xf32>, tensor<i32>
  %1:2 = stablehlo.optimization_barrier %0, %i : tensor<4x6xf32>, tensor<i32>
  // CHECK: chlo.erf_inv %{{.*}} : tensor<4x6xf32> -> tensor<4x6xf32>
  %2 = chlo.erf_inv %1#0 : tensor<4x6xf32> -> tensor<4x6xf32>
  // CHECK: "stablehlo.sort"(%{{.*}}) <{dimension = 1 : i64, is_stable = true}>
  %3 = "stablehlo.sort"(%2) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %lt = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  // CHECK: %{{.*}}, %{{.*}} = chlo.top_k(%{{.*}}, k = 2) : tensor<4x6xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %v, %k = chlo.top_k(%3, k = 2) : tensor<4x6xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  // CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4x6xf32>) -> tensor<4x6xi32>
  %4 = stablehlo.bitcast_convert %3 : (tensor<4x6xf32>) -> tensor<4x6xi32>
  return %3, %k, %4 : tensor<4x6xf32>, tensor<4x2xi32>, tensor<4x6xi32>
}
