func.func @mlp(%x: tensor<4096x256xf32>, %w: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4096x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  return %y : tensor<4096x256xf32>
}
