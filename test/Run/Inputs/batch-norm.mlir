// A batch norm in inference mode: the variance is an argument, offset by
// epsilon and taken the reciprocal square root of. Random values must be
// positive there (and may be of any sign for the input).
#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>
func.func @bn(%x: tensor<4x8xf32>, %var: tensor<8xf32>) -> tensor<4x8xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#rows, #cols, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %var : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %s = arith.addf %v, %eps : f32
    %r = math.rsqrt %s : f32
    %n = arith.mulf %a, %r : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
