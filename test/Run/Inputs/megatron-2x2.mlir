sbp.mesh @m shape = [2, 2]
func.func @mlp(%x: tensor<6x10xf32>, %w1: tensor<10x14xf32> {sbp.sharding = #sbp.nd<@m, [B, S(1)]>},
               %w2: tensor<14x5xf32> {sbp.sharding = #sbp.nd<@m, [B, S(0)]>}) -> tensor<6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = sbp.annotate %x #sbp.nd<@m, [S(0), B]> : tensor<6x10xf32>
  %e1 = tensor.empty() : tensor<6x14xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6x14xf32>) -> tensor<6x14xf32>
  %h = linalg.matmul ins(%xs, %w1 : tensor<6x10xf32>, tensor<10x14xf32>) outs(%f1 : tensor<6x14xf32>) -> tensor<6x14xf32>
  %r = math.tanh %h : tensor<6x14xf32>
  %e2 = tensor.empty() : tensor<6x5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x5xf32>) -> tensor<6x5xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<6x14xf32>, tensor<14x5xf32>) outs(%f2 : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}
