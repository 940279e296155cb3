//===- FuncSignatures.cpp - SBP rules for func ops ------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "sbp/Dialect/Sbp/Extensions/Signatures.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// func.return hands its operands to the caller as they are. The function's
/// `sbp.sharding` result attributes are constraints on those operands, like
/// `sbp.annotate`, not part of the op's algebra.
struct ReturnSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<ReturnSignatureModel,
                                                    func::ReturnOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    SbpSignature free;
    free.operands.assign(op->getNumOperands(), std::nullopt);
    return {free};
  }
};

/// func.call runs the callee on whole tensors unless the callee says how its
/// arguments and results are distributed with `sbp.sharding`.
struct CallSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<CallSignatureModel,
                                                    func::CallOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    return {getUniformSignature(op, SbpEntry::broadcast())};
  }

  SmallVector<NdSbpSignature> getNdSbpSignatures(Operation *op,
                                                 MeshOp mesh) const {
    auto call = cast<func::CallOp>(op);
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, call.getCalleeAttr());
    auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
    NdSbpAttr replicated = getReplicated(mesh);
    // An annotation on another mesh cannot be honoured on this one.
    bool onOtherMesh = false;
    auto shardingOf = [&](DictionaryAttr attrs) {
      auto sharding =
          attrs ? attrs.getAs<NdSbpAttr>(SbpDialect::getShardingAttrName())
                : NdSbpAttr();
      if (!sharding)
        return replicated;
      if (sharding.getMesh() != meshRef)
        onOtherMesh = true;
      return sharding;
    };
    NdSbpSignature signature;
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      signature.operands.push_back(callee ? shardingOf(callee.getArgAttrDict(i))
                                          : replicated);
    for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
      signature.results.push_back(
          callee ? shardingOf(callee.getResultAttrDict(i)) : replicated);
    if (onOtherMesh)
      return {};
    return {signature};
  }
};

} // namespace

void sbp::registerFuncSignatureModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, func::FuncDialect *) {
    func::ReturnOp::attachInterface<ReturnSignatureModel>(*ctx);
    func::CallOp::attachInterface<CallSignatureModel>(*ctx);
  });
}
