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
// CHECK: func.func private @two_nests_nest0(%{{.*}}: memref<4xf32>, %{{.*}}: f32, %{{.*}}: memref<4xf32>) attributes {llvm.bareptr, passthrough = ["noinline"]}
// CHECK: arith.constant 4 : index
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: func.func private @two_nests_nest1(%{{.*}}: memref<4xf32>) attributes {llvm.bareptr, passthrough = ["noinline"]}
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

// -----

// A nest given a memref whose size or offset is known only at run time
// takes descriptors; one of static shape and layout takes bare pointers.
// CHECK-LABEL: func.func @dynamic_view(
// CHECK: call @dynamic_view_nest0(%{{.*}}) : (memref<4xf32, strided<[1], offset: ?>>) -> ()
// CHECK: call @dynamic_view_nest1(%{{.*}}) : (memref<?xf32>) -> ()
// CHECK: call @dynamic_view_nest2(%{{.*}}) : (memref<4xf32, strided<[2], offset: 1>>) -> ()
// CHECK: func.func private @dynamic_view_nest0(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: func.func private @dynamic_view_nest1(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: func.func private @dynamic_view_nest2(
// CHECK-SAME: attributes {llvm.bareptr, passthrough = ["noinline"]}
func.func @dynamic_view(%a: memref<16xf32>, %o: index, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.subview %a[%o] [4] [1]
      : memref<16xf32> to memref<4xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %v[%i] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %x, %v[%i] : memref<4xf32, strided<[1], offset: ?>>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
  }
  %w = memref.subview %a[1] [4] [2]
      : memref<16xf32> to memref<4xf32, strided<[2], offset: 1>>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %w[%i] : memref<4xf32, strided<[2], offset: 1>>
    memref.store %x, %w[%i] : memref<4xf32, strided<[2], offset: 1>>
  }
  return
}

// -----

// Before `convert-linalg-to-loops`, a linalg op on buffers is a nest of its
// own (equal ones share a function); one on tensors, and a loop that yields
// values, stay where they are.
// CHECK-LABEL: func.func @linalg_on_buffers(
// CHECK-SAME: %[[A:[^:]*]]: memref<8xf32>, %[[B:[^:]*]]: memref<8xf32>, %[[T:[^:]*]]: tensor<8xf32>
// CHECK: call @linalg_on_buffers_nest0(%[[A]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @linalg_on_buffers_nest0(%[[B]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @linalg_on_buffers_nest1(%[[A]], %[[B]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : tensor<8xf32>)
// CHECK-NEXT: scf.for {{.*}} iter_args
// CHECK: func.func private @linalg_on_buffers_nest0(%{{.*}}: memref<8xf32>) attributes {llvm.bareptr, passthrough = ["noinline"]}
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: linalg.fill
// CHECK: func.func private @linalg_on_buffers_nest1(
// CHECK: linalg.generic
// CHECK-NOT: func.func
func.func @linalg_on_buffers(%a: memref<8xf32>, %b: memref<8xf32>,
                             %t: tensor<8xf32>) -> (tensor<8xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>,
                                   affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %f = linalg.fill ins(%zero : f32) outs(%t : tensor<8xf32>) -> tensor<8xf32>
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %b[%i] : memref<8xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  return %f, %sum : tensor<8xf32>, f32
}
