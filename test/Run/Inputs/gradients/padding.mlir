// tensor.pad (its gradient is the slice of the padded adjoint where the
// source lies) and tensor.reshape (reshaped back).
func.func @padding(%a: tensor<4x6xf64>, %b: tensor<3x8xf64>) -> tensor<6x9xf64> {
  %zero = arith.constant 0.0 : f64
  %shape = arith.constant dense<[4, 6]> : tensor<2xi64>
  %r = tensor.reshape %b(%shape) : (tensor<3x8xf64>, tensor<2xi64>) -> tensor<4x6xf64>
  %m = arith.mulf %a, %r : tensor<4x6xf64>
  %p = tensor.pad %m low[1, 2] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f64
  } : tensor<4x6xf64> to tensor<6x9xf64>
  %s = math.sin %p : tensor<6x9xf64>
  return %s : tensor<6x9xf64>
}
