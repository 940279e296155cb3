func.func @two(%x: tensor<8x4xf32>, %w0: tensor<4x4xf32>, %w1: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = linalg.matmul {sbp.stage = 1} ins(%h, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}
