// An element read and one written at constant indices outside the static
// shape: each would reach outside its buffer at run time.
func.func @read(%x: tensor<2x1xf32>) -> tensor<2x1xf32> {
  %c1 = arith.constant 1 : index
  %v = tensor.extract %x[%c1, %c1] : tensor<2x1xf32>
  %s = tensor.splat %v : tensor<2x1xf32>
  return %s : tensor<2x1xf32>
}
func.func @write(%x: tensor<2x1xf32>, %v: f32) -> tensor<2x1xf32> {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %r = tensor.insert %v into %x[%c2, %c0] : tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}
