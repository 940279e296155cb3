// tensor.pad (its gradient is the slice of the padded adjoint where the
// source lies; a padding value read from a tensor takes the adjoint's sum
// over the border) and tensor.reshape (reshaped back).
func.func @padding(%a: tensor<4x6xf64>, %b: tensor<3x8xf64>, %v: tensor<2xf64>) -> tensor<6x9xf64> {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %edge = tensor.extract %v[%c1] : tensor<2xf64>
  %shape = arith.constant dense<[4, 6]> : tensor<2xi64>
  %r = tensor.reshape %b(%shape) : (tensor<3x8xf64>, tensor<2xi64>) -> tensor<4x6xf64>
  %m = arith.mulf %a, %r : tensor<4x6xf64>
  %p = tensor.pad %m low[1, 2] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f64
  } : tensor<4x6xf64> to tensor<6x9xf64>
  %q = tensor.pad %r low[0, 1] high[2, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %edge : f64
  } : tensor<4x6xf64> to tensor<6x9xf64>
  %pq = arith.mulf %p, %q : tensor<6x9xf64>
  %s = math.sin %pq : tensor<6x9xf64>
  return %s : tensor<6x9xf64>
}
