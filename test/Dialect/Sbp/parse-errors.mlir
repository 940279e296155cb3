// Malformed input gives a located error, never a crash.
// RUN: sbp-opt %s -split-input-file -verify-diagnostics

sbp.mesh @m shape = [2]
func.func @unknown_entry(%x: tensor<8xf32>) {
  // expected-error @+1 {{unknown SBP entry 'Q'; expected S(<dim>), B, P, P(sum), P(max) or P(min)}}
  %0 = sbp.annotate %x #sbp.nd<@m, [Q(1)]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @negative_split(%x: tensor<8xf32>) {
  // expected-error @+1 {{split dimension must be non-negative}}
  %0 = sbp.annotate %x #sbp.nd<@m, [S(-1)]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 2]
func.func @mixed_partial_kinds(%x: tensor<8xf32>) {
  // expected-error @+1 {{partial entries of one nd-SBP must use one reduction kind}}
  %0 = sbp.annotate %x #sbp.nd<@m, [P(sum), P(max)]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @unknown_partial_kind(%x: tensor<8xf32>) {
  // expected-error @+1 {{unknown reduction kind 'avg'; expected sum, max or min}}
  %0 = sbp.annotate %x #sbp.nd<@m, [P(avg)]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @no_entries(%x: tensor<8xf32>) {
  // expected-error @+1 {{nd-SBP needs at least one entry}}
  %0 = sbp.annotate %x #sbp.nd<@m, []> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @missing_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{expected attribute value}}
  %0 = sbp.annotate %x #sbp.nd<[B]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @unterminated_entries(%x: tensor<8xf32>) {
  // expected-error @+1 {{expected ']' in nd-SBP entry list}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
// expected-error @+1 {{unbalanced '<' character in pretty dialect name}}
func.func @unterminated_attribute(%x: tensor<8xf32> {sbp.sharding = #sbp.nd<@m, [B]}) {
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @annotate_scalar(%x: f32) {
  // expected-error @+1 {{custom op 'sbp.annotate' invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B]> : f32
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @collective_on_memref(%x: memref<8xf32>) {
  // expected-error @+1 {{custom op 'sbp.all_reduce' invalid kind of type specified: expected builtin.tensor, but found 'memref<8xf32>'}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = sum : memref<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @operand_type_mismatch(%x: tensor<8xf32>) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%x' expects different type than prior uses: 'tensor<4xf32>' vs 'tensor<8xf32>'}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B]> : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{expected '='}}
sbp.mesh @m shape [2]

// -----

// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{expected ']'}}
sbp.mesh @m shape = [2, x]
