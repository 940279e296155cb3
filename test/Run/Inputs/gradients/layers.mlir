// scf.for over layers: each iteration reads its own slice of stacked
// weights and a weight shared by all layers.
#id = affine_map<(i, j) -> (i, j)>
func.func @layers(%x: tensor<4x8xf64>, %stack: tensor<3x8x8xf64>, %shared: tensor<8x8xf64>) -> tensor<4x8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<4x8xf64>) {
    %w = tensor.extract_slice %stack[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<3x8x8xf64> to tensor<8x8xf64>
    %e = tensor.empty() : tensor<4x8xf64>
    %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x8xf64>) -> tensor<4x8xf64>
    %y = linalg.matmul ins(%h, %w : tensor<4x8xf64>, tensor<8x8xf64>) outs(%z : tensor<4x8xf64>) -> tensor<4x8xf64>
    %y2 = linalg.matmul ins(%y, %shared : tensor<4x8xf64>, tensor<8x8xf64>) outs(%z : tensor<4x8xf64>) -> tensor<4x8xf64>
    %t = math.tanh %y2 : tensor<4x8xf64>
    %s = arith.addf %t, %h : tensor<4x8xf64>
    scf.yield %s : tensor<4x8xf64>
  }
  return %r : tensor<4x8xf64>
}
