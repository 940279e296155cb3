// Loops inside and around a loop whose trip count is an input: a loop over
// stacked layers runs the loop per layer, and the loop's body runs a loop
// of two steps.
func.func @nested(%x: tensor<8x4xf64>, %w: tensor<2x4x4xf64>, %n: tensor<i32>) -> tensor<8x4xf64> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x4xf64>) -> tensor<8x4xf64>
  %limit = tensor.extract %n[] : tensor<i32>
  %out = scf.for %l = %i0 to %i2 step %i1 iter_args(%a = %x) -> tensor<8x4xf64> {
    %wl = tensor.extract_slice %w[%l, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<2x4x4xf64> to tensor<4x4xf64>
    %r:2 = scf.while (%i = %c0, %h = %a) : (i32, tensor<8x4xf64>) -> (i32, tensor<8x4xf64>) {
      %go = arith.cmpi slt, %i, %limit : i32
      scf.condition(%go) %i, %h : i32, tensor<8x4xf64>
    } do {
    ^bb0(%i: i32, %h: tensor<8x4xf64>):
      %g = scf.for %s = %i0 to %i2 step %i1 iter_args(%v = %h) -> tensor<8x4xf64> {
        %m = linalg.matmul ins(%v, %wl : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
        %t = math.sin %m : tensor<8x4xf64>
        scf.yield %t : tensor<8x4xf64>
      }
      %j = arith.addi %i, %c1 : i32
      scf.yield %j, %g : i32, tensor<8x4xf64>
    }
    scf.yield %r#1 : tensor<8x4xf64>
  }
  return %out : tensor<8x4xf64>
}
