// Attention scores: a contraction with transposed maps, a max reduction,
// exp, a sum reduction and a division (softmax), then a batched matmul.
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#s3 = affine_map<(b, i, j) -> (b, i, j)>
#r3 = affine_map<(b, i, j) -> (b, i)>
func.func @attention(%q: tensor<2x4x8xf64>, %k: tensor<2x4x8xf64>, %v: tensor<2x4x8xf64>) -> tensor<2x4x8xf64> {
  %zero = arith.constant 0.0 : f64
  %lowest = arith.constant -1.0e300 : f64
  %e = tensor.empty() : tensor<2x4x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf64>, tensor<2x4x8xf64>) outs(%z : tensor<2x4x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %o, %m : f64
    linalg.yield %s : f64
  } -> tensor<2x4x4xf64>
  %er = tensor.empty() : tensor<2x4xf64>
  %low = linalg.fill ins(%lowest : f64) outs(%er : tensor<2x4xf64>) -> tensor<2x4xf64>
  %max = linalg.generic {indexing_maps = [#s3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%scores : tensor<2x4x4xf64>) outs(%low : tensor<2x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.maximumf %a, %o : f64
    linalg.yield %m : f64
  } -> tensor<2x4xf64>
  %ex = linalg.generic {indexing_maps = [#s3, #r3, #s3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%scores, %max : tensor<2x4x4xf64>, tensor<2x4xf64>) outs(%e : tensor<2x4x4xf64>) {
  ^bb0(%a: f64, %m: f64, %o: f64):
    %d = arith.subf %a, %m : f64
    %x = math.exp %d : f64
    linalg.yield %x : f64
  } -> tensor<2x4x4xf64>
  %zr = linalg.fill ins(%zero : f64) outs(%er : tensor<2x4xf64>) -> tensor<2x4xf64>
  %sum = linalg.reduce ins(%ex : tensor<2x4x4xf64>) outs(%zr : tensor<2x4xf64>) dimensions = [2]
    (%a: f64, %o: f64) {
      %s = arith.addf %a, %o : f64
      linalg.yield %s : f64
    }
  %p = linalg.generic {indexing_maps = [#s3, #r3, #s3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<2x4x4xf64>, tensor<2x4xf64>) outs(%e : tensor<2x4x4xf64>) {
  ^bb0(%a: f64, %s: f64, %o: f64):
    %d = arith.divf %a, %s : f64
    linalg.yield %d : f64
  } -> tensor<2x4x4xf64>
  %eo = tensor.empty() : tensor<2x4x8xf64>
  %zo = linalg.fill ins(%zero : f64) outs(%eo : tensor<2x4x8xf64>) -> tensor<2x4x8xf64>
  %out = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf64>, tensor<2x4x8xf64>) outs(%zo : tensor<2x4x8xf64>) -> tensor<2x4x8xf64>
  return %out : tensor<2x4x8xf64>
}
