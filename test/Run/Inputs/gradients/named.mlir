// Named structured ops: broadcast, element-wise, reduce, a matmul with
// transposed operand maps, and a loss returned as one element.
func.func @named(%a: tensor<6x4xf64>, %b: tensor<4xf64>, %c: tensor<5x6xf64>) -> tensor<1xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<6x4xf64>
  %bb = linalg.broadcast ins(%b : tensor<4xf64>) outs(%e : tensor<6x4xf64>) dimensions = [0]
  %s = linalg.add ins(%a, %bb : tensor<6x4xf64>, tensor<6x4xf64>) outs(%e : tensor<6x4xf64>) -> tensor<6x4xf64>
  %m = linalg.mul ins(%s, %a : tensor<6x4xf64>, tensor<6x4xf64>) outs(%e : tensor<6x4xf64>) -> tensor<6x4xf64>
  %em = tensor.empty() : tensor<4x5xf64>
  %zm = linalg.fill ins(%zero : f64) outs(%em : tensor<4x5xf64>) -> tensor<4x5xf64>
  %t = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>] ins(%m, %c : tensor<6x4xf64>, tensor<5x6xf64>) outs(%zm : tensor<4x5xf64>) -> tensor<4x5xf64>
  %er = tensor.empty() : tensor<1xf64>
  %zr = linalg.fill ins(%zero : f64) outs(%er : tensor<1xf64>) -> tensor<1xf64>
  %flat = tensor.collapse_shape %t [[0, 1]] : tensor<4x5xf64> into tensor<20xf64>
  %ex = tensor.expand_shape %flat [[0, 1]] output_shape [1, 20] : tensor<20xf64> into tensor<1x20xf64>
  %r = linalg.reduce ins(%ex : tensor<1x20xf64>) outs(%zr : tensor<1xf64>) dimensions = [1]
    (%x: f64, %o: f64) {
      %sq = arith.mulf %x, %x : f64
      %acc = arith.addf %sq, %o : f64
      linalg.yield %acc : f64
    }
  return %r : tensor<1xf64>
}
