// A layer function called twice, itself calling another: the calls are
// inlined before differentiation.
func.func @calls(%x: tensor<4x6xf64>, %w1: tensor<6x6xf64>, %w2: tensor<6x6xf64>) -> tensor<4x6xf64> {
  %a = func.call @layer(%x, %w1) : (tensor<4x6xf64>, tensor<6x6xf64>) -> tensor<4x6xf64>
  %b = func.call @layer(%a, %w2) : (tensor<4x6xf64>, tensor<6x6xf64>) -> tensor<4x6xf64>
  return %b : tensor<4x6xf64>
}
func.func private @layer(%x: tensor<4x6xf64>, %w: tensor<6x6xf64>) -> tensor<4x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x6xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x6xf64>) -> tensor<4x6xf64>
  %m = linalg.matmul ins(%x, %w : tensor<4x6xf64>, tensor<6x6xf64>) outs(%z : tensor<4x6xf64>) -> tensor<4x6xf64>
  %t = func.call @act(%m) : (tensor<4x6xf64>) -> tensor<4x6xf64>
  return %t : tensor<4x6xf64>
}
func.func private @act(%x: tensor<4x6xf64>) -> tensor<4x6xf64> {
  %t = math.tanh %x : tensor<4x6xf64>
  return %t : tensor<4x6xf64>
}
