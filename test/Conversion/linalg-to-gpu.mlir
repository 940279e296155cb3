// RUN: sbp-opt %s -split-input-file --sbp-linalg-to-gpu=block-size=128 --canonicalize | FileCheck %s

// Identity maps everywhere: one flat index, no division.
// CHECK-LABEL: func.func @flat_chain
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:   %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:   %[[N:.*]] = arith.constant 1024 : index
// CHECK:       %[[A:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<8x128xf32> into memref<1024xf32>
// CHECK:       %[[B:.*]] = memref.collapse_shape %arg1
// CHECK:       %[[OUT:.*]] = memref.collapse_shape %arg2
// CHECK:       gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C8]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:         %[[BASE:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK:         %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]]
// CHECK:         scf.if %[[IN]] {
// CHECK:           %[[X:.*]] = memref.load %[[A]][%[[I]]]
// CHECK:           %[[Y:.*]] = memref.load %[[B]][%[[I]]]
// CHECK:           %[[S:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK:           %[[E:.*]] = math.exp %[[S]]
// CHECK:           memref.store %[[E]], %[[OUT]][%[[I]]]
// CHECK:         gpu.terminator
// CHECK-NOT:   linalg.generic

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @flat_chain(%a: memref<8x128xf32>, %b: memref<8x128xf32>, %out: memref<8x128xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<8x128xf32>, memref<8x128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// The innermost loop varies fastest across threads.
// CHECK-LABEL: func.func @broadcast
// CHECK:       gpu.launch
// CHECK:         %[[I:.*]] = arith.addi
// CHECK:         scf.if
// CHECK:           %[[J:.*]] = arith.remui %[[I]], %c128
// CHECK:           %[[R:.*]] = arith.divui %[[I]], %c128
// CHECK:           memref.load %arg0[%[[R]], %[[J]]]
// CHECK:           memref.load %arg1[%[[J]]]
// CHECK:           memref.store %{{.*}}, %arg2[%[[R]], %[[J]]]

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @broadcast(%a: memref<8x128xf32>, %bias: memref<128xf32>, %out: memref<8x128xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : memref<8x128xf32>, memref<128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// One thread per row; the reduction loop keeps the sum in a register.
// CHECK-LABEL: func.func @row_sum
// CHECK:       gpu.launch
// CHECK:         scf.if
// CHECK:           %[[INIT:.*]] = memref.load %arg1[%[[ROW:.*]]] : memref<8xf32>
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = %c0 to %c100 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[K]]]
// CHECK:             %[[NEXT:.*]] = arith.addf %[[X]], %[[ACC]]
// CHECK:             scf.yield %[[NEXT]]
// CHECK:           memref.store %[[SUM]], %arg1[%[[ROW]]]

func.func @row_sum(%a: memref<8x100xf32>, %out: memref<8xf32>) {
  linalg.reduce ins(%a : memref<8x100xf32>) outs(%out : memref<8xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Dynamic sizes: extents from the buffer on the host, no launch when empty.
// CHECK-LABEL: func.func @dynamic_fill
// CHECK:       %[[D:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[N:.*]] = arith.muli %[[D]], %c4
// CHECK:       %[[NONEMPTY:.*]] = arith.cmpi ugt, %[[N]], %c0
// CHECK:       scf.if %[[NONEMPTY]] {
// CHECK:         %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %c128
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]],
// CHECK:             memref.store %cst, %{{.*}}[%{{.*}}] : memref<?xf32>

func.func @dynamic_fill(%out: memref<?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<?x4xf32>)
  return
}

// -----

// Copies become kernels that read through the source's strides.
// CHECK-LABEL: func.func @strided_copy
// CHECK-NOT:   memref.copy
// CHECK:       gpu.launch
// CHECK:         memref.load %arg0[%{{.*}}, %{{.*}}] : memref<4x4xf32, strided<[8, 1]>>
// CHECK:         memref.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] : memref<4x4xf32>

func.func @strided_copy(%src: memref<4x4xf32, strided<[8, 1]>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

// linalg.index is the thread's loop coordinate.
// CHECK-LABEL: func.func @iota
// CHECK:       gpu.launch
// CHECK:         %[[J:.*]] = arith.remui %{{.*}}, %c5
// CHECK:         %[[V:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:         memref.store %[[V]], %arg0[%{{.*}}, %[[J]]]

#id = affine_map<(i, j) -> (i, j)>
func.func @iota(%out: memref<3x5xi64>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%out : memref<3x5xi64>) {
  ^bb0(%o: i64):
    %j = linalg.index 1 : index
    %v = arith.index_cast %j : index to i64
    linalg.yield %v : i64
  }
  return
}

