// A select whose other branch is infinite where it is not taken, as
// imported erf approximations are (a series in 1/x^2 beside one in x^2):
// the zero adjoint of that branch must stay zero, not become 0 * inf = NaN.
#id = affine_map<(i, j) -> (i, j)>
func.func @untaken(%a: tensor<3x5xf64>, %b: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %tiny = arith.constant 1.0e-200 : f64
  %huge = arith.constant 1.0e+200 : f64
  %one = arith.constant 1.0 : f64
  %e = tensor.empty() : tensor<3x5xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<3x5xf64>, tensor<3x5xf64>) outs(%e : tensor<3x5xf64>) {
  ^bb0(%x: f64, %w: f64, %o: f64):
    %z = arith.mulf %x, %tiny : f64
    %sq = arith.mulf %z, %z : f64
    %inverse = arith.divf %one, %sq : f64
    %near = arith.mulf %z, %huge : f64
    %abs = math.absf %z : f64
    %small = arith.cmpf olt, %abs, %one : f64
    %v = arith.select %small, %near, %inverse : f64
    %p = arith.mulf %v, %w : f64
    %t = math.tanh %p : f64
    linalg.yield %t : f64
  } -> tensor<3x5xf64>
  return %y : tensor<3x5xf64>
}
