// sbp-opt exits with 1, not a crash, on malformed input.
// RUN: %expect-exit 1 sbp-opt %s 2>&1 | FileCheck %s
// RUN: %expect-exit 1 sbp-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: exit-codes.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: custom op {{.*}}unknown SBP entry 'Q'
// MISSING: sbp-opt: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
sbp.mesh @m shape = [2]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sbp.annotate %x #sbp.nd<@m, [Q(1)]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
