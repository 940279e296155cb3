// RUN: sbp-opt --split-input-file --sbp-import-stablehlo %s | FileCheck %s

// Element-wise ops are generics with the op's scalar form; logistic, which
// recent JAX no longer emits, is 1 / (1 + exp(-x)).
// CHECK-LABEL: func @elementwise
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.logistic %a : tensor<4xf32>
  %1 = stablehlo.compare LT, %0, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.select %1, %0, %b : tensor<4xi1>, tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A product with the lhs's free dimensions leading collapses into a
// linalg.matmul; batched products are linalg.batch_matmul; others are
// contractions by indexing maps.
// CHECK-LABEL: func @products
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape
// CHECK: linalg.batch_matmul
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @products(%a: tensor<2x4x8xf32>, %w: tensor<8x5xf32>, %b: tensor<2x8x5xf32>, %c: tensor<5x8xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<5x5xf32>) {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x8xf32>, tensor<8x5xf32>) -> tensor<2x4x5xf32>
  %1 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  %2 = stablehlo.dot_general %c, %c, contracting_dims = [1] x [1] : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x5xf32>
  return %0, %1, %2 : tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<5x5xf32>
}

// -----

// Reductions carry their combiner into the payload: a max over a loop is
// what SBP derivation knows as P(max).
// CHECK-LABEL: func @reduce
// CHECK: %[[INIT:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[INIT]] : f32)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
func.func @reduce(%a: tensor<4x6xf32>) -> tensor<4xf32> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Loops with a constant trip count are unrolled; a constant case index
// picks its branch.
// CHECK-LABEL: func @control_flow
// CHECK-NOT: stablehlo.
// CHECK: %[[X:.*]] = arith.mulf
// CHECK: %[[Y:.*]] = arith.mulf
// CHECK: %[[Z:.*]] = arith.mulf
// CHECK: math.cos
// CHECK-NOT: math.sin
func.func @control_flow(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %sq = stablehlo.multiply %x, %x : tensor<4xf32>
    stablehlo.return %next, %sq : tensor<i32>, tensor<4xf32>
  }
  %k = stablehlo.constant dense<1> : tensor<i32>
  %1 = "stablehlo.case"(%k) ({
    %s = stablehlo.sine %0#1 : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %s = stablehlo.cosine %0#1 : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A case on a run-time index (lax.cond, lax.switch) is nested branches:
// branch k where the index is k, the last one otherwise.
// CHECK-LABEL: func @switch
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<i32>)
// CHECK: %[[K:.*]] = tensor.extract %[[I]][] : tensor<i32>
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[K]], %c0_i32 : i32
// CHECK: %[[R:.*]] = scf.if %[[IS0]] -> (tensor<4xf32>) {
// CHECK: math.sin
// CHECK: } else {
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[K]], %c1_i32 : i32
// CHECK: scf.if %[[IS1]] -> (tensor<4xf32>) {
// CHECK: math.cos
// CHECK: } else {
// CHECK: math.tanh
// CHECK: return %[[R]]
func.func @switch(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %s = stablehlo.cosine %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    %s = stablehlo.tanh %a : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Calls to private functions are inlined.
// CHECK-LABEL: func public @main
// CHECK-NOT: call
// CHECK: math.tanh
// CHECK-NOT: func.func private
func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @_helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @_helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// GSPMD shardings become layouts on one mesh whose axes cut the device ids
// at every boundary the shardings use: [2,1,2] over 4 devices with the last
// tile dimension replicating splits dim 0 over the major axis of a 2x2 mesh,
// and the transposed iota [2,2]T(1,0) splits dim 1 over the minor one.
// CHECK: sbp.mesh @mesh shape = [2, 2]
// CHECK-LABEL: func public @main
// CHECK-SAME: sbp.sharding = #sbp.nd<@mesh, [S(0), B]>
// CHECK-SAME: sbp.sharding = #sbp.nd<@mesh, [B, S(1)]>
// CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh, [S(0), S(1)]>
// CHECK-NOT: mhlo.sharding
module attributes {mhlo.num_partitions = 4 : i32} {
  func.func public @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}, %w: tensor<4x6xf32> {mhlo.sharding = "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"}) -> tensor<8x6xf32> {
    %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    return %1 : tensor<8x6xf32>
  }
}

