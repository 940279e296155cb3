// An embedding lookup (a tensor read at a computed index inside the
// payload) plus a broadcast position table, as the ONNX importer writes
// Gather.
#tok = affine_map<(b, s, d) -> (b, s)>
#out = affine_map<(b, s, d) -> (b, s, d)>
#pos = affine_map<(b, s, d) -> (0, s, d)>
func.func @embedding(%ids: tensor<2x5xi64>, %table: tensor<7x4xf64>, %positions: tensor<1x5x4xf64>) -> tensor<2x5x4xf64> {
  %e = tensor.empty() : tensor<2x5x4xf64>
  %g = linalg.generic {indexing_maps = [#tok, #out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x5xi64>) outs(%e : tensor<2x5x4xf64>) {
  ^bb0(%id: i64, %o: f64):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<7x4xf64>
    linalg.yield %v : f64
  } -> tensor<2x5x4xf64>
  %y = linalg.generic {indexing_maps = [#out, #pos, #out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g, %positions : tensor<2x5x4xf64>, tensor<1x5x4xf64>) outs(%e : tensor<2x5x4xf64>) {
  ^bb0(%a: f64, %p: f64, %o: f64):
    %s = arith.addf %a, %p : f64
    %t = math.tanh %s : f64
    linalg.yield %t : f64
  } -> tensor<2x5x4xf64>
  return %y : tensor<2x5x4xf64>
}
