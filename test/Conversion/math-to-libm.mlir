// RUN: sbp-opt %s -split-input-file --sbp-math-to-libm | FileCheck %s

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

// Without math ops the module is left as it was: no declarations.
// CHECK-LABEL: func.func @no_math(
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
// CHECK-NOT: func.func
func.func @no_math(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
