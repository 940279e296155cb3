// scf.if: one branch taken and, in the second if, the other side (its
// condition is the first's negation); the sides read weights from above
// and yield values computed before the branch.
func.func @branch(%x: tensor<8x4xf64>, %w: tensor<4x4xf64>, %u: tensor<4x4xf64>, %v: tensor<8x4xf64>) -> tensor<8x4xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x4xf64>) -> tensor<8x4xf64>
  %m = linalg.matmul ins(%x, %w : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
  %c0 = arith.constant 0 : index
  %first = tensor.extract %v[%c0, %c0] : tensor<8x4xf64>
  %bound = arith.constant -10.0 : f64
  %taken = arith.cmpf ogt, %first, %bound : f64
  %other = arith.cmpf olt, %first, %bound : f64
  %a = scf.if %taken -> tensor<8x4xf64> {
    %t = math.tanh %m : tensor<8x4xf64>
    %p = linalg.matmul ins(%t, %u : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
    scf.yield %p : tensor<8x4xf64>
  } else {
    scf.yield %m : tensor<8x4xf64>
  }
  %b = scf.if %other -> tensor<8x4xf64> {
    %s = arith.mulf %a, %a : tensor<8x4xf64>
    scf.yield %s : tensor<8x4xf64>
  } else {
    %q = linalg.matmul ins(%a, %u : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
    %r = arith.addf %q, %m : tensor<8x4xf64>
    scf.yield %r : tensor<8x4xf64>
  }
  return %b : tensor<8x4xf64>
}
