// StableHLO convolutions as exported models have them: strided with
// padding, then grouped (two feature groups) with a dilated kernel. The
// image input and the grouped kernel are read at compound indices
// (`2 * oh + kh`, `group * 3 + c`), so their adjoints are scattered.
func.func @main(%x: tensor<2x7x7x4xf64>, %w1: tensor<3x3x4x6xf64>, %w2: tensor<2x2x3x4xf64>) -> tensor<2x2x2x4xf64> {
  %a = stablehlo.convolution(%x, %w1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x7x4xf64>, tensor<3x3x4x6xf64>) -> tensor<2x4x4x6xf64>
  %t = stablehlo.tanh %a : tensor<2x4x4x6xf64>
  %b = stablehlo.convolution(%t, %w2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x4x4x6xf64>, tensor<2x2x3x4xf64>) -> tensor<2x2x2x4xf64>
  return %b : tensor<2x2x2x4xf64>
}
