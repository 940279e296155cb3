// Products whose contraction is split over 2 ranks: each result is a sum of
// partial products that an all-reduce of f16 (bf16) adds.
sbp.mesh @m shape = [2]
func.func @main(%x: tensor<8x16xf16> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                %w: tensor<16x4xf16> {sbp.sharding = #sbp.nd<@m, [S(0)]>},
                %a: tensor<8x16xbf16> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                %b: tensor<16x4xbf16> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<8x4xf16> {sbp.sharding = #sbp.nd<@m, [B]>},
        tensor<8x4xbf16> {sbp.sharding = #sbp.nd<@m, [B]>}) {
  %zh = arith.constant 0.0 : f16
  %eh = tensor.empty() : tensor<8x4xf16>
  %ih = linalg.fill ins(%zh : f16) outs(%eh : tensor<8x4xf16>) -> tensor<8x4xf16>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf16>, tensor<16x4xf16>) outs(%ih : tensor<8x4xf16>) -> tensor<8x4xf16>
  %zb = arith.constant 0.0 : bf16
  %eb = tensor.empty() : tensor<8x4xbf16>
  %ib = linalg.fill ins(%zb : bf16) outs(%eb : tensor<8x4xbf16>) -> tensor<8x4xbf16>
  %c = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%ib : tensor<8x4xbf16>) -> tensor<8x4xbf16>
  return %y, %c : tensor<8x4xf16>, tensor<8x4xbf16>
}
