// A loss summed from a million f32 terms: its rounding, more than a few
// units of its last place, is what the central difference measures of a
// gradient this small; --check-gradients measures that noise.
func.func @long_sum(%w: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = arith.constant dense<0.5> : tensor<1024x1024xf32>
  %y = arith.mulf %w, %c : tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}
