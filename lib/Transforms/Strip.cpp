//===- Strip.cpp - Remove meshes and layout attributes --------------------===//

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPSTRIPPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

struct SbpStripPass : public sbp::impl::SbpStripPassBase<SbpStripPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult remaining = module.walk([](Operation *op) {
      if (isa<AnnotateOp, BoxingOp>(op)) {
        op->getResult(0).replaceAllUsesWith(op->getOperand(0));
        op->erase();
        return WalkResult::skip();
      }
      if (isa<SbpDialect>(op->getDialect()) && !isa<MeshOp>(op)) {
        op->emitOpError() << "must be lowered first (sbp-lower-collectives)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (remaining.wasInterrupted())
      return signalPassFailure();

    module->removeAttr(SbpDialect::getPartitionedAttrName());
    module->removeAttr(SbpDialect::getPipelineAttrName());
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
    StringRef sharding = SbpDialect::getShardingAttrName();
    module.walk([&](Operation *op) {
      op->removeAttr(SbpDialect::getOperandShardingsAttrName());
      op->removeAttr(SbpDialect::getResultShardingsAttrName());
      op->removeAttr(SbpDialect::getStageAttrName());
      op->removeAttr(SbpDialect::getTrainStepAttrName());
      op->removeAttr(SbpDialect::getStopGradientAttrName());
      auto func = dyn_cast<FunctionOpInterface>(op);
      if (!func)
        return;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        func.removeArgAttr(i, sharding);
        func.removeArgAttr(i, SbpDialect::getSourceAttrName());
        func.removeArgAttr(i, SbpDialect::getNameAttrName());
      }
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        func.removeResultAttr(i, StringAttr::get(op->getContext(), sharding));
    });
  }
};

} // namespace
