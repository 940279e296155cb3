// A dimension of 3 split over 2 ranks (2 + 1) and one value returned twice,
// once split and once gathered.
sbp.mesh @m shape = [2]
func.func @uneven(%x: tensor<3x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>})
    -> (tensor<3x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = math.exp %x : tensor<3x4xf32>
  return %0, %0, %0 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
