// RUN: sbp-opt %s -split-input-file --sbp-tile-and-vectorize=vector-bits=256 | FileCheck %s
// RUN: sbp-opt %s -split-input-file --sbp-tile-and-vectorize=vector-bits=512 | FileCheck %s --check-prefix=AVX512
// RUN: %expect-exit 1 sbp-opt %s --sbp-tile-and-vectorize=vector-bits=100 2>&1 | FileCheck %s --check-prefix=BITS

// 256-bit vectors: B is packed into panels of 16 columns ([K][N] ->
// [N/16][K][16]), and register tiles of 4 rows x 2 vectors of 8 f32 keep
// their accumulators in registers through the reduction loop.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[B3:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [64, 32, 16]
// CHECK: linalg.transpose ins(%[[B3]] : tensor<64x32x16xf32>) outs(%{{.*}} : tensor<32x64x16xf32>) permutation = [1, 0, 2]
// CHECK: tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [128, 32, 16]
// CHECK: scf.for {{.*}} step %c4
// CHECK: vector.transfer_read {{.*}} : tensor<4x1x16xf32>, vector<4x1x16xf32>
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<4x1x16xf32>)
// CHECK: arith.mulf {{.*}} : vector<4x1x16x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<128x32x16xf32> into tensor<128x512xf32>
// CHECK-NOT: linalg.matmul
// AVX512-LABEL: func.func @matmul
// AVX512: scf.for {{.*}} -> ({{.*}}, vector<8x1x32xf32>)
// BITS: error: sbp-tile-and-vectorize: vector-bits must be 0, 128, 256 or 512, not 100
func.func @matmul(%a: tensor<128x64xf32>, %b: tensor<64x512xf32>, %c: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x512xf32>) outs(%c : tensor<128x512xf32>) -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
}

// -----

// f64 has half the lanes.
// CHECK-LABEL: func.func @matmul_f64
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<4x1x8xf64>)
func.func @matmul_f64(%a: tensor<8x8xf64>, %b: tensor<8x8xf64>, %c: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf64>, tensor<8x8xf64>) outs(%c : tensor<8x8xf64>) -> tensor<8x8xf64>
  return %0 : tensor<8x8xf64>
}

// -----

// Seven rows (a convolution's 7 x 7 positions make 49): the first four
// take a register tile of 4 rows on packed B, the last three one row at a
// time on B as it is, rather than plain loops.
// CHECK-LABEL: func.func @odd_rows
// CHECK: tensor.extract_slice %arg2[0, 0] [4, 16] [1, 1] : tensor<7x16xf32> to tensor<4x16xf32>
// CHECK: tensor.extract_slice %arg0[0, 0] [4, 8] [1, 1] : tensor<7x8xf32> to tensor<4x8xf32>
// CHECK: linalg.transpose
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<4x1x16xf32>)
// CHECK: %[[TOP:.*]] = tensor.insert_slice %{{.*}} into %arg2[0, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<7x16xf32>
// CHECK: tensor.extract_slice %[[TOP]][4, 0] [3, 16] [1, 1] : tensor<7x16xf32> to tensor<3x16xf32>
// CHECK: tensor.extract_slice %arg0[4, 0] [3, 8] [1, 1] : tensor<7x8xf32> to tensor<3x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<1x16xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[TOP]][4, 0] [3, 16] [1, 1] : tensor<3x16xf32> into tensor<7x16xf32>
// CHECK-NOT: linalg.matmul
func.func @odd_rows(%a: tensor<7x8xf32>, %b: tensor<8x16xf32>, %c: tensor<7x16xf32>) -> tensor<7x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<7x8xf32>, tensor<8x16xf32>) outs(%c : tensor<7x16xf32>) -> tensor<7x16xf32>
  return %0 : tensor<7x16xf32>
}

// -----

// Columns that are no multiple of a vector, and dynamic sizes, stay for
// the loops.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<5x7xf32>
// CHECK: linalg.matmul ins(%arg3, %arg4 : tensor<?x8xf32>
// CHECK-NOT: vector.
func.func @left_alone(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>, %c: tensor<5x3xf32>,
                      %d: tensor<?x8xf32>, %e: tensor<8x16xf32>, %f: tensor<?x16xf32>)
    -> (tensor<5x3xf32>, tensor<?x16xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%c : tensor<5x3xf32>) -> tensor<5x3xf32>
  %1 = linalg.matmul ins(%d, %e : tensor<?x8xf32>, tensor<8x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<?x16xf32>
}

// -----

