// Product reductions: each partial's adjoint is the product of the others
// and the init, also where a partial is zero (one zero: the others'
// product; two: none) — the inputs hold rows with no, one and two zeros.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @products(%w: tensor<4x6xf64>, %v: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %one = arith.constant 1.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %ones = linalg.fill ins(%one : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %p:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%w : tensor<4x6xf64>) outs(%v, %ones : tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%x: f64, %o: f64, %q: f64):
    %half = arith.constant 0.5 : f64
    %sq = arith.mulf %x, %x : f64
    %s = arith.addf %sq, %half : f64
    %r0 = arith.mulf %o, %x : f64
    %r1 = arith.mulf %s, %q : f64
    linalg.yield %r0, %r1 : f64, f64
  } -> (tensor<4xf64>, tensor<4xf64>)
  %t = math.tanh %p#0 : tensor<4xf64>
  return %t, %p#1 : tensor<4xf64>, tensor<4xf64>
}
