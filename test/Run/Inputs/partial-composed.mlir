// Partial sums through composed element-wise payloads, with the signatures
// recorded by hand: two k-split products are partial sums, `(a + b) * c`
// keeps them partial with c whole, and `out + extf(g)` widens and
// accumulates them into a zero f64 init, still partial; the result is
// reduced once at the end.
sbp.mesh @m shape = [2]
#id = affine_map<(i, j) -> (i, j)>
func.func @composed(%x1: tensor<6x10xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                    %w1: tensor<10x14xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>},
                    %x2: tensor<6x10xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>},
                    %w2: tensor<10x14xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>},
                    %c: tensor<6x14xf32> {sbp.sharding = #sbp.nd<@m, [B]>}) -> tensor<6x14xf64> {
  %zero = arith.constant 0.0 : f32
  %zero64 = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<6x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x14xf32>) -> tensor<6x14xf32>
  %p1 = linalg.matmul ins(%x1, %w1 : tensor<6x10xf32>, tensor<10x14xf32>) outs(%f : tensor<6x14xf32>) -> tensor<6x14xf32>
  %p2 = linalg.matmul ins(%x2, %w2 : tensor<6x10xf32>, tensor<10x14xf32>) outs(%f : tensor<6x14xf32>) -> tensor<6x14xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p1, %p2, %c : tensor<6x14xf32>, tensor<6x14xf32>, tensor<6x14xf32>) outs(%e : tensor<6x14xf32>)
      attrs = {sbp.operands = [#sbp.nd<@m, [P(sum)]>, #sbp.nd<@m, [P(sum)]>, #sbp.nd<@m, [B]>, #sbp.nd<@m, [P(sum)]>],
               sbp.results = [#sbp.nd<@m, [P(sum)]>]} {
  ^bb0(%a: f32, %b: f32, %s: f32, %out: f32):
    %sum = arith.addf %a, %b : f32
    %v = arith.mulf %sum, %s : f32
    linalg.yield %v : f32
  } -> tensor<6x14xf32>
  %e64 = tensor.empty() : tensor<6x14xf64>
  %acc = linalg.fill ins(%zero64 : f64) outs(%e64 : tensor<6x14xf64>) -> tensor<6x14xf64>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<6x14xf32>) outs(%acc : tensor<6x14xf64>)
      attrs = {sbp.operands = [#sbp.nd<@m, [P(sum)]>, #sbp.nd<@m, [P(sum)]>],
               sbp.results = [#sbp.nd<@m, [P(sum)]>]} {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    %t = arith.addf %out, %w : f64
    linalg.yield %t : f64
  } -> tensor<6x14xf64>
  return %h : tensor<6x14xf64>
}
