// RUN: sbp-opt %s -split-input-file --sbp-lower-collectives | FileCheck %s

// Every collective becomes a call of the runtime on unranked buffers: the
// operand read-only, the result a fresh allocation turned back into a
// tensor. Entry points are named by element type.
// CHECK-LABEL: func.func @collectives
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[INU:.*]] = memref.cast %[[IN]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[OUTU:.*]] = memref.cast %[[OUT]] : memref<4x8xf32> to memref<*xf32>
// CHECK: call @sbp_rt_all_reduce_f32(%[[INU]], %[[OUTU]], %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK: call @sbp_rt_all_gather_f32
// CHECK: call @sbp_rt_reduce_scatter_f32
// CHECK: call @sbp_rt_all_to_all_f32
// CHECK: call @sbp_rt_broadcast_f32
// CHECK: call @sbp_rt_send_i64
// CHECK: call @sbp_rt_recv_i64
// CHECK-NOT: sbp.all
// CHECK-DAG: func.func private @sbp_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64)
// CHECK-DAG: func.func private @sbp_rt_send_i64(memref<*xi64>, i64, i64, i64)
sbp.mesh @m shape = [2, 2]
func.func @collectives(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> tensor<3xi64> {
  %0 = sbp.all_reduce %x on @m axes = [0, 1] reduction = max : tensor<4x8xf32>
  %1 = sbp.all_gather %0 on @m axes = [1] gather_dim = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  %2 = sbp.reduce_scatter %1 on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<4x16xf32> -> tensor<2x16xf32>
  %3 = sbp.all_to_all %2 on @m axes = [1] split_dim = 1 concat_dim = 0 : tensor<2x16xf32> -> tensor<4x8xf32>
  %4 = sbp.broadcast %3 on @m axes = [0] root = 1 : tensor<4x8xf32>
  sbp.send %i on @m axes = [0] peer = 1 : tensor<3xi64>
  %5 = sbp.recv on @m axes = [0] peer = 1 : tensor<3xi64>
  return %5 : tensor<3xi64>
}

// -----

// Axes pass packed, 8 bits each (axis 1 then axis 0 is 0x0001 = 1), with
// their count; the reduction kind is the enum's value (max = 1).
// CHECK-LABEL: func.func @packed_axes
// CHECK-DAG: %[[AXES:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[MAX:.*]] = arith.constant 1 : i64
// CHECK: call @sbp_rt_all_reduce_f32(%{{.*}}, %{{.*}}, %[[AXES]], %[[COUNT]], %[[MAX]])
sbp.mesh @m shape = [2, 2]
func.func @packed_axes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sbp.all_reduce %x on @m axes = [1, 0] reduction = max : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Dynamic result sizes: a gathered uneven dimension is the group's sum of
// the pieces, a scattered one the rank's balanced piece.
// CHECK-LABEL: func.func @uneven
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x4xf32>
// CHECK: %[[D64:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[SUM:.*]] = call @sbp_rt_group_sum(%[[D64]], %{{.*}}, %{{.*}}) : (i64, i64, i64) -> i64
// CHECK: %[[SIZE:.*]] = arith.index_cast %[[SUM]] : i64 to index
// CHECK: memref.alloc(%[[SIZE]]) : memref<?x4xf32>
// CHECK: call @sbp_rt_piece_size
// CHECK: call @sbp_rt_reduce_scatter_f32
// CHECK: %[[K:.*]] = call @sbp_rt_axis_index(%{{.*}}) : (i64) -> i64
// CHECK: arith.index_cast %[[K]] : i64 to index
sbp.mesh @m shape = [2]
func.func @uneven(%x: tensor<?x4xf32>, %y: tensor<5x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, index) {
  %0 = sbp.all_gather %x on @m axes = [0] gather_dim = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = sbp.reduce_scatter %y on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<5x4xf32> -> tensor<?x4xf32>
  %2 = sbp.axis_index @m axis = 0 : index
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, index
}
