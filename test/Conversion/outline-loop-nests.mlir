// RUN: sbp-opt %s -split-input-file --sbp-outline-loop-nests=min-loops=1 | FileCheck %s
// RUN: sbp-opt %s -split-input-file --sbp-outline-loop-nests | FileCheck %s --check-prefix=SMALL

// Each top-level nest moves into a noinline function; values from above
// become arguments, constants are cloned.
// CHECK-LABEL: func.func @two_nests(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>
// CHECK: %[[F:.*]] = arith.addf
// CHECK-NEXT: call @two_nests_nest0(%[[A]], %[[F]], %[[B]]) : (memref<4xf32>, f32, memref<4xf32>) -> ()
// CHECK-NEXT: call @two_nests_nest1(%[[B]]) : (memref<4xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @two_nests_nest0(%{{.*}}: memref<4xf32>, %{{.*}}: f32, %{{.*}}: memref<4xf32>) attributes {passthrough = ["noinline"]}
// CHECK: arith.constant 4 : index
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: func.func private @two_nests_nest1(%{{.*}}: memref<4xf32>) attributes {passthrough = ["noinline"]}
// CHECK: scf.for
// SMALL-LABEL: func.func @two_nests(
// SMALL-NOT: call
func.func @two_nests(%a: memref<4xf32>, %b: memref<4xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.addf %s, %s : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %f : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  return
}

// -----

// Nests that differ only in the buffers they read and write (a model's
// layers) share one function; a nest with another constant does not.
// CHECK-LABEL: func.func @repeated(
// CHECK-SAME: %[[A:[^:]*]]: memref<4xf32>, %[[B:[^:]*]]: memref<4xf32>, %[[C:[^:]*]]: memref<4xf32>)
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: call @repeated_nest0(%[[A]], %[[B]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: call @repeated_nest0(%[[B]], %[[C]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: call @repeated_nest1(%[[C]], %[[A]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @repeated_nest0(
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: func.func private @repeated_nest1(
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK-NOT: func.func
func.func @repeated(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %c[%i] : memref<4xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %a[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop left in the function (inside an scf.if) keeps it optimized.
// CHECK-LABEL: func.func @kept_loop(
// CHECK-NOT: optnone
// CHECK: call @kept_loop_nest0
// CHECK: call @kept_loop_nest1
// CHECK: scf.if
// CHECK: scf.for
func.func @kept_loop(%a: memref<4xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.subf %x, %x : f32
    memref.store %y, %a[%i] : memref<4xf32>
  }
  scf.if %p {
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %a[%i] : memref<4xf32>
    }
  }
  return
}
