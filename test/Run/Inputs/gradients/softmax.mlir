// linalg.softmax over the last of three dimensions, fed by a matmul: its
// input's gradient y * (dy - sum(dy * y)) flows back into the weight.
func.func @softmax(%x: tensor<8x6xf64>, %w: tensor<6x12xf64>) -> tensor<2x4x12xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x12xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x12xf64>) -> tensor<8x12xf64>
  %m = linalg.matmul ins(%x, %w : tensor<8x6xf64>, tensor<6x12xf64>) outs(%z : tensor<8x12xf64>) -> tensor<8x12xf64>
  %r = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf64> into tensor<2x4x12xf64>
  %o = tensor.empty() : tensor<2x4x12xf64>
  %s = linalg.softmax dimension(2) ins(%r : tensor<2x4x12xf64>) outs(%o : tensor<2x4x12xf64>) -> tensor<2x4x12xf64>
  %t = linalg.softmax dimension(1) ins(%s : tensor<2x4x12xf64>) outs(%o : tensor<2x4x12xf64>) -> tensor<2x4x12xf64>
  return %t : tensor<2x4x12xf64>
}
