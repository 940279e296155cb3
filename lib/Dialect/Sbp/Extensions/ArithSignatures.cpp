//===- ArithSignatures.cpp - SBP rules for arith and math ops -------------===//
//
// Element-wise ops on tensors may split any dimension (all operands have the
// result's shape) and take partial operands where the op is linear or
// monotone. Constants may be split locally and are valid max/min partials.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "sbp/Dialect/Sbp/Extensions/Signatures.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Element-wise ops (arith and math ops with the Elementwise trait). Ops on
/// scalars, and ops without the trait, are replicated.
template <typename OpTy>
struct ElementwiseSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<
          ElementwiseSignatureModel<OpTy>, OpTy> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    SmallVector<SbpSignature> signatures;
    signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() == 0)
      return signatures;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type)
      return signatures;
    for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
      addSignature(signatures, getUniformSignature(op, SbpEntry::split(dim)));
    for (const PartialRule &rule : getPartialRules(op)) {
      SbpSignature signature;
      for (const std::optional<ReductionKind> &kind : rule.operands)
        signature.operands.push_back(kind ? SbpEntry::partial(*kind)
                                          : SbpEntry::broadcast());
      signature.results.assign(op->getNumResults(),
                               SbpEntry::partial(rule.result));
      addSignature(signatures, std::move(signature));
    }
    return signatures;
  }
};

/// Tensor constants: every rank can slice its piece locally, and identical
/// copies are valid max/min partials (zeros also a valid sum partial).
struct ConstantSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<ConstantSignatureModel,
                                                    arith::ConstantOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    Value result = op->getResult(0);
    return getSourceSignatures(op, matchPattern(result, m_AnyZeroFloat()) ||
                                       matchPattern(result, m_Zero()));
  }
};

template <typename OpTy> void attachOne(MLIRContext *ctx) {
  if constexpr (std::is_same_v<OpTy, arith::ConstantOp>)
    OpTy::template attachInterface<ConstantSignatureModel>(*ctx);
  else
    OpTy::template attachInterface<ElementwiseSignatureModel<OpTy>>(*ctx);
}

template <typename... OpTys> void attachElementwise(MLIRContext *ctx) {
  (attachOne<OpTys>(ctx), ...);
}

} // namespace

void sbp::registerArithSignatureModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
        >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwise<
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
        >(ctx);
  });
}
