// RUN: sbp-opt %s -split-input-file --sbp-lower-collectives -verify-diagnostics

sbp.mesh @m shape = [2]
func.func @short_integers(%x: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error @+1 {{'sbp.all_reduce' op has element type 'i16'; the runtime moves f32, f64, f16, bf16, i32, i64, i8 and i1}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = sum : tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

sbp.mesh @m shape = [1, 1, 1, 1, 1, 1, 1, 1, 2]
func.func @nine_axes(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.all_reduce' op uses 9 mesh axes; the runtime takes at most 8}}
  %0 = sbp.all_reduce %x on @m axes = [0, 1, 2, 3, 4, 5, 6, 7, 8] reduction = sum : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

sbp.mesh @m shape = [2]
func.func @dynamic_recv() -> tensor<?xf32> {
  // expected-error @+1 {{'sbp.recv' op has a dynamic result size; received tensors need static shapes}}
  %0 = sbp.recv on @m axes = [0] peer = 0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
