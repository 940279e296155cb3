// RUN: sbp-opt %s -split-input-file --sbp-convert-to-libc-calls | FileCheck %s

// A math op left after convert-math-to-llvm becomes a libm call.
// CHECK: func.func private @erff(f32) -> f32
// CHECK-LABEL: func.func @erf(
// CHECK: %[[R:.*]] = call @erff(%{{.*}}) : (f32) -> f32
// CHECK: return %[[R]]
func.func @erf(%x: f32) -> f32 {
  %y = math.erf %x : f32
  return %y : f32
}

// -----

// An assert becomes a branch to a call of abort; the other ops stay.
// CHECK: llvm.func @abort()
// CHECK-LABEL: func.func @check(
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:[a-z0-9]+]], ^[[FAIL:[a-z0-9]+]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: arith.addf
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @abort()
func.func @check(%c: i1, %x: f32) -> f32 {
  cf.assert %c, "x must be positive"
  %y = arith.addf %x, %x : f32
  return %y : f32
}

// -----

// Without math ops or asserts the module is left as it was: no
// declarations, and the branches are left to sbp-convert-bodies-to-llvm.
// CHECK-LABEL: func.func @no_calls(
// CHECK-NEXT: arith.addf
// CHECK-NEXT: cf.br
// CHECK-NOT: func.func
// CHECK-NOT: llvm.func
func.func @no_calls(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  cf.br ^bb1(%y : f32)
^bb1(%z: f32):
  return %z : f32
}