// -----

// An explicit device list and a 1-d mesh.
// CHECK: sbp.mesh @mesh shape = [2]
// CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh, [S(1)]>
func.func @one_axis(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[1,2]0,1}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Gather reads the captured table at clamped start indices; the index
// tensor is an input, so the gather splits with the batch.
// CHECK-LABEL: func @embedding
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<2x3x1xi32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: linalg.index 2
// CHECK: tensor.extract %{{.*}}[{{.*}}] : tensor<10x6xf32>
func.func @embedding(%t: tensor<10x6xf32>, %i: tensor<2x3x1xi32>) -> tensor<2x3x6xf32> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 6>}> : (tensor<10x6xf32>, tensor<2x3x1xi32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// Shardy, JAX's default partitioner: its mesh becomes an sbp.mesh of the
// same name and axes; an axis listed for a dimension splits it.
// CHECK: sbp.mesh @mesh shape = [2, 2] axes = ["x", "y"]
// CHECK-LABEL: func public @shardy
// CHECK-SAME: sbp.sharding = #sbp.nd<@mesh, [S(0), B]>
// CHECK-SAME: sbp.sharding = #sbp.nd<@mesh, [B, S(1)]>
// CHECK: sbp.annotate %{{.*}} #sbp.nd<@mesh, [S(1), S(1)]>
// CHECK-NOT: sdy.
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func public @shardy(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %w: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", ?}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x", "y"}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// A scatter reduces over the updates: an add, mul, max or min combiner
// takes the update masked by the index match (the identity elsewhere), a
// plain sum the search may split; an overwrite selects between the update
// and the element.
// CHECK-LABEL: func @scatter
// CHECK: %[[NONE:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[M:.*]] = arith.cmpi eq
// CHECK: %[[U:.*]] = arith.select %[[M]], %{{.*}}, %[[NONE]] : f32
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[U]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[M2:.*]] = arith.cmpi eq
// CHECK: %[[V:.*]] = arith.select %[[M2]], %{{.*}}, %[[OUT:.*]] : f32
// CHECK: linalg.yield %[[V]] : f32
func.func @scatter(%x: tensor<10x6xf32>, %i: tensor<7x1xi32>, %u: tensor<7x6xf32>) -> (tensor<10x6xf32>, tensor<10x6xf32>) {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<10x6xf32>, tensor<7x1xi32>, tensor<7x6xf32>) -> tensor<10x6xf32>
  %1 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<10x6xf32>, tensor<7x1xi32>, tensor<7x6xf32>) -> tensor<10x6xf32>
  return %0, %1 : tensor<10x6xf32>, tensor<10x6xf32>
}

// -----

