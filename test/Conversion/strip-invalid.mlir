// RUN: sbp-opt %s -split-input-file --sbp-strip -verify-diagnostics

sbp.mesh @m shape = [2]
func.func @collective_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.all_reduce' op must be lowered first (sbp-lower-collectives)}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = sum : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

sbp.mesh @m shape = [2]
func.func @axis_index_left() -> index {
  // expected-error @+1 {{'sbp.axis_index' op must be lowered first (sbp-lower-collectives)}}
  %0 = sbp.axis_index @m axis = 0 : index
  return %0 : index
}
