module @jit_f {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.cholesky %arg0 : tensor<4xf32>
    %1 = stablehlo.tanh %0 : tensor<4xf32>
    %2 = stablehlo.fft %1 : tensor<4xf32>
    %3 = stablehlo.cholesky %2 : tensor<4xf32>
    %4 = "stablehlo.rng_bit_generator"(%3) : (tensor<4xf32>) -> tensor<4xf32>
    return %4 : tensor<4xf32>
  }
}
