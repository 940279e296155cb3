// Max and min reductions whose inits depend on a parameter: the init takes
// the adjoint where it stays the extreme.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @max_init(%x: tensor<6x5xf64>, %w: tensor<6xf64>) -> tensor<6xf64> {
  %two = arith.constant dense<2.0> : tensor<6xf64>
  %init = arith.mulf %w, %two : tensor<6xf64>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x5xf64>) outs(%init : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.tanh %a : f64
    %r = arith.maximumf %t, %o : f64
    linalg.yield %r : f64
  } -> tensor<6xf64>
  %n = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x5xf64>) outs(%w : tensor<6xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.minimumf %a, %o : f64
    linalg.yield %r : f64
  } -> tensor<6xf64>
  %s = arith.addf %m, %n : tensor<6xf64>
  return %s : tensor<6xf64>
}
