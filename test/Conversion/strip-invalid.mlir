// RUN: sbp-opt %s -split-input-file --sbp-strip -verify-diagnostics

sbp.mesh @m shape = [2]
func.func @collective_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.all_reduce' op has no lowering to LLVM yet; run the program on one rank, without collectives}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = sum : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

sbp.mesh @m shape = [2]
func.func @annotation_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.annotate' op has no lowering to LLVM yet}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
