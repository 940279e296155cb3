func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @second(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = math.exp %x : tensor<4xf64>
  return %0 : tensor<4xf64>
}
