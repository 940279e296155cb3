// RUN: sbp-opt %s -split-input-file --sbp-print-signatures -o /dev/null | FileCheck %s

// Splitting m or n splits the operands that index it; splitting k makes the
// result partial; a contraction is also linear in each input.
// CHECK-LABEL: func @matmul
// CHECK-NEXT:  linalg.matmul
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (S(0), B, S(0)) -> (S(0))
// CHECK-NEXT:    (B, S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (S(1), S(0), P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(sum), B, P(sum)) -> (P(sum))
// CHECK-NEXT:    (B, P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  func.return
// CHECK-NEXT:    (*) -> ()
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>,
                  %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                     outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func @batch_matmul
// CHECK-NEXT:  linalg.batch_matmul
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), B, S(1)) -> (S(1))
// CHECK-NEXT:    (B, S(2), S(2)) -> (S(2))
// CHECK-NEXT:    (S(2), S(1), P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(sum), B, P(sum)) -> (P(sum))
// CHECK-NEXT:    (B, P(sum), P(sum)) -> (P(sum))
func.func @batch_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>,
                        %c: tensor<4x8x32xf32>) -> tensor<4x8x32xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>)
                           outs(%c : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// The kind of a partial result comes from the combiner.
// CHECK-LABEL: func @row_max
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), P(max)) -> (P(max))
// CHECK-NEXT:  func.return
#row_in = affine_map<(i, j) -> (i, j)>
#row_out = affine_map<(i, j) -> (i)>
func.func @row_max(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#row_in, #row_out],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A product reduction has no SBP partial kind: its reduction loop stays whole.
// CHECK-LABEL: func @row_product
// CHECK-NEXT:  linalg.reduce
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:  func.return
func.func @row_product(%x: tensor<8x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %out: f32) {
      %p = arith.mulf %in, %out : f32
      linalg.yield %p : f32
    }
  return %0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func @sum_reduce
// CHECK-NEXT:  linalg.reduce
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), P(sum)) -> (P(sum))
// CHECK-NEXT:    (S(1), S(0)) -> (S(0))
func.func @sum_reduce(%x: tensor<8x16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %0 = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<16xf32>
}

// -----

// Element-wise ops split any dimension; linear ones take partial operands.
// CHECK-LABEL: func @elementwise
// CHECK-NEXT:  arith.addf
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  arith.mulf
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum), B) -> (P(sum))
// CHECK-NEXT:    (B, P(sum)) -> (P(sum))
// CHECK-NEXT:  arith.maximumf
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (P(max), P(max)) -> (P(max))
// CHECK-NEXT:    (P(max), B) -> (P(max))
// CHECK-NEXT:    (B, P(max)) -> (P(max))
// CHECK-NEXT:  math.exp
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(0)) -> (S(0))
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:  arith.divsi
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:  arith.select
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (B, S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (B, S(1), S(1)) -> (S(1))
// CHECK-NEXT:  arith.addi
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:  arith.truncf
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(0)) -> (S(0))
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
// CHECK-NEXT:  arith.extf
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(0)) -> (S(0))
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
// CHECK-NEXT:  func.return
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>,
                       %i: tensor<4x8xi32>, %c: i1, %s: i32) {
  %0 = arith.addf %x, %y : tensor<4x8xf32>
  %1 = arith.mulf %x, %y : tensor<4x8xf32>
  %2 = arith.maximumf %x, %y : tensor<4x8xf32>
  %3 = math.exp %x : tensor<4x8xf32>
  %4 = arith.divsi %i, %i : tensor<4x8xi32>
  %5 = arith.select %c, %x, %y : tensor<4x8xf32>
  %6 = arith.addi %s, %s : i32
  %7 = arith.truncf %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %8 = arith.extf %7 : tensor<4x8xbf16> to tensor<4x8xf32>
  return
}

// -----

