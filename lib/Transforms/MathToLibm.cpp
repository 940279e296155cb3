//===- MathToLibm.cpp - libm calls for the math ops LLVM cannot lower -----===//

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/PassManager.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPMATHTOLIBMPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

struct SbpMathToLibmPass
    : public sbp::impl::SbpMathToLibmPassBase<SbpMathToLibmPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool hasMath = module
                       .walk([](Operation *op) {
                         return isa<math::MathDialect>(op->getDialect())
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
    if (!hasMath)
      return;
    OpPassManager libm(ModuleOp::getOperationName());
    libm.addPass(createConvertMathToLibmPass());
    if (failed(runPipeline(libm, module)))
      signalPassFailure();
  }
};

} // namespace
