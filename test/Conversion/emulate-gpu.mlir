// RUN: sbp-opt %s --sbp-emulate-gpu | FileCheck %s

// Blocks and threads become host loops (z, y, x of the grid, then of the
// block), the body runs with their indices, and buffers are host memory.
// CHECK-LABEL: func.func @launch
// CHECK-NOT:   gpu.
// CHECK:       %[[TMP:.*]] = memref.alloc() : memref<100xf32>
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:           scf.for %[[BX:.*]] = %c0 to %c4 step
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for %[[TX:.*]] = %c0 to %c32 step
// CHECK:                   %[[BASE:.*]] = arith.muli %[[BX]], %c32
// CHECK:                   %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:                   memref.store %{{.*}}, %arg0[%[[I]]]
// CHECK:       memref.dealloc %[[TMP]]
// CHECK-NOT:   gpu.
func.func @launch(%buf: memref<100xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c100 = arith.constant 100 : index
  %zero = arith.constant 0.0 : f32
  %t0 = gpu.wait async
  %tmp, %t1 = gpu.alloc async [%t0] () : memref<100xf32>
  gpu.wait [%t1]
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %c100 : index
    scf.if %in {
      memref.store %zero, %buf[%i] : memref<100xf32>
    }
    gpu.terminator
  }
  %t2 = gpu.wait async
  %t3 = gpu.dealloc async [%t2] %tmp : memref<100xf32>
  gpu.wait [%t3]
  return
}

// A copy between buffers is a host copy.
// CHECK-LABEL: func.func @memcpy
// CHECK-NOT:   gpu.
// CHECK:       memref.copy %arg1, %arg0 : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:  return
func.func @memcpy(%dst: memref<4xf32>, %src: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %dst, %src : memref<4xf32>, memref<4xf32>
  gpu.wait [%t1]
  return
}
