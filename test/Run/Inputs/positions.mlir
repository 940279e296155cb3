// Payloads that read their loops' indices, split: a causal mask over rows
// split unevenly over both axes (6 = 3 + 3, then 2 + 1) and a position
// added along columns split over axis 1.
sbp.mesh @m shape = [2, 2]
func.func @positions(%x: tensor<6x6xf32> {sbp.sharding = #sbp.nd<@m, [S(0), S(0)]>},
                     %y: tensor<4x6xf32> {sbp.sharding = #sbp.nd<@m, [B, S(1)]>})
    -> (tensor<6x6xf32> {sbp.sharding = #sbp.nd<@m, [S(0), S(0)]>},
        tensor<4x6xf32> {sbp.sharding = #sbp.nd<@m, [B, S(1)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x6xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %seen = arith.cmpi ule, %j, %i : index
    %v = arith.select %seen, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<6x6xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %placed = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c10 = arith.constant 10 : index
    %i10 = arith.muli %i, %c10 : index
    %p = arith.addi %i10, %j : index
    %pi = arith.index_cast %p : index to i64
    %pf = arith.sitofp %pi : i64 to f32
    %v = arith.addf %in, %pf : f32
    linalg.yield %v : f32
  } -> tensor<4x6xf32>
  return %masked, %placed : tensor<6x6xf32>, tensor<4x6xf32>
}