// An element-wise consumer (bias and ReLU) joins the matmul's cache tiles:
// the matmul is fused into the consumer's tile loops, and the consumer's
// tile is vectorized there.
// CHECK-LABEL: func.func @bias_relu
// CHECK: scf.for {{.*}} step %c64
// CHECK: scf.for {{.*}} step %c512
// CHECK: scf.for {{.*}} step %c32
// CHECK: arith.mulf {{.*}} : vector<4x16x1xf32>
// CHECK: scf.for {{.*}} step %c1
// CHECK: scf.for {{.*}} step %c16
// CHECK: arith.addf {{.*}} : vector<1x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK-NOT: linalg.generic
func.func @bias_relu(%x: tensor<64x1024xf32>, %w: tensor<1024x1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %m = linalg.matmul ins(%x, %w : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%f : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<64x1024xf32>, tensor<1024xf32>) outs(%e : tensor<64x1024xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// A consumer reading a mask (the adjoint of a maximum selects by it) is not
// fused: memory holds an i1 a byte, but LLVM loads a vector of i1 as packed
// bits. The matmul is packed and scheduled alone, the consumer left as it is.
// CHECK-LABEL: func.func @masked_consumer
// CHECK: linalg.transpose
// CHECK: arith.mulf {{.*}} : vector<4x1x16x1xf32>
// CHECK: linalg.generic
// CHECK: arith.select {{.*}} : f32
func.func @masked_consumer(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %mask: tensor<64x64xi1>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mask, %y, %m : tensor<64x64xi1>, tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %o: f32):
    %s = arith.select %c, %zero, %a : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A batched product (attention's, batch x heads of small matrices) is a
// loop over the batch of matmuls on its slices, each scheduled as above.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: %[[C:.*]] = scf.for %[[I:.*]] = %c0 to %c6 step %c1 iter_args(%[[ACC:.*]] = %arg2)
// CHECK: %[[CI:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0] [1, 32, 32] [1, 1, 1] : tensor<6x32x32xf32> to tensor<32x32xf32>
// CHECK: tensor.extract_slice %arg0[%[[I]], 0, 0] [1, 32, 64] [1, 1, 1] : tensor<6x32x64xf32> to tensor<32x64xf32>
// CHECK: tensor.extract_slice %arg1[%[[I]], 0, 0] [1, 64, 32] [1, 1, 1] : tensor<6x64x32xf32> to tensor<64x32xf32>
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<4x1x16xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0, 0] [1, 32, 32] [1, 1, 1] : tensor<32x32xf32> into tensor<6x32x32xf32>
// CHECK: return %[[C]]
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: tensor<6x32x64xf32>, %b: tensor<6x64x32xf32>, %c: tensor<6x32x32xf32>) -> tensor<6x32x32xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<6x32x64xf32>, tensor<6x64x32xf32>) outs(%c : tensor<6x32x32xf32>) -> tensor<6x32x32xf32>
  return %0 : tensor<6x32x32xf32>
}

// -----

// A transpose that moves the innermost dimension runs in square blocks of
// one vector register's elements: read as rows, written as rows (the plain
// loops read with a stride of a whole row, one cache set for a
// power-of-two one).
// CHECK-LABEL: func.func @transpose
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64 step %c8
// CHECK: vector.transfer_read {{.*}} : tensor<8x8xf32>, vector<8x8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x8xf32>, tensor<8x8xf32>
// CHECK-NOT: linalg.transpose
// AVX512-LABEL: func.func @transpose
// AVX512: scf.for %{{.*}} = %c0 to %c32 step %c16
// AVX512: vector.transfer_read {{.*}} : tensor<16x16xf32>, vector<16x16xf32>
func.func @transpose(%a: tensor<64x32xf32>) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %t = linalg.transpose ins(%a : tensor<64x32xf32>) outs(%e : tensor<32x64xf32>) permutation = [1, 0]
  return %t : tensor<32x64xf32>
}

// -----

// Rows copied whole (the innermost dimension stays) and sizes no block
// divides are left to the loops.
// CHECK-LABEL: func.func @transpose_left_alone
// CHECK: linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK: linalg.transpose {{.*}} permutation = [1, 0]
// CHECK-NOT: vector.transfer_read
func.func @transpose_left_alone(%a: tensor<4x8x32xf32>, %b: tensor<12x20xf32>) -> (tensor<8x4x32xf32>, tensor<20x12xf32>) {
  %e = tensor.empty() : tensor<8x4x32xf32>
  %t = linalg.transpose ins(%a : tensor<4x8x32xf32>) outs(%e : tensor<8x4x32xf32>) permutation = [1, 0, 2]
  %f = tensor.empty() : tensor<20x12xf32>
  %u = linalg.transpose ins(%b : tensor<12x20xf32>) outs(%f : tensor<20x12xf32>) permutation = [1, 0]
  return %t, %u : tensor<8x4x32xf32>, tensor<20x12xf32>
}
