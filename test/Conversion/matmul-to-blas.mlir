// RUN: sbp-opt %s -split-input-file --sbp-matmul-to-blas | FileCheck %s

// f32 and f64 matmuls call the runtime's GEMM into a fresh buffer; integer
// matmuls stay.
// CHECK-LABEL: func.func @matmuls
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[ACC:.*]] = arith.constant 1 : i64
// CHECK: call @sbp_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: call @sbp_rt_matmul_f64
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xi32>, tensor<4x4xi32>)
func.func @matmuls(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x16xf32>,
                   %d: tensor<4x4xf64>, %e: tensor<4x4xi32>)
    -> (tensor<?x16xf32>, tensor<4x4xf64>, tensor<4x4xi32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x16xf32>) outs(%c : tensor<?x16xf32>) -> tensor<?x16xf32>
  %1 = linalg.matmul ins(%d, %d : tensor<4x4xf64>, tensor<4x4xf64>) outs(%d : tensor<4x4xf64>) -> tensor<4x4xf64>
  %2 = linalg.matmul ins(%e, %e : tensor<4x4xi32>, tensor<4x4xi32>) outs(%e : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %0, %1, %2 : tensor<?x16xf32>, tensor<4x4xf64>, tensor<4x4xi32>
}

// -----

// A zero-filled accumulator is not read.
// CHECK-LABEL: func.func @zero_init
// CHECK: %[[OVERWRITE:.*]] = arith.constant 0 : i64
// CHECK: call @sbp_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[OVERWRITE]])
func.func @zero_init(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
