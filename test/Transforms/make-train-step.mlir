// RUN: sbp-opt %s --sbp-make-train-step="optimizer=sgd lr=0.5" -split-input-file | FileCheck %s
// RUN: sbp-opt %s --sbp-make-train-step -split-input-file | FileCheck %s --check-prefix=ADAMW

// The gradient of a matmul's weight is a contraction over the batch (a
// reduction loop the search can split: P(sum), then the boxing to the
// weight's layout); the parameters come first, the batch and the added
// mse target after; SGD updates in one element-wise op.
// CHECK-LABEL: func.func @mlp_train_step(
// CHECK-SAME: %[[W:.*]]: tensor<16x4xf32> {sbp.name = "arg1"}, %[[X:.*]]: tensor<8x16xf32> {sbp.name = "arg0"}, %[[T:.*]]: tensor<8x4xf32> {sbp.name = "target"})
// CHECK-SAME: -> (tensor<16x4xf32>, tensor<f32>)
// CHECK-SAME: sbp.train_step = {lr = 5.000000e-01 : f64, optimizer = "sgd", params = 1 : i64, state = 0 : i64, weight_decay = 0.000000e+00 : f64}
// CHECK: %[[LR:.*]] = arith.constant 5.000000e-01
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]]
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: %[[DY:.*]] = linalg.generic
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[X]], %[[DY]] : tensor<8x16xf32>, tensor<8x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[DW]]
// CHECK: arith.mulf %{{.*}}, %[[LR]]
// CHECK: return %[[NEW]], %[[LOSS]]

// ADAMW-LABEL: func.func @mlp_train_step(
// ADAMW-SAME: {sbp.name = "arg1.m"}
// ADAMW-SAME: {sbp.name = "arg1.v"}
// ADAMW-SAME: tensor<f32> {sbp.name = "step"}
// ADAMW-SAME: sbp.train_step = {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, optimizer = "adamw", params = 1 : i64, state = 3 : i64, weight_decay = 1.000000e-02 : f64}
// ADAMW: math.powf
// ADAMW: %{{.*}}:3 = linalg.generic
// ADAMW: math.sqrt
// ADAMW: } -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>)
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Integer tokens make the loss a cross-entropy against integer labels;
// the embedding's gradient is the matrix product of the tokens' one-hot
// [2, 3, 5] with the lookup's adjoint, summed over the tokens. The row
// maximum that the loss subtracts is a constant to differentiation, so
// nothing compares elements with it (a max's backward counts its ties).
// CHECK-LABEL: func.func @lm_train_step(
// CHECK-SAME: %{{.*}}: tensor<2x3xi64> {sbp.name = "labels"})
// CHECK-NOT: arith.cmpf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} attrs = {sbp.stop_gradient}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: arith.cmpf
// CHECK: math.exp
// CHECK: math.log
// CHECK-NOT: arith.cmpf
// CHECK: %[[ONEHOT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK: linalg.index 2
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[ONEHOT]], %{{.*}} : tensor<2x3x5xf32>, tensor<2x3x4xf32>) outs(%{{.*}} : tensor<5x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NOT: arith.cmpf
#tok = affine_map<(b, s, d) -> (b, s)>
#out = affine_map<(b, s, d) -> (b, s, d)>
func.func @lm(%ids: tensor<2x3xi64>, %table: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [#tok, #out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  return %g : tensor<2x3x4xf32>
}

// -----

// A gather whose ids are wrapped from the end where negative (as ONNX
// Gather imports) takes the same one-hot product, its one-hot computing
// the same wrapped row.
// CHECK-LABEL: func.func @wrapped_train_step(
// CHECK: %[[ONEHOT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK: %[[CAST:.*]] = arith.index_cast
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[CAST]]
// CHECK: %[[UP:.*]] = arith.addi %[[CAST]]
// CHECK: %[[ROW:.*]] = arith.select %[[NEG]], %[[UP]], %[[CAST]] : index
// CHECK: %[[V:.*]] = linalg.index 2
// CHECK: arith.cmpi eq, %[[ROW]], %[[V]]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[ONEHOT]], %{{.*}} : tensor<2x3x5xf32>, tensor<2x3x4xf32>) outs(%{{.*}} : tensor<5x4xf32>)
func.func @wrapped(%ids: tensor<2x3xi64>, %table: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, s, d) -> (b, s)>, affine_map<(b, s, d) -> (b, s, d)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %i = arith.index_cast %id : i64 to index
    %neg = arith.cmpi slt, %i, %c0 : index
    %up = arith.addi %i, %c5 : index
    %row = arith.select %neg, %up, %i : index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  return %g : tensor<2x3x4xf32>
}

