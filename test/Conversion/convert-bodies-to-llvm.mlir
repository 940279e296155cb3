// RUN: sbp-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(sbp-convert-bodies-to-llvm))' \
// RUN:   | FileCheck %s

// Vector ops without an LLVM counterpart are rewritten first (a broadcast
// into an array of 1-d vectors), then everything converts in one go, and
// extracts of inserted values fold: the broadcast is gone. The signature
// and the return are left to convert-func-to-llvm.
// CHECK-LABEL: func.func @vectors(
// CHECK-SAME: %[[A:.*]]: vector<2x4xf32>, %[[B:.*]]: vector<4xf32>
// CHECK: %[[AA:.*]] = builtin.unrealized_conversion_cast %[[A]] : vector<2x4xf32> to !llvm.array<2 x vector<4xf32>>
// CHECK-NOT: llvm.insertvalue %[[B]]
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[AA]][0]
// CHECK: %[[R0:.*]] = llvm.fadd %[[A0]], %[[B]] : vector<4xf32>
// CHECK: %[[I0:.*]] = llvm.insertvalue %[[R0]], %{{.*}}[0]
// CHECK: %[[A1:.*]] = llvm.extractvalue %[[AA]][1]
// CHECK: %[[R1:.*]] = llvm.fadd %[[A1]], %[[B]] : vector<4xf32>
// CHECK: %[[I1:.*]] = llvm.insertvalue %[[R1]], %[[I0]][1]
// CHECK: %[[R:.*]] = builtin.unrealized_conversion_cast %[[I1]]
// CHECK: return %[[R]]
func.func @vectors(%a: vector<2x4xf32>, %b: vector<4xf32>) -> vector<2x4xf32> {
  %s = vector.broadcast %b : vector<4xf32> to vector<2x4xf32>
  %u = arith.addf %a, %s : vector<2x4xf32>
  return %u : vector<2x4xf32>
}

// -----

// Ceil divisions expand into divisions LLVM has.
// CHECK-LABEL: func.func @ceildiv(
// CHECK-NOT: arith.
// CHECK: llvm.udiv
// CHECK-NOT: arith.
func.func @ceildiv(%a: index, %b: index) -> index {
  %c = arith.ceildivui %a, %b : index
  return %c : index
}

// -----

// Index, arith, ub and cf ops, block arguments included, in one conversion.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %[[N:.*]]: index, %[[X:.*]]: f32
// CHECK: %[[NI:.*]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
// CHECK: %[[P:.*]] = llvm.mlir.poison : f32
// CHECK: %[[C0:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK: %[[C1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.br ^[[HEAD:.*]](%[[C0]], %[[P]] : i64, f32)
// CHECK: ^[[HEAD]](%[[I:.*]]: i64, %[[ACC:.*]]: f32):
// CHECK: %[[DONE:.*]] = llvm.icmp "sge" %[[I]], %[[NI]] : i64
// CHECK: llvm.cond_br %[[DONE]], ^[[EXIT:.*]], ^[[BODY:[a-z0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK: %[[NEXT:.*]] = llvm.fadd %[[ACC]], %[[X]] : f32
// CHECK: %[[J:.*]] = llvm.add %[[I]], %[[C1]] : i64
// CHECK: llvm.br ^[[HEAD]](%[[J]], %[[NEXT]] : i64, f32)
// CHECK: ^[[EXIT]]:
// CHECK: %[[R:.*]] = llvm.intr.maximum(%[[ACC]], %[[X]]) : (f32, f32) -> f32
// CHECK: return %[[R]]
func.func @loop(%n: index, %x: f32) -> f32 {
  %p = ub.poison : f32
  %c0 = arith.constant 0 : index
  %c1 = index.constant 1
  cf.br ^bb1(%c0, %p : index, f32)
^bb1(%i: index, %acc: f32):
  %done = arith.cmpi sge, %i, %n : index
  cf.cond_br %done, ^bb2, ^bb3
^bb3:
  %next = arith.addf %acc, %x : f32
  %j = index.add %i, %c1
  cf.br ^bb1(%j, %next : index, f32)
^bb2:
  %m = arith.maximumf %acc, %x : f32
  return %m : f32
}

// -----

// Asserts and math ops are left for the passes that may declare functions
// in the module (sbp-convert-to-libc-calls); what uses them converts.
// CHECK-LABEL: func.func @left_alone(
// CHECK: cf.assert %{{.*}}, "checked"
// CHECK: %[[E:.*]] = math.erf
// CHECK: llvm.fadd %[[E]], %{{.*}} : f32
func.func @left_alone(%c: i1, %x: f32) -> f32 {
  cf.assert %c, "checked"
  %e = math.erf %x : f32
  %y = arith.addf %e, %x : f32
  return %y : f32
}
