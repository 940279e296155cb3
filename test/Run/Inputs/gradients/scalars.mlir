// Scalars between tensors: elements read out (tensor.extract), scalar
// arithmetic, and scalars made tensors again (tensor.splat,
// tensor.from_elements, a fill's value, a generic's scalar input, a scalar
// a payload reads from above).
func.func @scalars(%x: tensor<4x3xf64>, %s: tensor<2xf64>) -> tensor<4x3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %s[%c0] : tensor<2xf64>
  %b = tensor.extract %s[%c1] : tensor<2xf64>
  %x12 = tensor.extract %x[%c1, %c0] : tensor<4x3xf64>
  %ab = arith.mulf %a, %b : f64
  %t = math.tanh %x12 : f64
  %e = tensor.empty() : tensor<4x3xf64>
  %fill = linalg.fill ins(%ab : f64) outs(%e : tensor<4x3xf64>) -> tensor<4x3xf64>
  %splat = tensor.splat %t : tensor<4x3xf64>
  %row = tensor.from_elements %a, %t, %ab : tensor<3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %splat, %row, %b : tensor<4x3xf64>, tensor<4x3xf64>, tensor<3xf64>, f64) outs(%fill : tensor<4x3xf64>) {
  ^bb0(%xi: f64, %si: f64, %ri: f64, %bi: f64, %o: f64):
    %p = arith.mulf %xi, %si : f64
    %q = arith.mulf %ri, %bi : f64
    %r = arith.addf %p, %q : f64
    %u = arith.mulf %r, %o : f64
    linalg.yield %u : f64
  } -> tensor<4x3xf64>
  %z = linalg.map ins(%y : tensor<4x3xf64>) outs(%e : tensor<4x3xf64>)
    (%in: f64, %init: f64) {
      %v = arith.mulf %in, %a : f64
      %w = arith.addf %v, %in : f64
      linalg.yield %w : f64
    }
  return %z : tensor<4x3xf64>
}
