// Indices that no loop of their own gives: a diagonal (one loop for two
// dimensions, as an operand's map and inside a payload), its sum (the
// trace), and a column read at a constant.
#diag = affine_map<(i) -> (i, i)>
#col = affine_map<(i) -> (i, 2)>
#vec = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @diagonal(%w: tensor<4x4xf64>, %v: tensor<4x3xf64>, %u: tensor<4x4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  %zero = arith.constant 0.0 : f64
  %s0 = tensor.empty() : tensor<f64>
  %s = linalg.fill ins(%zero : f64) outs(%s0 : tensor<f64>) -> tensor<f64>
  %trace = linalg.generic {indexing_maps = [#diag, #scalar], iterator_types = ["reduction"]} ins(%w : tensor<4x4xf64>) outs(%s : tensor<f64>) {
  ^bb0(%a: f64, %o: f64):
    %sq = arith.mulf %a, %a : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  %y = linalg.generic {indexing_maps = [#diag, #col, #scalar, #vec], iterator_types = ["parallel"]} ins(%w, %v, %trace : tensor<4x4xf64>, tensor<4x3xf64>, tensor<f64>) outs(%e : tensor<4xf64>) {
  ^bb0(%a: f64, %c: f64, %t: f64, %o: f64):
    %i = linalg.index 0 : index
    %x = tensor.extract %u[%i, %i] : tensor<4x4xf64>
    %th = math.tanh %a : f64
    %cx = arith.mulf %c, %x : f64
    %p = arith.mulf %th, %cx : f64
    %r = arith.addf %p, %t : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  return %y : tensor<4xf64>
}
