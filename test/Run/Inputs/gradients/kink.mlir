// |w| at w = 0 (the inputs given are zeros): the central difference there
// is 0, the gradient rule's subgradient (that of w >= 0) is not, so
// --check-gradients must report the mismatch.
func.func @kink(%w: tensor<4xf64>) -> tensor<4xf64> {
  %a = math.absf %w : tensor<4xf64>
  return %a : tensor<4xf64>
}
