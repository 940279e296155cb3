// Data movement: reshapes, a transpose, slices, an insert and a
// concatenation.
func.func @movement(%a: tensor<4x6xf64>, %b: tensor<2x3x4xf64>, %c: tensor<4x2xf64>) -> tensor<4x10xf64> {
  %flat = tensor.collapse_shape %b [[0, 1], [2]] : tensor<2x3x4xf64> into tensor<6x4xf64>
  %e = tensor.empty() : tensor<4x6xf64>
  %t = linalg.transpose ins(%flat : tensor<6x4xf64>) outs(%e : tensor<4x6xf64>) permutation = [1, 0]
  %p = arith.mulf %a, %t : tensor<4x6xf64>
  %x = tensor.expand_shape %p [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf64> into tensor<4x2x3xf64>
  %s = tensor.extract_slice %x[0, 1, 0] [4, 1, 3] [1, 1, 1] : tensor<4x2x3xf64> to tensor<4x3xf64>
  %w = tensor.extract_slice %a[0, 2] [4, 3] [1, 1] : tensor<4x6xf64> to tensor<4x3xf64>
  %ins = tensor.insert_slice %w into %x[0, 0, 0] [4, 1, 3] [1, 1, 1] : tensor<4x3xf64> into tensor<4x2x3xf64>
  %back = tensor.collapse_shape %ins [[0], [1, 2]] : tensor<4x2x3xf64> into tensor<4x6xf64>
  %sq = arith.mulf %s, %s : tensor<4x3xf64>
  %sum = tensor.concat dim(1) %back, %sq, %c : (tensor<4x6xf64>, tensor<4x3xf64>, tensor<4x2xf64>) -> tensor<4x11xf64>
  %r = tensor.extract_slice %sum[0, 1] [4, 10] [1, 1] : tensor<4x11xf64> to tensor<4x10xf64>
  return %r : tensor<4x10xf64>
}
