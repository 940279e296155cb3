// RUN: sbp-opt %s -split-input-file --sbp-propagate -verify-diagnostics
// RUN: %expect-exit 1 sbp-opt %s -split-input-file --sbp-parallelize 2>&1 | FileCheck %s --check-prefix=EXIT

// EXIT: propagate-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: conflicting annotations of one value
// EXIT: propagate-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: conflicting annotations of one value
// EXIT: propagate-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: mixes meshes
// EXIT: propagate-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'sbp.annotate' op sharding of the annotated value splits dimension 2
// EXIT: propagate-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'sbp.annotate' op sharding of the annotated value names unknown mesh @nowhere

sbp.mesh @m shape = [2]
func.func @conflicting_annotations(%x: tensor<8x4xf32>) {
  // expected-note @+1 {{the other annotation is here}}
  %0 = sbp.annotate %x #sbp.nd<@m, [S(0)]> : tensor<8x4xf32>
  // expected-error @+1 {{conflicting annotations of one value: #sbp.nd<@m, [S(1)]> here and #sbp.nd<@m, [S(0)]>}}
  %1 = sbp.annotate %x #sbp.nd<@m, [S(1)]> : tensor<8x4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @annotation_against_argument(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  // expected-error @+1 {{conflicting annotations of one value: #sbp.nd<@m, [B]> here and #sbp.nd<@m, [S(0)]> on argument #0 of @annotation_against_argument}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B]> : tensor<8x4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
sbp.mesh @n shape = [4]
// expected-note @+1 {{mesh @m is used here}}
func.func @mixed_meshes(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  // expected-error @+1 {{mixes meshes: @n here and @m elsewhere in @mixed_meshes}}
  %0 = sbp.annotate %x #sbp.nd<@n, [S(0)]> : tensor<8x4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @split_out_of_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.annotate' op sharding of the annotated value splits dimension 2 (mesh axis 0) of a rank-2 tensor}}
  %0 = sbp.annotate %x #sbp.nd<@m, [S(2)]> : tensor<8x4xf32>
  return
}

// -----

func.func @unknown_mesh(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.annotate' op sharding of the annotated value names unknown mesh @nowhere}}
  %0 = sbp.annotate %x #sbp.nd<@nowhere, [S(0)]> : tensor<8x4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @recorded_signature_invalid(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // A split of dim 0 on the operand cannot give a split of dim 1.
  // expected-error @+1 {{the recorded signature (sbp.operands, sbp.results) is not one of this op's signatures on mesh @m}}
  %0 = math.exp %x {sbp.operands = [#sbp.nd<@m, [S(0)]>], sbp.results = [#sbp.nd<@m, [S(1)]>]} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
