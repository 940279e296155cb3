// A generic that reduces and also writes a result over all its loops (as
// elementwise fusion into a reduction makes): the exponentials and their
// row sums from one op, both used.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @mixed(%x: tensor<4x6xf64>, %w: tensor<6xf64>) -> tensor<4x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %e2 = tensor.empty() : tensor<4x6xf64>
  %r:2 = linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<4x6xf64>, tensor<6xf64>) outs(%z, %e2 : tensor<4xf64>, tensor<4x6xf64>) {
  ^bb0(%a: f64, %b: f64, %s: f64, %o: f64):
    %t = arith.mulf %a, %b : f64
    %ex = math.exp %t : f64
    %sum = arith.addf %s, %ex : f64
    linalg.yield %sum, %ex : f64, f64
  } -> (tensor<4xf64>, tensor<4x6xf64>)
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%r#1, %r#0 : tensor<4x6xf64>, tensor<4xf64>) outs(%e2 : tensor<4x6xf64>) {
  ^bb0(%a: f64, %s: f64, %o: f64):
    %q = arith.divf %a, %s : f64
    linalg.yield %q : f64
  } -> tensor<4x6xf64>
  return %y : tensor<4x6xf64>
}
