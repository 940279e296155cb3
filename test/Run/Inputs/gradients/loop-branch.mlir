// A branch inside a loop over stacked layers: the first %k iterations take
// one side, the others the other.
func.func @loopif(%x: tensor<8x4xf64>, %w: tensor<3x4x4xf64>, %k: tensor<i64>) -> tensor<8x4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x4xf64>) -> tensor<8x4xf64>
  %kk = tensor.extract %k[] : tensor<i64>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> tensor<8x4xf64> {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf64> to tensor<4x4xf64>
    %m = linalg.matmul ins(%h, %wi : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
    %ii = arith.index_cast %i : index to i64
    %odd = arith.cmpi slt, %ii, %kk : i64
    %n = scf.if %odd -> tensor<8x4xf64> {
      %t = math.tanh %m : tensor<8x4xf64>
      scf.yield %t : tensor<8x4xf64>
    } else {
      %s = math.sin %m : tensor<8x4xf64>
      scf.yield %s : tensor<8x4xf64>
    }
    scf.yield %n : tensor<8x4xf64>
  }
  return %r : tensor<8x4xf64>
}
