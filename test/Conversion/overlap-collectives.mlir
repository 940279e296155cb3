// RUN: sbp-opt %s -split-input-file --sbp-overlap-collectives | FileCheck %s

// The kernel on an unrelated buffer runs beside the all-reduce; the one
// that reads the result (through a view made before the collective)
// waits for it.
// CHECK-LABEL: func.func @overlap
// CHECK:       call @sbp_rt_cuda_collective_begin()
// CHECK-NEXT:  call @sbp_rt_all_reduce_f32
// CHECK-NEXT:  %[[H:.*]] = call @sbp_rt_cuda_collective_end() : () -> i64
// CHECK-NEXT:  gpu.launch
// CHECK:         memref.store %{{.*}}, %arg2
// CHECK:       call @sbp_rt_cuda_collective_wait(%[[H]]) : (i64) -> ()
// CHECK-NEXT:  gpu.launch
// CHECK:         memref.load %[[FLAT:.*]][
// CHECK:       func.func private @sbp_rt_cuda_collective_begin()
// CHECK:       func.func private @sbp_rt_cuda_collective_end() -> i64
// CHECK:       func.func private @sbp_rt_cuda_collective_wait(i64)
func.func private @sbp_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64)
func.func @overlap(%in: memref<4x8xf32>, %out: memref<4x8xf32>, %other: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %f = arith.constant 1.0 : f32
  %flat = memref.collapse_shape %out [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %a = memref.cast %in : memref<4x8xf32> to memref<*xf32>
  %b = memref.cast %out : memref<4x8xf32> to memref<*xf32>
  call @sbp_rt_all_reduce_f32(%a, %b, %zero, %one, %zero) : (memref<*xf32>, memref<*xf32>, i64, i64, i64) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %other[%tx] : memref<16xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %flat[%tx] : memref<32xf32>
    memref.store %v, %other[%tx] : memref<16xf32>
    gpu.terminator
  }
  return %f : f32
}

// -----

// Nothing touches the buffers again: the wait goes before the return.
// Freeing the input counts as touching it.
// CHECK-LABEL: func.func @until_free
// CHECK:       %[[H:.*]] = call @sbp_rt_cuda_collective_end()
// CHECK-NEXT:  arith.addi
// CHECK-NEXT:  call @sbp_rt_cuda_collective_wait(%[[H]])
// CHECK-NEXT:  memref.dealloc %arg0
// CHECK-LABEL: func.func @until_return
// CHECK:       %[[H:.*]] = call @sbp_rt_cuda_collective_end()
// CHECK-NEXT:  call @sbp_rt_cuda_collective_wait(%[[H]])
// CHECK-NEXT:  return
func.func private @sbp_rt_send_i64(memref<*xi64>, i64, i64, i64)
func.func @until_free(%in: memref<4xi64>, %n: index) -> index {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %a = memref.cast %in : memref<4xi64> to memref<*xi64>
  call @sbp_rt_send_i64(%a, %zero, %one, %one) : (memref<*xi64>, i64, i64, i64) -> ()
  %m = arith.addi %n, %n : index
  memref.dealloc %in : memref<4xi64>
  return %m : index
}
func.func @until_return(%in: memref<4xi64>) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %a = memref.cast %in : memref<4xi64> to memref<*xi64>
  call @sbp_rt_send_i64(%a, %zero, %one, %one) : (memref<*xi64>, i64, i64, i64) -> ()
  return
}
