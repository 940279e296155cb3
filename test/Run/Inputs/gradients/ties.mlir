// Maxima and minima reached by several equal partials: a row broadcast
// from one value (every partial ties), and an init equal to the partials
// (a clamp at a value the rows repeat). Equal partials share the adjoint:
// the max of k copies of one value passes it the adjoint once.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @ties(%x: tensor<6xf64>, %w: tensor<6xf64>) -> tensor<6xf64> {
  %e = tensor.empty() : tensor<6x4xf64>
  %t = math.tanh %x : tensor<6xf64>
  %rows = linalg.broadcast ins(%t : tensor<6xf64>) outs(%e : tensor<6x4xf64>) dimensions = [1]
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %e6 = tensor.empty() : tensor<6xf64>
  %lowest = linalg.fill ins(%ninf : f64) outs(%e6 : tensor<6xf64>) -> tensor<6xf64>
  %max = linalg.reduce { arith.maximumf } ins(%rows : tensor<6x4xf64>) outs(%lowest : tensor<6xf64>) dimensions = [1]
  %min = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<6x4xf64>) outs(%t : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.minimumf %a, %o : f64
    linalg.yield %r : f64
  } -> tensor<6xf64>
  %p = arith.mulf %max, %w : tensor<6xf64>
  %s = arith.addf %p, %min : tensor<6xf64>
  return %s : tensor<6xf64>
}
