// Element-wise arith and math ops, on tensors and in a payload.
#id = affine_map<(i, j) -> (i, j)>
func.func @elementwise(%a: tensor<3x5xf64>, %b: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %two = arith.constant 2.0 : f64
  %e = tensor.empty() : tensor<3x5xf64>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<3x5xf64>, tensor<3x5xf64>) outs(%e : tensor<3x5xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %sq = arith.mulf %y, %y : f64
    %pos = arith.addf %sq, %two : f64
    %l = math.log %pos : f64
    %r = math.sqrt %pos : f64
    %w = math.powf %pos, %x : f64
    %ab = math.absf %x : f64
    %l1 = math.log1p %ab : f64
    %s = math.sin %x : f64
    %c = math.cos %y : f64
    %mx = arith.maximumf %s, %c : f64
    %mn = arith.minimumf %l, %r : f64
    %gt = arith.cmpf ogt, %x, %y : f64
    %sel = arith.select %gt, %mx, %mn : f64
    %n = arith.negf %sel : f64
    %d = arith.divf %w, %r : f64
    %t = arith.subf %d, %n : f64
    %u = arith.addf %t, %l1 : f64
    %ex = math.exp %u : f64
    linalg.yield %ex : f64
  } -> tensor<3x5xf64>
  %q = arith.mulf %p, %a : tensor<3x5xf64>
  %th = math.tanh %q : tensor<3x5xf64>
  %z = arith.divf %th, %p : tensor<3x5xf64>
  %m = arith.subf %z, %b : tensor<3x5xf64>
  return %m : tensor<3x5xf64>
}
