// A loop whose trip count is an input (%n iterations): its before region
// forwards values it computes (a scaled state) besides the counter, its
// after region reads a weight from above, and the loop carries a second
// float state that only the before region updates.
func.func @whileloop(%x: tensor<8x4xf64>, %w: tensor<4x4xf64>, %n: tensor<i32>) -> tensor<8x4xf64> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f64
  %half = arith.constant dense<0.5> : tensor<8x4xf64>
  %e = tensor.empty() : tensor<8x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<8x4xf64>) -> tensor<8x4xf64>
  %limit = tensor.extract %n[] : tensor<i32>
  %r:3 = scf.while (%i = %c0, %h = %x, %s = %x) : (i32, tensor<8x4xf64>, tensor<8x4xf64>) -> (i32, tensor<8x4xf64>, tensor<8x4xf64>) {
    %go = arith.cmpi slt, %i, %limit : i32
    %scaled = arith.mulf %h, %half : tensor<8x4xf64>
    %sum = arith.addf %s, %scaled : tensor<8x4xf64>
    scf.condition(%go) %i, %scaled, %sum : i32, tensor<8x4xf64>, tensor<8x4xf64>
  } do {
  ^bb0(%i: i32, %h: tensor<8x4xf64>, %s: tensor<8x4xf64>):
    %m = linalg.matmul ins(%h, %w : tensor<8x4xf64>, tensor<4x4xf64>) outs(%z : tensor<8x4xf64>) -> tensor<8x4xf64>
    %t = math.tanh %m : tensor<8x4xf64>
    %g = arith.addf %t, %h : tensor<8x4xf64>
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %g, %s : i32, tensor<8x4xf64>, tensor<8x4xf64>
  }
  %out = arith.mulf %r#1, %r#2 : tensor<8x4xf64>
  return %out : tensor<8x4xf64>
}