// A broadcasting bias add: the loop over the rows does not index the bias.
// CHECK-LABEL: func @bias_add
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (S(0), B, S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(0), S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum), P(sum), P(sum)) -> (P(sum))
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @bias_add(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #col, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A composed payload keeps partial sums where it is additive: a gradient
// widened and accumulated (`out + extf(g)`) takes both partial, and a sum
// scaled by a whole value (`(a + b) * c`) takes a and b partial, or c;
// `a * a` is not additive.
// CHECK-LABEL: func @composed
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B, B, B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0), S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1), S(1), S(1)) -> (S(1))
// CHECK-NEXT:    (P(sum), P(sum), B, P(sum)) -> (P(sum))
// CHECK-NEXT:    (B, B, P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(1), S(1)) -> (S(1))
// CHECK-NEXT:  func.return
#id = affine_map<(i, j) -> (i, j)>
func.func @composed(%g: tensor<4x8xbf16>, %acc: tensor<4x8xf32>,
                    %a: tensor<4x8xf32>, %c: tensor<4x8xf32>) {
  %0 = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xbf16>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    %s = arith.addf %out, %w : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %acc, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
      outs(%acc : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.mulf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// A convolution's spatial loops appear in compound expressions (oh + kh) and
// stay whole; batch, output channels and input channels split.
// CHECK-LABEL: func @conv
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (S(0), B, S(0)) -> (S(0))
// CHECK-NEXT:    (B, S(3), S(3)) -> (S(3))
// CHECK-NEXT:    (S(3), S(2), P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(sum), B, P(sum)) -> (P(sum))
// CHECK-NEXT:    (B, P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  func.return
func.func @conv(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x16xf32>,
                %o: tensor<2x6x6x16xf32>) -> tensor<2x6x6x16xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<2x8x8x4xf32>, tensor<3x3x4x16xf32>)
                                outs(%o : tensor<2x6x6x16xf32>) -> tensor<2x6x6x16xf32>
  return %0 : tensor<2x6x6x16xf32>
}

// -----

// Max pooling has a convolution's structure, but max is not linear: a
// partial input would not give a partial result, so there is none.
// CHECK-LABEL: func @max_pool
// CHECK-NEXT:  linalg.pooling_nhwc_max
// CHECK-NEXT:    (B, B, B) -> (B)
// CHECK-NEXT:    (S(0), B, S(0)) -> (S(0))
// CHECK-NEXT:    (S(3), B, S(3)) -> (S(3))
// CHECK-NEXT:  func.return
func.func @max_pool(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3xf32>,
                    %o: tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32> {
  %0 = linalg.pooling_nhwc_max ins(%x, %w : tensor<2x8x8x4xf32>, tensor<3x3xf32>)
                               outs(%o : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  return %0 : tensor<2x6x6x4xf32>
}

// -----

// Zero points are subtracted from the data: not linear, so no partial inputs.
// CHECK-LABEL: func @quantized_conv
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf_q
// CHECK-NEXT:    (B, B, B, B, B) -> (B)
// CHECK-NEXT:    (S(0), B, B, B, S(0)) -> (S(0))
// CHECK-NEXT:    (B, S(3), B, B, S(3)) -> (S(3))
// CHECK-NEXT:    (S(3), S(2), B, B, P(sum)) -> (P(sum))
// CHECK-NEXT:  func.return
func.func @quantized_conv(%x: tensor<2x8x8x4xi8>, %w: tensor<3x3x4x16xi8>,
                          %za: i32, %zb: i32, %o: tensor<2x6x6x16xi32>)
    -> tensor<2x6x6x16xi32> {
  %0 = linalg.conv_2d_nhwc_hwcf_q
      ins(%x, %w, %za, %zb : tensor<2x8x8x4xi8>, tensor<3x3x4x16xi8>, i32, i32)
      outs(%o : tensor<2x6x6x16xi32>) -> tensor<2x6x6x16xi32>
  return %0 : tensor<2x6x6x16xi32>
}

// -----

// A loop whose index the payload reads splits too (sbp-partition offsets
// the index).
// CHECK-LABEL: func @iota
// CHECK-NEXT:  linalg.generic
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(0)) -> (S(0))
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:  func.return
func.func @iota(%o: tensor<4x8xi64>) -> tensor<4x8xi64> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%o : tensor<4x8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

// A transpose keeps splits (moved) and partial sums.
// CHECK-LABEL: func @transpose
// CHECK-NEXT:  linalg.transpose
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(2), S(0)) -> (S(0))
// CHECK-NEXT:    (S(0), S(1)) -> (S(1))
// CHECK-NEXT:    (S(1), S(2)) -> (S(2))
// CHECK-NEXT:    (P(sum), P(sum)) -> (P(sum))
// CHECK-NEXT:  func.return
func.func @transpose(%x: tensor<2x3x4xf32>, %o: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %0 = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%o : tensor<4x2x3xf32>)
                        permutation = [2, 0, 1]
  return %0 : tensor<4x2x3xf32>
}

// -----

// A split of a merged dimension is a split of the outermost non-unit
// dimension of its group; partial values pass through reshapes.
// CHECK-LABEL: func @reshape
// CHECK-NEXT:  tensor.collapse_shape
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(1)) -> (S(0))
// CHECK-NEXT:    (S(2)) -> (S(1))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
// CHECK-NEXT:  tensor.expand_shape
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(0)) -> (S(0))
// CHECK-NEXT:    (S(1)) -> (S(2))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
func.func @reshape(%x: tensor<1x4x6xf32>) -> tensor<2x2x6xf32> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x6xf32> into tensor<4x6xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [2, 2, 6]
      : tensor<4x6xf32> into tensor<2x2x6xf32>
  return %1 : tensor<2x2x6xf32>
}

