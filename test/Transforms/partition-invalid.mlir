// RUN: sbp-opt %s -split-input-file --sbp-partition -verify-diagnostics

sbp.mesh @m shape = [2]
// expected-error @+1 {{cannot partition argument #0 of dynamic type 'tensor<?x4xf32>': split sizes must be static}}
func.func @dynamic_argument(%x: tensor<?x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @dynamic_boxing(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'sbp.boxing' op cannot be partitioned: the boxed tensor 'tensor<?x4xf32>' has dynamic sizes}}
  %0 = sbp.boxing %x #sbp.nd<@m, [B]> -> #sbp.nd<@m, [S(0)]> : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

sbp.mesh @m shape = [2]
func.func @dynamic_empty(%n: index) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tensor.empty' op cannot be partitioned: it splits dimension 0 of 'tensor<?x4xf32>', whose size is dynamic}}
  %0 = tensor.empty(%n) {sbp.operands = [#sbp.nd<@m, [B]>], sbp.results = [#sbp.nd<@m, [S(0)]>]} : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
