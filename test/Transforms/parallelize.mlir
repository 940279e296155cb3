// End-to-end layouts: sbp-propagate, sbp-insert-boxing and sbp-partition.
// RUN: sbp-opt %s -split-input-file --sbp-parallelize | FileCheck %s

// Data parallel: the batch is split, weights replicated; nothing is
// communicated.
// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: tensor<8x64xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}
// CHECK-SAME: tensor<64x128xf32> {sbp.sharding = #sbp.nd<@m, [B]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
// CHECK-NOT: sbp.
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x128xf32>, tensor<128x16xf32>)
// CHECK-NOT: sbp.
// CHECK: return
sbp.mesh @m shape = [4]
func.func @data_parallel(%x: tensor<32x64xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>},
                         %w1: tensor<64x128xf32>, %w2: tensor<128x16xf32>)
    -> (tensor<32x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x128xf32>) outs(%f1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %zeros = arith.constant dense<0.0> : tensor<32x128xf32>
  %r = arith.maximumf %h, %zeros : tensor<32x128xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<32x128xf32>, tensor<128x16xf32>) outs(%f2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

// Megatron: W1 split by columns, W2 by rows; one all-reduce, nothing gathered.
// CHECK-LABEL: func.func @megatron
// CHECK-SAME: tensor<16x8xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}
// CHECK-SAME: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}
// CHECK-NOT: sbp.all_gather
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x8xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = sbp.all_reduce %{{.*}} on @m axes = [0] reduction = sum : tensor<8x16xf32>
// CHECK-NEXT: return %[[R]]
sbp.mesh @m shape = [4]
func.func @megatron(%x: tensor<8x16xf32>,
                    %w1: tensor<16x32xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                    %w2: tensor<32x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = math.tanh %h : tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A partial result wanted split by rows is reduce-scattered, not reduced and
// sliced or gathered.
// CHECK-LABEL: func.func @row_split_output
// CHECK-NOT: sbp.all_
// CHECK: sbp.reduce_scatter %{{.*}} on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<8x32xf32> -> tensor<2x32xf32>
// CHECK-NOT: sbp.all_
sbp.mesh @m shape = [4]
func.func @row_split_output(%x: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                            %w: tensor<16x32xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x32xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// An attention block split over heads: projections by columns, the output
// projection by rows; the heads never meet until the one all-reduce.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: tensor<16x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}
// CHECK-SAME: tensor<4x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}
// CHECK-NOT: sbp.all_gather
// CHECK-NOT: sbp.all_to_all
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x8x8xf32>, tensor<1x8x4xf32>)
// CHECK: sbp.all_reduce %{{.*}} on @m axes = [0] reduction = sum : tensor<8x16xf32>
// CHECK-NOT: sbp.all_
// CHECK: return
sbp.mesh @m shape = [4]
#qk_q = affine_map<(h, i, j, d) -> (h, i, d)>
#qk_k = affine_map<(h, i, j, d) -> (h, j, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
func.func @attention(%x: tensor<8x16xf32>,
                     %wq: tensor<16x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                     %wk: tensor<16x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                     %wv: tensor<16x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                     %wo: tensor<16x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.4e38 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  // [seq, heads * dh] -> [seq, heads, dh] -> [heads, seq, dh]
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %et = tensor.empty() : tensor<4x8x4xf32>
  %qh = linalg.transpose ins(%q3 : tensor<8x4x4xf32>) outs(%et : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  %kh = linalg.transpose ins(%k3 : tensor<8x4x4xf32>) outs(%et : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  %vh = linalg.transpose ins(%v3 : tensor<8x4x4xf32>) outs(%et : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  // scores = q k^T
  %es = tensor.empty() : tensor<4x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qh, %kh : tensor<4x8x4xf32>, tensor<4x8x4xf32>) outs(%fs : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x8x8xf32>
  // softmax over j
  %em = tensor.empty() : tensor<4x8xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%em : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mx = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<4x8x8xf32>) outs(%fm : tensor<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%es : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<4x8x8xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%em : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<4x8x8xf32>) outs(%fz : tensor<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %pr = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%es : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %z: f32, %o: f32):
    %t = arith.divf %a, %z : f32
    linalg.yield %t : f32
  } -> tensor<4x8x8xf32>
  // out = p v
  %eo = tensor.empty() : tensor<4x8x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %o = linalg.batch_matmul ins(%pr, %vh : tensor<4x8x8xf32>, tensor<4x8x4xf32>) outs(%fo : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %eb = tensor.empty() : tensor<8x4x4xf32>
  %ob = linalg.transpose ins(%o : tensor<4x8x4xf32>) outs(%eb : tensor<8x4x4xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %ob [[0], [1, 2]] : tensor<8x4x4xf32> into tensor<8x16xf32>
  %y = linalg.matmul ins(%o2, %wo : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A 2x2 mesh: data parallel over axis 0, Megatron over axis 1; the one
// all-reduce runs over axis 1 only.
// CHECK-LABEL: func.func @mlp_2d
// CHECK-SAME: tensor<4x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0), B]>}
// CHECK-SAME: tensor<16x16xf32> {sbp.sharding = #sbp.nd<@m, [B, S(1)]>}
// CHECK-NOT: sbp.all_gather
// CHECK: sbp.all_reduce %{{.*}} on @m axes = [1] reduction = sum : tensor<4x16xf32>
// CHECK-NOT: sbp.all_
// CHECK: return
sbp.mesh @m shape = [2, 2]
func.func @mlp_2d(%x: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0), B]>},
                  %w1: tensor<16x32xf32> {sbp.sharding = #sbp.nd<@m, [B, S(1)]>},
                  %w2: tensor<32x16xf32> {sbp.sharding = #sbp.nd<@m, [B, S(0)]>})
    -> (tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0), B]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = math.tanh %h : tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A 4-layer loop is partitioned once: the carried value stays replicated and
// each iteration all-reduces once.
// CHECK-LABEL: func.func @layers
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<8x16xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x8xf32>)
// CHECK-NOT: sbp.
// CHECK: sbp.all_reduce
// CHECK-NEXT: scf.yield
// CHECK-NOT: sbp.
// CHECK: return
sbp.mesh @m shape = [4]
func.func @layers(%x: tensor<8x16xf32>,
                  %w1: tensor<16x32xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                  %w2: tensor<32x16xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %y = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<8x16xf32>) {
    %e1 = tensor.empty() : tensor<8x32xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %a = linalg.matmul ins(%h, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %r = math.tanh %a : tensor<8x32xf32>
    %e2 = tensor.empty() : tensor<8x16xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %o = linalg.matmul ins(%r, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    scf.yield %o : tensor<8x16xf32>
  }
  return %y : tensor<8x16xf32>
}

// -----

// A size-3 dimension split over 2 devices is uneven (2 + 1): its local size
// is dynamic, and gathering it back is still one all-gather.
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
// CHECK-SAME: -> (tensor<?x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}, tensor<3x4xf32> {sbp.sharding = #sbp.nd<@m, [B]>})
// CHECK: %[[E:.*]] = math.exp %[[X]] : tensor<?x4xf32>
// CHECK: sbp.all_gather %{{.*}} on @m axes = [0] gather_dim = 0 : tensor<?x4xf32> -> tensor<3x4xf32>
sbp.mesh @m shape = [2]
func.func @uneven(%x: tensor<3x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<3x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}, tensor<3x4xf32>) {
  %0 = math.exp %x : tensor<3x4xf32>
  return %0, %0 : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A reduction split over devices starts from the bias on one device only:
// the others start from zero, so the all-reduce adds the bias once.
// CHECK-LABEL: func.func @bias_init
// CHECK: %[[BIAS:.*]] = linalg.generic
// CHECK: %[[K:.*]] = sbp.axis_index @m axis = 0 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : index
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: %[[INIT:.*]] = arith.select %[[FIRST]], %[[BIAS]], %[[ZEROS]] : tensor<8x32xf32>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x32xf32>) outs(%[[INIT]] : tensor<8x32xf32>)
// CHECK: sbp.all_reduce %[[Y]] on @m axes = [0] reduction = sum
sbp.mesh @m shape = [4]
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @bias_init(%x: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                     %w: tensor<16x32xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>},
                     %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// A max over a split dimension is partial by max, and reduced by max; the
// init of the reduction is a valid max partial everywhere.
// CHECK-LABEL: func.func @row_max
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: sbp.all_reduce %{{.*}} on @m axes = [0] reduction = max : tensor<8xf32>
sbp.mesh @m shape = [4]
func.func @row_max(%x: tensor<8x16xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) -> tensor<8xf32> {
  %ninf = arith.constant -3.4e38 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Slices keep their offsets and take split dimensions whole, at local size;
// a call runs with its callee's layouts, its operands and results boxed to
// and from them.
// CHECK-LABEL: func.func @slices
// CHECK-SAME: tensor<4x3x2xf32>
// CHECK: tensor.extract_slice %{{.*}}[1, 0, 0] [1, 2, 2] [1, 1, 1] : tensor<4x3x2xf32> to tensor<2x2xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[2, 1, 0] [1, 2, 2] [1, 1, 1] : tensor<2x2xf32> into tensor<4x3x2xf32>
// CHECK-LABEL: func.func @caller
// CHECK: %[[K:.*]] = sbp.axis_index @m axis = 0 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK: %[[PIECE:.*]] = tensor.extract_slice %{{.*}}[0, 0, %[[OFF]]] [4, 3, 2] [1, 1, 1] : tensor<4x3x8xf32> to tensor<4x3x2xf32>
// CHECK: %[[R:.*]] = call @slices(%[[PIECE]]) : (tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
// CHECK: sbp.all_gather %[[R]] on @m axes = [0] gather_dim = 2 : tensor<4x3x2xf32> -> tensor<4x3x8xf32>
sbp.mesh @m shape = [4]
func.func @slices(%x: tensor<4x3x8xf32> {sbp.sharding = #sbp.nd<@m, [S(2)]>})
    -> (tensor<4x3x8xf32> {sbp.sharding = #sbp.nd<@m, [S(2)]>}) {
  %0 = tensor.extract_slice %x[1, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<4x3x8xf32> to tensor<2x8xf32>
  %1 = math.exp %0 : tensor<2x8xf32>
  %2 = tensor.insert_slice %1 into %x[2, 1, 0] [1, 2, 8] [1, 1, 1] : tensor<2x8xf32> into tensor<4x3x8xf32>
  return %2 : tensor<4x3x8xf32>
}
func.func @caller(%x: tensor<4x3x8xf32>) -> tensor<4x3x8xf32> {
  %0 = func.call @slices(%x) : (tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  return %0 : tensor<4x3x8xf32>
}

// -----

// A payload reading its loops' indices (a causal mask) split by rows: each
// device adds its piece's offset to the split loop's index, not to the
// other's.
// CHECK-LABEL: func.func @causal_rows
// CHECK: %[[K:.*]] = sbp.axis_index @m axis = 0
// CHECK: %[[OFF:.*]] = arith.muli %[[K]], %c2
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[GI:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: arith.cmpi ule, %[[J]], %[[GI]] : index
sbp.mesh @m shape = [4]
func.func @causal_rows(%x: tensor<8x8xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x8xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %seen = arith.cmpi ule, %j, %i : index
    %v = arith.select %seen, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Split over both axes of a [2, 2] mesh into uneven pieces (6 rows: 3 a
// device of axis 0, then 2 and 1): the offset is the piece's start along
// axis 0 plus its start within that piece along axis 1.
// CHECK-LABEL: func.func @positions_2d
// CHECK-DAG: %[[K1:.*]] = sbp.axis_index @m2 axis = 1
// CHECK-DAG: %[[K0:.*]] = sbp.axis_index @m2 axis = 0
// CHECK: %[[START0:.*]] = arith.muli %[[K0]], %c3
// CHECK: %[[MIN:.*]] = arith.minui %[[K1]], %c1
// CHECK: %[[START1:.*]] = arith.addi %[[K1]], %[[MIN]]
// CHECK: %[[OFF:.*]] = arith.addi %[[START0]], %[[START1]]
// CHECK-NEXT: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: arith.addi %[[I]], %[[OFF]] : index
sbp.mesh @m2 shape = [2, 2]
func.func @positions_2d(%x: tensor<6x4xf32> {sbp.sharding = #sbp.nd<@m2, [S(0), S(0)]>})
    -> (tensor<6x4xf32> {sbp.sharding = #sbp.nd<@m2, [S(0), S(0)]>}) {
  %e = tensor.empty() : tensor<6x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x4xf32>) outs(%e : tensor<6x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %v = arith.addf %in, %fi : f32
    linalg.yield %v : f32
  } -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// An operand indexed by a constant along one dimension (a column of
// indices, as ONNX GatherND imports) beside the split loop's own.
// CHECK-LABEL: func.func @constant_dimension
// CHECK: %[[K:.*]] = sbp.axis_index @m axis = 0
// CHECK: %[[OFF:.*]] = arith.muli %[[K]], %c2
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: arith.addi %[[I]], %[[OFF]] : index
sbp.mesh @m shape = [4]
func.func @constant_dimension(%x: tensor<8x1xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x1xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %v = arith.addf %in, %fi : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
