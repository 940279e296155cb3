// StableHLO (as JAX exports lax.switch): a case on a run-time index,
// imported as branches; the index is a synthetic integer input.
func.func public @main(%x: tensor<4x3xf64>, %w: tensor<3x3xf64>, %i: tensor<i32>) -> tensor<4x3xf64> {
  %m = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x3xf64>, tensor<3x3xf64>) -> tensor<4x3xf64>
  %0 = "stablehlo.case"(%i) ({
    %s = stablehlo.sine %m : tensor<4x3xf64>
    stablehlo.return %s : tensor<4x3xf64>
  }, {
    %s = stablehlo.multiply %m, %m : tensor<4x3xf64>
    stablehlo.return %s : tensor<4x3xf64>
  }, {
    %s = stablehlo.tanh %m : tensor<4x3xf64>
    %t = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0] : (tensor<4x3xf64>, tensor<3x3xf64>) -> tensor<4x3xf64>
    stablehlo.return %t : tensor<4x3xf64>
  }) : (tensor<i32>) -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}
