// Layer normalization over the last dimension (mean, variance, rsqrt),
// scaled and shifted, then GELU with erf: every parameter is a vector
// broadcast along the rows.
#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @layernorm(%x: tensor<6x16xf64>, %gamma: tensor<16xf64>, %beta: tensor<16xf64>) -> tensor<6x16xf64> {
  %zero = arith.constant 0.0 : f64
  %inv = arith.constant 0.0625 : f64
  %eps = arith.constant 1.0e-5 : f64
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %rsqrt2 = arith.constant 0.70710678118654752 : f64
  %er = tensor.empty() : tensor<6xf64>
  %zr = linalg.fill ins(%zero : f64) outs(%er : tensor<6xf64>) -> tensor<6xf64>
  %sum = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x16xf64>) outs(%zr : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.addf %a, %o : f64
    linalg.yield %s : f64
  } -> tensor<6xf64>
  %e = tensor.empty() : tensor<6x16xf64>
  %centered = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<6x16xf64>, tensor<6xf64>) outs(%e : tensor<6x16xf64>) {
  ^bb0(%a: f64, %s: f64, %o: f64):
    %mean = arith.mulf %s, %inv : f64
    %d = arith.subf %a, %mean : f64
    linalg.yield %d : f64
  } -> tensor<6x16xf64>
  %var = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%centered : tensor<6x16xf64>) outs(%zr : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %sq = arith.mulf %a, %a : f64
    %m = arith.mulf %sq, %inv : f64
    %s = arith.addf %o, %m : f64
    linalg.yield %s : f64
  } -> tensor<6xf64>
  %y = linalg.generic {indexing_maps = [#x, #row, #col, #col, #x], iterator_types = ["parallel", "parallel"]} ins(%centered, %var, %gamma, %beta : tensor<6x16xf64>, tensor<6xf64>, tensor<16xf64>, tensor<16xf64>) outs(%e : tensor<6x16xf64>) {
  ^bb0(%c: f64, %v: f64, %g: f64, %b: f64, %o: f64):
    %ve = arith.addf %v, %eps : f64
    %r = math.rsqrt %ve : f64
    %n = arith.mulf %c, %r : f64
    %sc = arith.mulf %n, %g : f64
    %sh = arith.addf %sc, %b : f64
    %t = arith.mulf %sh, %rsqrt2 : f64
    %erf = math.erf %t : f64
    %p = arith.addf %erf, %one : f64
    %h = arith.mulf %sh, %half : f64
    %gelu = arith.mulf %h, %p : f64
    linalg.yield %gelu : f64
  } -> tensor<6x16xf64>
  return %y : tensor<6x16xf64>
}
