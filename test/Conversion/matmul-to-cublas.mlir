// RUN: sbp-opt %s -split-input-file --sbp-matmul-to-cublas=tf32=1 | FileCheck %s

// CHECK-LABEL: func.func @zero_c
// A zero C is not read: the result buffer stands in for it.
// CHECK:       %[[OUT:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK:       %[[C:.*]] = memref.cast %[[OUT]]
// CHECK:       %[[O:.*]] = memref.cast %[[OUT]]
// CHECK:       %[[NO:.*]] = arith.constant 0 : i64
// CHECK:       %[[TF32:.*]] = arith.constant 1 : i64
// CHECK:       call @sbp_rt_cuda_matmul_f32_f32(%{{.*}}, %{{.*}}, %[[C]], %[[O]], %[[NO]], %[[TF32]])
// CHECK:       bufferization.to_tensor %[[OUT]]
// CHECK:       func.func private @sbp_rt_cuda_matmul_f32_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64)

func.func @zero_c(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @accumulate_bf16
// CHECK-NOT:   linalg.batch_matmul
// CHECK:       %[[YES:.*]] = arith.constant 1 : i64
// CHECK:       call @sbp_rt_cuda_matmul_bf16_f32({{.*}}, %[[YES]], %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()

func.func @accumulate_bf16(%a: tensor<2x8x16xbf16>, %b: tensor<2x16x4xbf16>, %c: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xbf16>, tensor<2x16x4xbf16>) outs(%c : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_f16
// CHECK:       %[[M:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x4xf16>
// CHECK:       memref.alloc(%[[M]]) : memref<?x4xf16>
// CHECK:       call @sbp_rt_cuda_matmul_f16_f16

func.func @dynamic_f16(%a: tensor<?x16xf16>, %b: tensor<16x4xf16>, %c: tensor<?x4xf16>) -> tensor<?x4xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<?x16xf16>, tensor<16x4xf16>) outs(%c : tensor<?x4xf16>) -> tensor<?x4xf16>
  return %r : tensor<?x4xf16>
}

// -----

// Integer matmuls are left to the generated kernels.
// CHECK-LABEL: func.func @integers_stay
// CHECK:       linalg.matmul
// CHECK-NOT:   call

func.func @integers_stay(%a: tensor<8x16xi32>, %b: tensor<16x4xi32>, %c: tensor<8x4xi32>) -> tensor<8x4xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x16xi32>, tensor<16x4xi32>) outs(%c : tensor<8x4xi32>) -> tensor<8x4xi32>
  return %r : tensor<8x4xi32>
}

// -----

// CHECK-LABEL: func.func @transposed_stays
// CHECK:       linalg.matmul indexing_maps
// CHECK-NOT:   call

func.func @transposed_stays(%a: tensor<16x8xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x8xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