// -----

// A loop over layers saves the value each iteration starts from and runs
// backwards, recomputing each iteration's body from it.
// CHECK-LABEL: func.func @layers_train_step(
// CHECK: %[[SAVED:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<4x8xf32>, tensor<2x4x8xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[SAVED]]#1[%{{.*}}, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> to tensor<4x8xf32>
// CHECK: linalg.matmul
// CHECK: math.tanh
// CHECK: scf.yield
func.func @layers(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %y = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = math.tanh %y : tensor<4x8xf32>
    scf.yield %t : tensor<4x8xf32>
  }
  %s = tensor.extract_slice %r[0, 0] [1, 1] [1, 1] : tensor<4x8xf32> to tensor<1xf32>
  return %s : tensor<1xf32>
}

// -----

// A loop whose trip count is an input: its condition region is peeled and
// it counts its trips; the backward loop runs that many times, recomputing
// from the peeled values the start of each iteration it differentiates.
// CHECK-LABEL: func.func @while_train_step(
// CHECK: %[[GO:.*]] = arith.cmpi sgt
// CHECK: %[[LOOP:.*]]:3 = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[X:.*]], %{{.*}} = %[[GO]], %{{.*}} = %c0) : (i32, tensor<4x8xf32>, i1, index) -> (i32, tensor<4x8xf32>, index)
// CHECK: linalg.matmul
// CHECK: math.tanh
// CHECK: arith.cmpi slt
// CHECK: scf.for %{{.*}} = %c0 to %[[LOOP]]#2 step %c1 iter_args(
// CHECK: %[[LAST:.*]] = arith.subi %[[LOOP]]#2, %c1
// CHECK: %[[K:.*]] = arith.subi %[[LAST]], %{{.*}} : index
// CHECK: %[[START:.*]]:2 = scf.for %{{.*}} = %c0 to %[[K]] step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[X]])
// CHECK: linalg.matmul ins(%[[START]]#1,
func.func @while(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %n: tensor<i32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %limit = tensor.extract %n[] : tensor<i32>
  %r:2 = scf.while (%i = %c0, %h = %x) : (i32, tensor<4x8xf32>) -> (i32, tensor<4x8xf32>) {
    %go = arith.cmpi slt, %i, %limit : i32
    scf.condition(%go) %i, %h : i32, tensor<4x8xf32>
  } do {
  ^bb0(%i: i32, %h: tensor<4x8xf32>):
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %y = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = math.tanh %y : tensor<4x8xf32>
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %t : i32, tensor<4x8xf32>
  }
  %s = tensor.extract_slice %r#1[0, 0] [1, 1] [1, 1] : tensor<4x8xf32> to tensor<1xf32>
  return %s : tensor<1xf32>
}

// -----

