// RUN: sbp-opt %s -split-input-file --sbp-print-signatures=mesh=m -o /dev/null | FileCheck %s
// RUN: %expect-exit 1 sbp-opt %s -split-input-file --sbp-print-signatures=mesh=nowhere -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOMESH

// On a 2-d mesh every product of per-axis signatures is a candidate.
// CHECK-LABEL: func @matmul_2d
// CHECK-NEXT:  linalg.matmul
// CHECK-NEXT:    ([B, B], [B, B], [B, B]) -> ([B, B])
// CHECK:         ([S(0), B], [B, S(1)], [S(0), S(1)]) -> ([S(0), S(1)])
// CHECK:         ([S(0), S(1)], [B, S(0)], [S(0), P(sum)]) -> ([S(0), P(sum)])
// CHECK:         ([P(sum), P(sum)], [B, B], [P(sum), P(sum)]) -> ([P(sum), P(sum)])
// CHECK:         ([B, P(sum)], [P(sum), B], [P(sum), P(sum)]) -> ([P(sum), P(sum)])
// CHECK-NEXT:    ([B, B], [P(sum), P(sum)], [P(sum), P(sum)]) -> ([P(sum), P(sum)])
// CHECK-NEXT:  func.return
// NOMESH: error: sbp-print-signatures: no sbp.mesh named 'nowhere'
sbp.mesh @m shape = [2, 4]
func.func @matmul_2d(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>,
                     %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                     outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Splits that leave a device without rows are dropped: 3 rows over 4.
// CHECK-LABEL: func @too_small
// CHECK-NEXT:  arith.negf
// CHECK-NEXT:    ([B]) -> ([B])
// CHECK-NEXT:    ([S(1)]) -> ([S(1)])
// CHECK-NEXT:    ([P(sum)]) -> ([P(sum)])
// CHECK-NEXT:  func.return
sbp.mesh @m shape = [4]
func.func @too_small(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = arith.negf %x : tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// A merged dimension splits only when its outer dimension divides evenly:
// 6 rows over 3 devices line up with 24 elements over 3, but 6 over 4 do not.
// CHECK-LABEL: func @reshape_even
// CHECK-NEXT:  tensor.collapse_shape
// CHECK-NEXT:    ([B]) -> ([B])
// CHECK-NEXT:    ([S(0)]) -> ([S(0)])
// CHECK-LABEL: func @reshape_uneven
// CHECK-NEXT:  tensor.collapse_shape
// CHECK-NEXT:    ([B]) -> ([B])
// CHECK-NEXT:    ([P(sum)]) -> ([P(sum)])
sbp.mesh @m shape = [3]
func.func @reshape_even(%x: tensor<6x4xf32>) -> tensor<24xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  return %0 : tensor<24xf32>
}

// -----

sbp.mesh @m shape = [4]
func.func @reshape_uneven(%x: tensor<6x4xf32>) -> tensor<24xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  return %0 : tensor<24xf32>
}
