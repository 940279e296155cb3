// One row of a computed table at a constant index given as a 0-d tensor
// (how ONNX Gather with a scalar index imports: PyTorch's
// MultiheadAttention selects q, k and v this way).
#row = affine_map<(d0) -> ()>
#out = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<3x4xf64>, %w: tensor<3x4xf64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<3x4xf64>, tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %h = math.tanh %m : f64
    linalg.yield %h : f64
  } -> tensor<3x4xf64>
  %k = arith.constant dense<1> : tensor<i64>
  %e1 = tensor.empty() : tensor<4xf64>
  %r = linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel"]} ins(%k : tensor<i64>) outs(%e1 : tensor<4xf64>) {
  ^bb0(%i: i64, %o: f64):
    %ii = arith.index_cast %i : i64 to index
    %j = linalg.index 0 : index
    %v = tensor.extract %t[%ii, %j] : tensor<3x4xf64>
    linalg.yield %v : f64
  } -> tensor<4xf64>
  %z = arith.constant 0.0 : f64
  %e2 = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%z : f64) outs(%e2 : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [#out, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%r : tensor<4xf64>) outs(%f : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %q = arith.mulf %a, %a : f64
    %n = arith.addf %q, %acc : f64
    linalg.yield %n : f64
  } -> tensor<f64>
  return %s : tensor<f64>
}