// Each iteration of the backward loop writes its layer's gradient into its
// own row of the stacked weights' gradient, which starts as zeros: the row
// is inserted as it is, not read back and added to.
// CHECK-LABEL: func.func @stacked_train_step(
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<2x8x8xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %[[ZERO]])
// CHECK-NOT: tensor.extract_slice %[[ACC]]
// CHECK: %[[ROW:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x8xf32>)
// CHECK-NOT: tensor.extract_slice %[[ACC]]
// CHECK: tensor.insert_slice %[[ROW]] into %[[ACC]][%{{.*}}, 0, 0] [1, 8, 8]
func.func @stacked(%x: tensor<4x8xf32>, %stack: tensor<2x8x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<4x8xf32>) {
    %w = tensor.extract_slice %stack[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<2x8x8xf32> to tensor<8x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %y = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = math.tanh %y : tensor<4x8xf32>
    scf.yield %t : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// A convolution reads its image at h + kh: the gradient of the second
// convolution's image (the first one's result) is scattered through that
// map, summed over the window and output loops (reductions), parallel
// along the batch and channel loops, which the map reads directly.
// CHECK-DAG: #[[IMAGE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>
// CHECK-LABEL: func.func @convs_train_step(
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[IMAGE]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2x6x6x3xf32>)
func.func @convs(%x: tensor<2x8x8x2xf32>, %k1: tensor<3x3x2x3xf32>, %k2: tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x6x6x3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x6x6x3xf32>) -> tensor<2x6x6x3xf32>
  %y1 = linalg.conv_2d_nhwc_hwcf ins(%x, %k1 : tensor<2x8x8x2xf32>, tensor<3x3x2x3xf32>) outs(%z1 : tensor<2x6x6x3xf32>) -> tensor<2x6x6x3xf32>
  %e2 = tensor.empty() : tensor<2x4x4x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %y2 = linalg.conv_2d_nhwc_hwcf ins(%y1, %k2 : tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>) outs(%z2 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %y2 : tensor<2x4x4x4xf32>
}

// -----

// Exported models put their weights first. Token ids set the batch size
// (2): the layer-norm scale [4], added along the rows, and the [4, 4]
// weight read transposed have a parallel dimension 0 of another size, so
// they are parameters, not a batch.
// CHECK-LABEL: func.func @exported_train_step(
// CHECK-SAME: {sbp.name = "arg0"}
// CHECK-SAME: {sbp.name = "arg1"}
// CHECK-SAME: {sbp.name = "arg3"}
// CHECK-SAME: {sbp.name = "arg2"}
// CHECK-SAME: params = 3 : i64
#tok = affine_map<(i, j) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @exported(%gamma: tensor<4xf32>, %w: tensor<4x4xf32>, %ids: tensor<2xi64>, %table: tensor<5x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %g = linalg.generic {indexing_maps = [#tok, #id2], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xi64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %c = linalg.index 1 : index
    %v = tensor.extract %table[%row, %c] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%g, %gamma : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %wt = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%h, %wt : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// linalg.softmax stays one op; its input's adjoint is y * (dy - sum(dy * y))
// over the normalized dimension: a row reduction, then one element-wise op.
// CHECK-LABEL: func.func @softmax_train_step(
// CHECK: %[[Y:.*]] = linalg.softmax dimension(1)
// CHECK: %[[DOT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[Y]] : tensor<8x4xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[Y]], %{{.*}}, %[[DOT]] : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[YS:.*]]: f32, %[[DY:.*]]: f32, %[[S:.*]]: f32,
// CHECK-NEXT:   %[[C:.*]] = arith.subf %[[DY]], %[[S]] : f32
// CHECK-NEXT:   %[[G:.*]] = arith.mulf %[[YS]], %[[C]] : f32
// CHECK-NEXT:   linalg.yield %[[G]] : f32
func.func @softmax(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.softmax dimension(1) ins(%m : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Calls are inlined, a callee's calls too, so the gradient rules see the
// callees' ops; the private callees nothing else calls go with the forward
// function.
// CHECK-LABEL: func.func @calls_train_step(
// CHECK: linalg.matmul
// CHECK-NEXT: math.tanh
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: math.tanh
// CHECK-NEXT: math.tanh
// CHECK-NOT: func.call
// CHECK-NOT: func.func private
func.func @calls(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %a = func.call @layer(%x, %w1) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %b = func.call @layer(%a, %w2) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %c = func.call @act(%b) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}
func.func private @layer(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %t = func.call @act(%m) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}
func.func private @act(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %t = math.tanh %x : tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}

// -----

// A product's partials take the product of the others: from one more
// reduction over the same loops, counting the zero partials and
// multiplying the rest, not by dividing the result (zero where one is).
// CHECK-LABEL: func.func @product_train_step(
// CHECK: %[[F:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16xf32>) outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[S:.*]] = arith.addf
// CHECK: %[[Z:.*]] = arith.cmpf oeq, %[[S]]
// CHECK: %[[N:.*]] = arith.select %[[Z]]
// CHECK: %[[C:.*]] = arith.addf %{{.*}}, %[[N]] : f32
// CHECK: %[[P:.*]] = arith.select %[[Z]]
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %[[P]] : f32
// CHECK: linalg.yield %[[C]], %[[M]] : f32, f32
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins({{.*}}%[[F]]#0, %[[F]]#1 : {{.*}}) outs(%{{.*}} : tensor<16xf32>)
// CHECK: arith.divf
func.func @product(%x: tensor<8x16xf32>, %w: tensor<16xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<8x16xf32>, tensor<16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.mulf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %p : tensor<8xf32>
}

// -----

// A masked accumulation (a StableHLO scatter's: the combiner applied where
// an update's index names the element) becomes the same sum of masked
// partials, so that the sum's rules apply: the update's adjoint is the
// result's where the index matches, zero elsewhere.
// CHECK-LABEL: func.func @scatter_train_step(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<5x3xf32>, tensor<5xi64>) outs(%{{.*}} : tensor<6x3xf32>)
// CHECK: %[[M:.*]] = arith.cmpi eq
// CHECK: %[[U:.*]] = arith.select %[[M]], %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[U]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<5xi64>, tensor<6x3xf32>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK: %[[B:.*]] = arith.cmpi eq
// CHECK: arith.select %[[B]], %{{.*}}, %{{.*}} : f32
func.func @scatter(%x: tensor<6x3xf32>, %g: tensor<5x3xf32>, %i: tensor<5xi64>) -> tensor<6x3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %i : tensor<5x3xf32>, tensor<5xi64>) outs(%x : tensor<6x3xf32>) {
  ^bb0(%u: f32, %k: i64, %o: f32):
    %row = linalg.index 0 : index
    %ki = arith.index_cast %k : i64 to index
    %m = arith.cmpi eq, %ki, %row : index
    %s = arith.addf %o, %u : f32
    %v = arith.select %m, %s, %o : f32
    linalg.yield %v : f32
  } -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}

// -----

// An overwrite (a StableHLO scatter that sets): the update written last to
// an element takes its adjoint, from one more reduction finding, per
// element, the last iteration that wrote it (-1 for none, where the init
// takes the adjoint).
// CHECK-LABEL: func.func @overwrite_train_step(
// CHECK: %[[NONE:.*]] = linalg.fill ins(%c-1_i64 : i64) outs(%{{.*}} : tensor<6x3xi64>)
// CHECK: %[[LAST:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<5xi64>) outs(%[[NONE]] : tensor<6x3xi64>)
// CHECK: %[[HIT:.*]] = arith.cmpi eq
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[POS:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[W:.*]] = arith.select %[[HIT]], %[[POS]], %{{.*}} : i64
// CHECK: linalg.yield %[[W]] : i64
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}}, %[[LAST]] : tensor<5xi64>, tensor<6x3xf32>, tensor<6x3xi64>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK: ^bb0(%{{.*}}: i64, %[[DY:.*]]: f32, %[[L:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[M:.*]] = arith.cmpi eq
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[P:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK: %[[IS:.*]] = arith.cmpi eq, %[[P]], %[[L]] : i64
// CHECK: %[[K:.*]] = arith.andi %[[M]], %[[IS]] : i1
// CHECK: arith.select %[[K]], %[[DY]], %{{.*}} : f32
func.func @overwrite(%g: tensor<5x3xf32>, %x: tensor<6x3xf32>, %i: tensor<5xi64>) -> tensor<6x3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %i : tensor<5x3xf32>, tensor<5xi64>) outs(%x : tensor<6x3xf32>) {
  ^bb0(%u: f32, %k: i64, %o: f32):
    %row = linalg.index 0 : index
    %ki = arith.index_cast %k : i64 to index
    %m = arith.cmpi eq, %ki, %row : index
    %v = arith.select %m, %u, %o : f32
    linalg.yield %v : f32
  } -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}

// -----

// A diagonal read (one loop for two dimensions) and a column read at a
// constant: the adjoint gets a loop of its own for the second dimension
// and adds only where that loop's index is the one read.
// CHECK-LABEL: func.func @diagonal_train_step(
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %{{.*}} : tensor<4x4xf32>, tensor<4x3xf32>, tensor<f32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[J]], %[[I]] : index
// CHECK: arith.select %[[SAME]], %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %{{.*}} : tensor<4x4xf32>, tensor<f32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK: %[[K:.*]] = linalg.index 1
// CHECK: %[[AT:.*]] = arith.cmpi eq, %[[K]], %[[C2]] : index
// CHECK: arith.select %[[AT]], %{{.*}}, %{{.*}} : f32
func.func @diagonal(%w: tensor<4x4xf32>, %v: tensor<4x3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i, i)>, affine_map<(i) -> (i, 2)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%w, %v : tensor<4x4xf32>, tensor<4x3xf32>) outs(%s : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = math.tanh %a : f32
    %p = arith.mulf %t, %c : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// No gradient flows through an op marked sbp.stop_gradient: the weight's
// gradient is the product's with the negation read as a constant, and the
// negation has no adjoint (which would be another arith.negf).
// CHECK-LABEL: func.func @detached_train_step(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32> {sbp.name = "arg0"}, %[[W:.*]]: tensor<4xf32> {sbp.name = "arg1"})
// CHECK: %[[S:.*]] = arith.negf %[[W]] {sbp.stop_gradient} : tensor<4xf32>
// CHECK-NOT: arith.negf
// CHECK: %[[G:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[X]], %[[S]], %{{.*}} : tensor<8x4xf32>, tensor<4xf32>, tensor<f32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NOT: arith.negf
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[G]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: arith.negf
// CHECK: return
func.func @detached(%x: tensor<8x4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = arith.negf %w {sbp.stop_gradient} : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %w, %s : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %c : f32
    %r = arith.addf %o, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// A loss over 16-bit floats accumulates in f32 and is returned in f32
// (a bf16 sum of many terms stops growing once each is below its last
// place); the gradient reaching the bf16 result is truncated back.
// CHECK-LABEL: func.func @half_train_step(
// CHECK-SAME: %[[W:.*]]: tensor<4x3xbf16> {sbp.name = "arg1"}, %[[X:.*]]: tensor<2x4xbf16> {sbp.name = "arg0"}, %[[T:.*]]: tensor<2x3xbf16> {sbp.name = "target"})
// CHECK-SAME: -> (tensor<4x3xbf16>, tensor<f32>)
// CHECK: %[[Y:.*]] = linalg.matmul
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[T]] : tensor<2x3xbf16>, tensor<2x3xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: arith.subf %[[AF]], %[[BF]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %{{.*}}, %[[LOSS]] : tensor<4x3xbf16>, tensor<f32>
func.func @half(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>) -> tensor<2x3xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x3xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xbf16>, tensor<4x3xbf16>) outs(%z : tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}

// -----

// The cross-entropy of f16 logits: maximum, sum of exponentials and the
// label's logit over f32 rows, each reading the logits widened.
// CHECK-LABEL: func.func @half_lm_train_step(
// CHECK-SAME: -> (tensor<5x4xf16>, tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xf16>) outs(%{{.*}} : tensor<2xf32>) attrs = {sbp.stop_gradient}
// CHECK-NEXT: ^bb0(%[[L:.*]]: f16, %[[M:.*]]: f32):
// CHECK-NEXT: %[[LF:.*]] = arith.extf %[[L]] : f16 to f32
// CHECK-NEXT: arith.maximumf %[[LF]], %[[M]] : f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: outs(%{{.*}} : tensor<f32>)
#tok = affine_map<(b, d) -> (b)>
#out = affine_map<(b, d) -> (b, d)>
func.func @half_lm(%ids: tensor<2xi64>, %table: tensor<5x4xf16>) -> tensor<2x4xf16> {
  %e = tensor.empty() : tensor<2x4xf16>
  %g = linalg.generic {indexing_maps = [#tok, #out], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xi64>) outs(%e : tensor<2x4xf16>) {
  ^bb0(%id: i64, %o: f16):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x4xf16>
    linalg.yield %v : f16
  } -> tensor<2x4xf16>
  return %g : tensor<2x4xf16>
}

// -----

// A weight read only through its copy in the compute type (mixed
// precision) is a parameter, though its rows match the batch's: the copy's
// reader, a matmul, reduces over them.
// CHECK-LABEL: func.func @cast_weight_train_step(
// CHECK-SAME: %{{.*}}: tensor<8x3xf32> {sbp.name = "arg1"}, %{{.*}}: tensor<8x8xbf16> {sbp.name = "arg0"}
#id = affine_map<(i, j) -> (i, j)>
func.func @cast_weight(%x: tensor<8x8xbf16>, %w: tensor<8x3xf32>) -> tensor<8x3xbf16> {
  %e = tensor.empty() : tensor<8x3xbf16>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<8x3xf32>) outs(%e : tensor<8x3xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x3xbf16>
  %zero = arith.constant 0.0 : bf16
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x3xbf16>) -> tensor<8x3xbf16>
  %y = linalg.matmul ins(%x, %wb : tensor<8x8xbf16>, tensor<8x3xbf16>) outs(%z : tensor<8x3xbf16>) -> tensor<8x3xbf16>
  return %y : tensor<8x3xbf16>
}
