// Scalars a loop body and a branch read from above: their adjoints are
// summed over the iterations and passed out of the branch taken.
func.func @captured(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = tensor.extract %w[%c0] : tensor<4xf64>
  %t = tensor.extract %w[%c1] : tensor<4xf64>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> tensor<4xf64> {
    %first = arith.cmpi eq, %i, %c0 : index
    %g = scf.if %first -> tensor<4xf64> {
      %p = linalg.fill ins(%t : f64) outs(%h : tensor<4xf64>) -> tensor<4xf64>
      %q = arith.addf %p, %h : tensor<4xf64>
      scf.yield %q : tensor<4xf64>
    } else {
      scf.yield %h : tensor<4xf64>
    }
    %p = linalg.fill ins(%s : f64) outs(%h : tensor<4xf64>) -> tensor<4xf64>
    %q = arith.addf %p, %g : tensor<4xf64>
    %u = math.tanh %q : tensor<4xf64>
    %v = arith.addf %u, %w : tensor<4xf64>
    scf.yield %v : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
