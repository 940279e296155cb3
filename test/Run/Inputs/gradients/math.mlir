// The less common math ops, on tensors and in a payload; the roundings
// pass no gradient (zero almost everywhere) but must not stop one.
// math.clampf clamps %x3 to [-0.5, %y] (and %b to [-0.25, 0.5]): both
// bounds and the value take gradients.
#id = affine_map<(i, j) -> (i, j)>
func.func @math(%a: tensor<3x5xf64>, %b: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %e = tensor.empty() : tensor<3x5xf64>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<3x5xf64>, tensor<3x5xf64>) outs(%e : tensor<3x5xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %t = math.tan %x : f64
    %at = math.atan %y : f64
    %sh = math.sinh %x : f64
    %ch = math.cosh %y : f64
    %e2 = math.exp2 %t : f64
    %em = math.expm1 %at : f64
    %l2 = math.log2 %ch : f64
    %sq = arith.mulf %sh, %sh : f64
    %one = arith.constant 1.0 : f64
    %pos = arith.addf %sq, %one : f64
    %l10 = math.log10 %pos : f64
    %ec = math.erfc %x : f64
    %cb = math.cbrt %pos : f64
    %f = math.fma %e2, %em, %l2 : f64
    %fl = math.floor %y : f64
    %u = math.tanh %x : f64
    %nine = arith.constant 0.9 : f64
    %v = arith.mulf %u, %nine : f64
    %as = math.asin %v : f64
    %ac = math.acos %v : f64
    %ath = math.atanh %v : f64
    %ash = math.asinh %y : f64
    %half = arith.constant 0.5 : f64
    %above = arith.addf %pos, %half : f64
    %ach = math.acosh %above : f64
    %i1 = arith.mulf %as, %ac : f64
    %i2 = arith.addf %ath, %ash : f64
    %i3 = arith.mulf %i2, %ach : f64
    %i4 = arith.addf %i1, %i3 : f64
    %g0 = arith.addf %f, %l10 : f64
    %g = arith.addf %g0, %i4 : f64
    %h = arith.addf %g, %ec : f64
    %k = arith.mulf %h, %cb : f64
    %r = arith.addf %k, %fl : f64
    %a2 = math.atan2 %x, %y : f64
    %three = arith.constant 3.0 : f64
    %x3 = arith.mulf %x, %three : f64
    %two = arith.constant 2.0 : f64
    %y2 = arith.addf %sq, %two : f64
    %rm = arith.remf %x3, %y2 : f64
    %cs = math.copysign %x3, %y : f64
    %lo = arith.constant -0.5 : f64
    %cl = math.clampf %x3 to [%lo, %y] : f64
    %n = arith.constant 3 : i32
    %pw = math.fpowi %y2, %n : f64, i32
    %m0 = arith.addf %a2, %rm : f64
    %m1 = arith.mulf %m0, %cs : f64
    %m2 = arith.addf %m1, %cl : f64
    %m3 = arith.addf %m2, %pw : f64
    %sg = math.copysign %one, %x : f64
    %m4 = arith.mulf %m3, %sg : f64
    %out = arith.addf %r, %m4 : f64
    linalg.yield %out : f64
  } -> tensor<3x5xf64>
  %lo = arith.constant dense<-0.25> : tensor<3x5xf64>
  %hi = arith.constant dense<0.5> : tensor<3x5xf64>
  %cl = math.clampf %b to [%lo, %hi] : tensor<3x5xf64>
  %pc = arith.addf %p, %cl : tensor<3x5xf64>
  %q = math.atan %pc : tensor<3x5xf64>
  %c = math.ceil %q : tensor<3x5xf64>
  %s = arith.addf %q, %c : tensor<3x5xf64>
  return %s : tensor<3x5xf64>
}
