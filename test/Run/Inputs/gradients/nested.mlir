// Nested loops (the inner loop's result yielded as it is; its gradient was
// lost before) and a loop inside a branch.
func.func @nested(%x: tensor<8x4xf64>, %w: tensor<4x4xf64>) -> tensor<8x4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x4xf64>) -> tensor<8x4xf64>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> tensor<8x4xf64> {
    %in = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %h) -> tensor<8x4xf64> {
      %m = linalg.matmul ins(%g, %w : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
      %t = math.tanh %m : tensor<8x4xf64>
      scf.yield %t : tensor<8x4xf64>
    }
    scf.yield %in : tensor<8x4xf64>
  }
  %first = tensor.extract %x[%c0, %c0] : tensor<8x4xf64>
  %bound = arith.constant -10.0 : f64
  %taken = arith.cmpf ogt, %first, %bound : f64
  %b = scf.if %taken -> tensor<8x4xf64> {
    %in = scf.for %j = %c0 to %c3 step %c1 iter_args(%g = %r) -> tensor<8x4xf64> {
      %m = linalg.matmul ins(%g, %w : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
      %t = math.sin %m : tensor<8x4xf64>
      scf.yield %t : tensor<8x4xf64>
    }
    scf.yield %in : tensor<8x4xf64>
  } else {
    scf.yield %r : tensor<8x4xf64>
  }
  return %b : tensor<8x4xf64>
}
