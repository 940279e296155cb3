// A loop whose trip count is an input: an scf.while, laid out whole (it has
// no rule), the ops of its body laid out inside it.
func.func @main(%x: tensor<4x6xf32>, %n: tensor<i32>) -> tensor<4x6xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %limit = tensor.extract %n[] : tensor<i32>
  %r:2 = scf.while (%i = %c0, %v = %x) : (i32, tensor<4x6xf32>) -> (i32, tensor<4x6xf32>) {
    %go = arith.cmpi slt, %i, %limit : i32
    scf.condition(%go) %i, %v : i32, tensor<4x6xf32>
  } do {
  ^bb0(%i: i32, %v: tensor<4x6xf32>):
    %e = tensor.empty() : tensor<4x6xf32>
    %h = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<4x6xf32>
    %j = arith.addi %i, %c1 : i32
    scf.yield %j, %h : i32, tensor<4x6xf32>
  }
  return %r#1 : tensor<4x6xf32>
}