// -----

// CHECK-LABEL: func @concat
// CHECK-NEXT:  tensor.concat
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(2), S(2)) -> (S(2))
// CHECK-NEXT:    (P(sum), P(sum)) -> (P(sum))
func.func @concat(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>) -> tensor<2x8x4xf32> {
  %0 = tensor.concat dim(1) %x, %y : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Only dimensions the slice takes whole may be split; dropped unit
// dimensions shift the result's dimension numbers.
// CHECK-LABEL: func @slices
// CHECK-NEXT:  tensor.extract_slice
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(2)) -> (S(1))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK:       tensor.insert_slice
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(1), S(2)) -> (S(2))
// CHECK-NEXT:    (P(sum), P(sum)) -> (P(sum))
func.func @slices(%x: tensor<4x3x8xf32>) -> tensor<4x3x8xf32> {
  %0 = tensor.extract_slice %x[1, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<4x3x8xf32> to tensor<2x8xf32>
  %1 = tensor.insert_slice %0 into %x[2, 1, 0] [1, 2, 8] [1, 1, 1] : tensor<2x8xf32> into tensor<4x3x8xf32>
  return %1 : tensor<4x3x8xf32>
}

// -----

// A zero fill is a valid partial sum: the usual init of a split reduction.
// CHECK-LABEL: func @fills
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:    () -> (B)
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:    () -> (B)
// CHECK-NEXT:  tensor.empty
// CHECK-NEXT:    () -> (B)
// CHECK-NEXT:    () -> (S(0))
// CHECK-NEXT:    () -> (P(sum))
// CHECK-NEXT:    () -> (P(max))
// CHECK-NEXT:    () -> (P(min))
// CHECK-NEXT:  linalg.fill
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (B, S(0)) -> (S(0))
// CHECK-NEXT:    (B, P(sum)) -> (P(sum))
// CHECK-NEXT:    (B, P(max)) -> (P(max))
// CHECK-NEXT:    (B, P(min)) -> (P(min))
// CHECK-NEXT:  linalg.fill
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (B, S(0)) -> (S(0))
// CHECK-NEXT:    (B, P(max)) -> (P(max))
// CHECK-NEXT:    (B, P(min)) -> (P(min))
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:    () -> (B)
// CHECK-NEXT:    () -> (S(0))
// CHECK-NEXT:    () -> (P(sum))
// CHECK-NEXT:    () -> (P(max))
// CHECK-NEXT:    () -> (P(min))
func.func @fills() -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %1 = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %2 = arith.constant dense<0.0> : tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Ops without a rule are listed; sbp ops are constraints, not computations.
// CHECK-LABEL: func @no_rule
// CHECK-NEXT:  sbp.annotate: no SBP rule
// CHECK-NEXT:  func.call
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:  func.return
sbp.mesh @m shape = [2]
func.func private @callee(tensor<8xf32>) -> tensor<8xf32>
func.func @no_rule(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sbp.annotate %x #sbp.nd<@m, [S(0)]> : tensor<8xf32>
  %1 = func.call @callee(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// The dynamic size of an empty tensor is the global one: it is not split.
// CHECK-LABEL: func @dynamic_empty
// CHECK-NEXT:  tensor.empty
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (B) -> (S(1))
// CHECK-NEXT:    (B) -> (P(sum))
func.func @dynamic_empty(%n: index) -> tensor<?x4xf32> {
  %0 = tensor.empty(%n) : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A softmax's rows are independent: any dimension but the normalized one
// splits; it is linear in nothing, so no partial.
// CHECK-LABEL: func @softmax
// CHECK-NEXT:  linalg.softmax
// CHECK-NEXT:    (B, B) -> (B)
// CHECK-NEXT:    (S(0), S(0)) -> (S(0))
// CHECK-NEXT:    (S(2), S(2)) -> (S(2))
// CHECK-NEXT:  func.return
func.func @softmax(%x: tensor<2x8x16xf32>, %o: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = linalg.softmax dimension(1) ins(%x : tensor<2x8x16xf32>) outs(%o : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// A pad splits the dimensions it does not pad; one padding value on every
// device keeps a max or min partial, a zero one a sum too.
// CHECK-LABEL: func @pad
// CHECK:       tensor.pad
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
// CHECK-NEXT:    (P(sum)) -> (P(sum))
// CHECK:       tensor.pad
// CHECK-NEXT:    (B) -> (B)
// CHECK-NEXT:    (S(1)) -> (S(1))
// CHECK-NEXT:    (P(max)) -> (P(max))
// CHECK-NEXT:    (P(min)) -> (P(min))
// CHECK-NEXT:  func.return
func.func @pad(%x: tensor<4x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  %1 = tensor.pad %x low[2, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  return %0, %1 : tensor<6x8xf32>, tensor<6x8xf32>
}