// -----

// A fill right before the op that accumulates into the filled buffer is
// the accumulators' start value: one kernel, no fill.
// CHECK-LABEL: func.func @filled_max
// CHECK-NOT:   linalg.fill
// CHECK:       gpu.launch
// CHECK:         %[[MAX:.*]] = scf.for %{{.*}} = %c0 to %c100 step %c1 iter_args(%{{.*}} = %cst)
// CHECK:         memref.store %[[MAX]], %arg1
// CHECK-NOT:   gpu.launch
func.func @filled_max(%a: memref<8x100xf32>, %out: memref<8xf32>) {
  %lowest = arith.constant -3.40282347e+38 : f32
  linalg.fill ins(%lowest : f32) outs(%out : memref<8xf32>)
  linalg.reduce ins(%a : memref<8x100xf32>) outs(%out : memref<8xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  return
}

// -----

// A fill whose buffer the op also reads stays a kernel of its own.
// CHECK-LABEL: func.func @fill_read_as_input
// CHECK-COUNT-2: gpu.launch
func.func @fill_read_as_input(%out: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%out : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%out : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %d = arith.addf %x, %x : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A scattered gradient (a convolution's image, read at h + kh) is written
// from several points of the reduction loops: a thread per point of every
// loop adds its term atomically, after the fill, which stays a kernel.
// CHECK-LABEL: func.func @scatter
// CHECK:       gpu.launch
// CHECK:         memref.store %cst, %arg2[
// CHECK:       gpu.launch
// CHECK:         %[[KH:.*]] = arith.remui %{{.*}}, %c3
// CHECK:         %[[H:.*]] = arith.divui %{{.*}}, %c3
// CHECK:         %[[DY:.*]] = memref.load %arg0[%[[H]]]
// CHECK:         %[[W:.*]] = memref.load %arg1[%[[KH]]]
// CHECK:         %[[TERM:.*]] = arith.mulf %[[DY]], %[[W]]
// CHECK:         %[[AT:.*]] = arith.addi %[[H]], %[[KH]]
// CHECK:         memref.atomic_rmw addf %[[TERM]], %arg2[%[[AT]]]

#dy = affine_map<(h, kh) -> (h)>
#k = affine_map<(h, kh) -> (kh)>
#image = affine_map<(h, kh) -> (h + kh)>
func.func @scatter(%dy: memref<6xf32>, %w: memref<3xf32>, %dx: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<8xf32>)
  linalg.generic {indexing_maps = [#dy, #k, #image], iterator_types = ["reduction", "reduction"]} ins(%dy, %w : memref<6xf32>, memref<3xf32>) outs(%dx : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A fused chain whose element-wise outputs span the reduction loop beside
// a column sum: each point owns its element-wise outputs (loaded, stored)
// and adds into the sum atomically.
// CHECK-LABEL: func.func @owned_and_summed
// CHECK:       gpu.launch
// CHECK:         %[[J:.*]] = arith.remui %{{.*}}, %c4
// CHECK:         %[[I:.*]] = arith.divui %{{.*}}, %c4
// CHECK-DAG:     %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-DAG:     %[[OLD:.*]] = memref.load %arg1[%[[I]], %[[J]]]
// CHECK:         %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]]
// CHECK:         memref.store %[[NEW]], %arg1[%[[I]], %[[J]]]
// CHECK:         memref.atomic_rmw addf %[[NEW]], %arg2[%[[J]]]

#ij = affine_map<(i, j) -> (i, j)>
#j = affine_map<(i, j) -> (j)>
func.func @owned_and_summed(%x: memref<6x4xf32>, %acc: memref<6x4xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [#ij, #ij, #j], iterator_types = ["reduction", "parallel"]} ins(%x : memref<6x4xf32>) outs(%acc, %sum : memref<6x4xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %o: f32, %s: f32):
    %n = arith.addf %o, %a : f32
    %t = arith.addf %s, %n : f32
    linalg.yield %n, %t : f32, f32
  }
  return
}
