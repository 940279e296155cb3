//===- Signatures.h - SBP signature rules for upstream ops ------*- C++ -*-===//
//
// External models of SbpSignatureOpInterface for upstream dialects, and the
// helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_EXTENSIONS_SIGNATURES_H
#define SBP_DIALECT_SBP_EXTENSIONS_SIGNATURES_H

#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"

namespace mlir {
class DialectRegistry;
namespace sbp {

/// Attaches signature rules to linalg structured ops, arith and math
/// element-wise ops, arith.constant, tensor and func ops.
void registerSignatureExternalModels(DialectRegistry &registry);

void registerLinalgSignatureModels(DialectRegistry &registry);
void registerArithSignatureModels(DialectRegistry &registry);
void registerTensorSignatureModels(DialectRegistry &registry);
void registerFuncSignatureModels(DialectRegistry &registry);

/// A signature giving `entry` to every tensor operand and result of `op`
/// and `B` to every other operand.
SbpSignature getUniformSignature(Operation *op, SbpEntry entry);

/// Signatures of an op whose one tensor result is the same on every device
/// (a constant, an uninitialized tensor): replicated, split along any
/// static dimension by local slicing, and a valid max/min partial as identical
/// copies; a valid sum partial too when `zeros`.
SmallVector<SbpSignature> getSourceSignatures(Operation *op, bool zeros);

/// Appends `signature` to `signatures` unless it is already there.
void addSignature(SmallVectorImpl<SbpSignature> &signatures,
                  SbpSignature signature);

/// How an element-wise scalar op distributes over a partial operand: a
/// reduction kind per operand (`std::nullopt` for `B`) and the kind of the
/// result. `a + b` gives `{sum, sum} -> sum`, `a * b` gives `{sum, B} -> sum`
/// and `{B, sum} -> sum`, `max(a, b)` gives `{max, max} -> max`, ...
struct PartialRule {
  SmallVector<std::optional<ReductionKind>> operands;
  ReductionKind result;
};
/// The partial rules of the scalar (or element-wise) op `op`; none for ops
/// that are not linear or monotone in any operand.
SmallVector<PartialRule> getPartialRules(Operation *op);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_EXTENSIONS_SIGNATURES_H