// Start indices known only at run time are clamped into the operand and
// become the offsets of extract_slice and insert_slice.
// CHECK-LABEL: func @dynamic_indices
// CHECK-DAG: %[[LAST:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[K:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
// CHECK: %[[I:.*]] = arith.index_cast %[[K]] : i32 to index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[I]], %[[ZERO]] : index
// CHECK: %[[START:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK: tensor.extract_slice %{{.*}}[%[[START]], 1] [2, 3] [1, 1] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[START]], 0] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<4x6xf32>
func.func @dynamic_indices(%a: tensor<4x6xf32>, %u: tensor<2x6xf32>, %k: tensor<i32>) -> (tensor<2x3xf32>, tensor<4x6xf32>) {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %k, %c, sizes = [2, 3] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %1 = stablehlo.dynamic_update_slice %a, %u, %k, %c : (tensor<4x6xf32>, tensor<2x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x6xf32>
}

// -----

// A sort counts, per element, the elements of its row that sort before it
// (by the comparator, ties by position), then writes each element at that
// rank; top_k keeps the first k of a descending sort, and their positions.
// CHECK-LABEL: func @sort
// CHECK: %[[RANKS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A:.*]], %[[A]] : tensor<4x6xf32>, tensor<4x6xf32>) outs(%{{.*}} : tensor<4x6xi64>)
// CHECK: %[[BEFORE:.*]] = arith.cmpi slt
// CHECK: %[[AFTER:.*]] = arith.cmpi slt
// CHECK: %[[THEIRS:.*]] = linalg.index 2 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[THEIRS]], %{{.*}} : index
// CHECK: %[[TIE:.*]] = arith.andi %[[FIRST]]
// CHECK: arith.ori %[[BEFORE]], %[[TIE]] : i1
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[RANKS]], %[[A]] : tensor<4x6xi64>, tensor<4x6xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: %[[AT:.*]] = arith.cmpi eq
// CHECK: arith.select %[[AT]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[TOP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x6xi64>)
// CHECK: arith.cmpi sgt
// CHECK: linalg.generic {{.*}} ins(%[[TOP]] : tensor<4x6xi64>) outs(%{{.*}} : tensor<4x2xi32>)
// CHECK: %[[POS:.*]] = linalg.index 2 : index
// CHECK: arith.index_cast %[[POS]] : index to i32
func.func @sort(%a: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x2xi32>) {
  %0 = "stablehlo.sort"(%a) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %lt = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %v, %i = chlo.top_k(%a, k = 2) : tensor<4x6xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return %0, %i : tensor<4x6xf32>, tensor<4x2xi32>
}

// -----

// A select_and_scatter keeps, per window, the selected element and its
// position in the window (-1 until one is taken; the padding never is),
// then adds each source element where its window's position matches.
// CHECK-LABEL: func @select_and_scatter
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1] [5] [1] : tensor<5xf32> into tensor<6xf32>
// CHECK: %[[SEL:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[PADDED]], %{{.*}} : tensor<6xf32>, tensor<3xi1>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: %[[LOW:.*]] = arith.cmpi sge
// CHECK: %[[KEEP:.*]] = arith.cmpf oge
// CHECK: %[[NONE:.*]] = arith.cmpi eq, %{{.*}}, %c-1_i64 : i64
// CHECK: %[[MOVE:.*]] = arith.xori %[[KEEP]], %true : i1
// CHECK: %[[EITHER:.*]] = arith.ori %[[NONE]], %[[MOVE]] : i1
// CHECK: %[[TAKE:.*]] = arith.andi %{{.*}}, %[[EITHER]] : i1
// CHECK: arith.select %[[TAKE]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[SEL]]#1, %{{.*}}, %{{.*}} : tensor<2xi64>, tensor<2xf32>, tensor<3xi1>) outs(%{{.*}} : tensor<6xf32>)
// CHECK: arith.addf
// CHECK: tensor.extract_slice %[[SUM]][1] [5] [1] : tensor<6xf32> to tensor<5xf32>
func.func @select_and_scatter(%x: tensor<5xf32>, %g: tensor<2xf32>) -> tensor<5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %g, %z) <{padding = dense<[[1, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5xf32>, tensor<2xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// A loop whose trip count is known only at run time is an scf.while; its
// regions are converted like the rest.
// CHECK-LABEL: func @unbounded_loop
// CHECK: %[[R:.*]]:2 = scf.while (%[[I:.*]] = %{{.*}}, %[[X:.*]] = %{{.*}}) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
// CHECK: %[[LT:.*]] = linalg.generic
// CHECK: arith.cmpi slt
// CHECK: %[[GO:.*]] = tensor.extract %[[LT]][] : tensor<i1>
// CHECK: scf.condition(%[[GO]]) %[[I]], %[[X]] : tensor<i32>, tensor<4xf32>
// CHECK: } do {
// CHECK: arith.addi
// CHECK: math.tanh
// CHECK: scf.yield
// CHECK: return %[[R]]#1 : tensor<4xf32>
func.func @unbounded_loop(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<4xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %y = stablehlo.tanh %x : tensor<4xf32>
    stablehlo.return %next, %y : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
