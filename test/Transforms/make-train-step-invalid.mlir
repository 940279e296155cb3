// RUN: sbp-opt %s --sbp-make-train-step=params=0,1 -split-input-file -verify-diagnostics

// expected-error@+1 {{sbp-make-train-step: @dynamic has the dynamic type 'tensor<?x4xf32>'; a training step needs static shapes}}
func.func @dynamic(%x: tensor<?x4xf32>, %w: tensor<4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error@+1 {{sbp-make-train-step: the function returns nothing to make a loss from}}
func.func @nothing(%x: tensor<4xf32>, %w: tensor<4xf32>) {
  return
}

// -----

// expected-error@+1 {{sbp-make-train-step: the first result is not a float tensor, so no loss can be made from it}}
func.func @integer(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xi32> {
  %i = arith.fptosi %x : tensor<4xf32> to tensor<4xi32>
  return %i : tensor<4xi32>
}

// -----

#id = affine_map<(i) -> (i)>
func.func @sincos(%x: tensor<8xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    // expected-error@+1 {{sbp-make-train-step: no gradient rule for 'math.sincos' in the payload of 'linalg.generic'}}
    %s, %c = math.sincos %a : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A reduction by subtraction: no combiner with a gradient rule.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @difference(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error@+1 {{sbp-make-train-step: no gradient for a reduction that is not a sum, product, max, min or overwrite}}
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%w : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// The padding value depends on the parameters and on the position (a
// constant one takes the sum of the adjoint over the border).
func.func @pad(%x: tensor<8xf32>, %w: tensor<4xf32>) -> tensor<6xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %edge = tensor.extract %w[%c0] : tensor<4xf32>
  // expected-error@+1 {{sbp-make-train-step: no gradient for a padding value computed from the parameters that varies over the border or pads of dynamic size}}
  %p = tensor.pad %w low[1] high[1] {
  ^bb0(%i: index):
    %first = arith.cmpi eq, %i, %c0 : index
    %v = arith.select %first, %edge, %zero : f32
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}

// -----

func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @opaque(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{sbp-make-train-step: cannot differentiate through the call: @external has no body of one block}}
  %r = func.call @external(%w) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func private @again(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{sbp-make-train-step: the call to @again recurses; recursion has no gradient}}
  %r = func.call @again(%w) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @recursive(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @again(%w) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A float scalar that a while loop carries has no adjoint to carry back.
func.func @while_scalar(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %w[%c0] : tensor<4xf32>
  %limit = arith.constant 1.0e+01 : f32
  // expected-error@+1 {{sbp-make-train-step: no gradient for a scalar that the loop carries}}
  %r:2 = scf.while (%v = %s, %h = %x) : (f32, tensor<4xf32>) -> (f32, tensor<4xf32>) {
    %go = arith.cmpf olt, %v, %limit : f32
    scf.condition(%go) %v, %h : f32, tensor<4xf32>
  } do {
  ^bb0(%v: f32, %h: tensor<4xf32>):
    %d = arith.addf %v, %v : f32
    %f = linalg.fill ins(%v : f32) outs(%h : tensor<4xf32>) -> tensor<4xf32>
    %q = arith.mulf %f, %h : tensor<4xf32>
    scf.yield %d, %q : f32, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

func.func @no_rule(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = arith.constant dense<[[1], [2]]> : tensor<2x1xindex>
  %u = tensor.extract_slice %w[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %ue = tensor.expand_shape %u [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  // expected-error@+1 {{sbp-make-train-step: no gradient rule for 'tensor.scatter'}}
  %s = tensor.scatter %ue into %x[%i] scatter_dims([0]) unique : (tensor<2x1xf32>, tensor<4xf32>, tensor<2x1xindex>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
