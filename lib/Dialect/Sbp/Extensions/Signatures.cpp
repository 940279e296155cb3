//===- Signatures.cpp - Helpers shared by the signature rules -------------===//

#include "sbp/Dialect/Sbp/Extensions/Signatures.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp;

void sbp::registerSignatureExternalModels(DialectRegistry &registry) {
  registerLinalgSignatureModels(registry);
  registerArithSignatureModels(registry);
  registerTensorSignatureModels(registry);
  registerFuncSignatureModels(registry);
}

SbpSignature sbp::getUniformSignature(Operation *op, SbpEntry entry) {
  SbpSignature signature;
  for (Type type : op->getOperandTypes())
    signature.operands.push_back(
        isa<RankedTensorType>(type) ? entry : SbpEntry::broadcast());
  for (Type type : op->getResultTypes())
    signature.results.push_back(
        isa<RankedTensorType>(type) ? entry : SbpEntry::broadcast());
  return signature;
}

SmallVector<SbpSignature> sbp::getSourceSignatures(Operation *op, bool zeros) {
  SmallVector<SbpSignature> signatures;
  signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return signatures;
  // A dynamic size comes from an operand holding the global size, which a
  // device cannot split locally.
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
    if (!type.isDynamicDim(dim))
      signatures.push_back(getUniformSignature(op, SbpEntry::split(dim)));
  if (zeros)
    signatures.push_back(
        getUniformSignature(op, SbpEntry::partial(ReductionKind::Sum)));
  signatures.push_back(
      getUniformSignature(op, SbpEntry::partial(ReductionKind::Max)));
  signatures.push_back(
      getUniformSignature(op, SbpEntry::partial(ReductionKind::Min)));
  return signatures;
}

void sbp::addSignature(SmallVectorImpl<SbpSignature> &signatures,
                       SbpSignature signature) {
  if (!llvm::is_contained(signatures, signature))
    signatures.push_back(std::move(signature));
}

namespace {
using Kind = ReductionKind;
constexpr std::nullopt_t B = std::nullopt;

/// `op(P, P, ...) -> P`: ops that commute with the reduction in every operand
/// at once (sums for linear ops; max/min for max/min themselves).
SmallVector<PartialRule> allOperands(Operation *op, Kind kind) {
  return {PartialRule{
      SmallVector<std::optional<Kind>>(op->getNumOperands(), kind), kind}};
}

/// `op(..., P, ...) -> P` with every other operand `B`, for each operand:
/// ops that are linear in each operand separately (products) or monotone
/// (max/min with a fixed other operand).
SmallVector<PartialRule> eachOperand(Operation *op, Kind kind,
                                     unsigned numLinear) {
  SmallVector<PartialRule> rules;
  for (unsigned i = 0; i < numLinear; ++i) {
    PartialRule rule{SmallVector<std::optional<Kind>>(op->getNumOperands(), B),
                     kind};
    rule.operands[i] = kind;
    rules.push_back(std::move(rule));
  }
  return rules;
}

SmallVector<PartialRule> maxMin(Operation *op, Kind kind) {
  SmallVector<PartialRule> rules = allOperands(op, kind);
  llvm::append_range(rules, eachOperand(op, kind, op->getNumOperands()));
  return rules;
}
} // namespace

SmallVector<PartialRule> sbp::getPartialRules(Operation *op) {
  using namespace arith;
  return llvm::TypeSwitch<Operation *, SmallVector<PartialRule>>(op)
      .Case<AddFOp, AddIOp, SubFOp, SubIOp, NegFOp>(
          [](Operation *op) { return allOperands(op, Kind::Sum); })
      .Case<MulFOp, MulIOp>(
          [](Operation *op) { return eachOperand(op, Kind::Sum, 2); })
      // Only the dividend: a / (b1 + b2) is not a / b1 + a / b2. Integer
      // division truncates and is not linear at all.
      .Case<DivFOp>([](Operation *op) { return eachOperand(op, Kind::Sum, 1); })
      // Float casts round each piece as addition rounds each partial sum,
      // and keep order: a gradient summed in bf16 over the data axis can be
      // widened to its f32 master weight's type before its one reduction.
      .Case<ExtFOp, TruncFOp>([](Operation *op) {
        SmallVector<PartialRule> rules = allOperands(op, Kind::Sum);
        llvm::append_range(rules, allOperands(op, Kind::Max));
        llvm::append_range(rules, allOperands(op, Kind::Min));
        return rules;
      })
      .Case<MaximumFOp, MaxNumFOp, MaxSIOp, MaxUIOp>(
          [](Operation *op) { return maxMin(op, Kind::Max); })
      .Case<MinimumFOp, MinNumFOp, MinSIOp, MinUIOp>(
          [](Operation *op) { return maxMin(op, Kind::Min); })
      .Default([](Operation *) { return SmallVector<PartialRule>(); });
}
