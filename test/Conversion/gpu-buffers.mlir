// RUN: sbp-opt %s -split-input-file --sbp-gpu-buffers | FileCheck %s

// CHECK-LABEL: func.func @alloc_and_free
// CHECK:       %[[T0:.*]] = gpu.wait async
// CHECK:       %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%{{.*}}) : memref<?x4xf32>
// CHECK:       gpu.wait [%[[T1]]]
// CHECK:       %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK:       %[[T2:.*]] = gpu.wait async
// CHECK:       %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[BASE]] : memref<f32>
// CHECK:       gpu.wait [%[[T3]]]
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.dealloc

func.func @alloc_and_free(%n: index) {
  %a = memref.alloc(%n) : memref<?x4xf32>
  memref.dealloc %a : memref<?x4xf32>
  return
}

// -----

// A clone of a view is a dense device buffer filled by a copy.
// CHECK-LABEL: func.func @clone_strided
// CHECK:       %[[NEW:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<4x4xf32>
// CHECK:       memref.copy %arg0, %[[NEW]]
// CHECK:       %[[CAST:.*]] = memref.cast %[[NEW]] : memref<4x4xf32> to memref<4x4xf32, strided<[?, 1], offset: ?>>
// CHECK:       return %[[CAST]]

func.func @clone_strided(%src: memref<4x4xf32, strided<[?, 1], offset: ?>>) -> memref<4x4xf32, strided<[?, 1], offset: ?>> {
  %c = bufferization.clone %src : memref<4x4xf32, strided<[?, 1], offset: ?>> to memref<4x4xf32, strided<[?, 1], offset: ?>>
  return %c : memref<4x4xf32, strided<[?, 1], offset: ?>>
}

// -----

// Each buffer is freed unless it is the retained one or was freed before;
// the retained buffer is owned when a buffer with its address was.
// CHECK-LABEL: func.func @dealloc_retained
// CHECK-SAME:  (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[CA:.*]]: i1, %[[CB:.*]]: i1, %[[R:.*]]: memref<4xf32>)
// CHECK:       %[[RP:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:       %[[AP:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:       %[[AR:.*]] = arith.cmpi eq, %[[AP]], %[[RP]]
// CHECK:       %[[AOWN:.*]] = arith.andi %[[AR]], %[[CA]]
// CHECK:       %[[OWN1:.*]] = arith.ori %false, %[[AOWN]]
// CHECK:       %[[ANOT:.*]] = arith.xori %[[AR]], %true
// CHECK:       %[[AFREE:.*]] = arith.andi %[[CA]], %[[ANOT]]
// CHECK:       scf.if %[[AFREE]] {
// CHECK:         gpu.dealloc
// CHECK:       }
// CHECK:       %[[BP:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:       %[[BR:.*]] = arith.cmpi eq, %[[BP]], %[[RP]]
// CHECK:       %[[BOWN:.*]] = arith.andi %[[BR]], %[[CB]]
// CHECK:       %[[OWN:.*]] = arith.ori %[[OWN1]], %[[BOWN]]
// CHECK:       %[[BA:.*]] = arith.cmpi eq, %[[BP]], %[[AP]]
// CHECK:       arith.andi %[[BA]], %[[AFREE]]
// CHECK:       scf.if
// CHECK:         gpu.dealloc
// CHECK:       return %[[OWN]] : i1

func.func @dealloc_retained(%a: memref<4xf32>, %b: memref<4xf32>, %ca: i1, %cb: i1, %r: memref<4xf32>) -> i1 {
  %own = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%ca, %cb) retain (%r : memref<4xf32>)
  return %own : i1
}

// -----

// A bufferized constant lives in host memory: the kernels read a device
// copy of it, freed at the end of its block.
// CHECK-LABEL: func.func @reads_global
// CHECK:       %[[HOST:.*]] = memref.get_global @w : memref<4xf32>
// CHECK:       %[[DEV:.*]], %[[T1:.*]] = gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK:       gpu.wait [%[[T1]]]
// CHECK:       %[[T2:.*]] = gpu.wait async
// CHECK:       %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[DEV]], %[[HOST]] : memref<4xf32>, memref<4xf32>
// CHECK:       gpu.wait [%[[T3]]]
// CHECK:       linalg.add ins(%[[DEV]], %arg0 : memref<4xf32>, memref<4xf32>)
// CHECK:       memref.extract_strided_metadata %[[DEV]]
// CHECK:       gpu.dealloc
// CHECK-NEXT:  gpu.wait
// CHECK-NEXT:  return

memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @reads_global(%x: memref<4xf32>) {
  %w = memref.get_global @w : memref<4xf32>
  linalg.add ins(%w, %x : memref<4xf32>, memref<4xf32>) outs(%x : memref<4xf32>)
  return
}

// -----

// A tensor element read by host control flow comes through a device copy
// of the element and a host buffer at the top of the function, which
// every iteration of a loop reuses.
// CHECK-LABEL: func.func @host_read
// CHECK:       %[[HOST:.*]] = memref.alloca() : memref<1x1xf32>
// CHECK:       scf.while
// CHECK:         %[[ELEM:.*]] = memref.subview %arg0[%{{.*}}, %c2] [1, 1] [1, 1]
// CHECK:         %[[DEV:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<1x1xf32>
// CHECK:         memref.copy %[[ELEM]], %[[DEV]]
// CHECK:         %{{.*}} = gpu.memcpy async [%{{.*}}] %[[HOST]], %[[DEV]]
// CHECK:         gpu.dealloc
// CHECK:         %[[V:.*]] = memref.load %[[HOST]][%{{.*}}, %{{.*}}]
// CHECK:         arith.cmpf ogt, %[[V]]

func.func @host_read(%x: memref<4x4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = scf.while (%i = %c0) : (index) -> index {
    %v = memref.load %x[%i, %c2] : memref<4x4xf32>
    %go = arith.cmpf ogt, %v, %zero : f32
    scf.condition(%go) %i : index
  } do {
  ^bb0(%i: index):
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }
  return %n : index
}
