//===- ConvertToLibcCalls.cpp - C library calls for the ops that need them ===//
//
// Math ops that LLVM has no intrinsic for become libm calls and cf.assert a
// call of abort, by upstream's conversions; those run here only when such an
// op is present, since each converts the whole module to find out.
//
//===----------------------------------------------------------------------===//

#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/PassManager.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPCONVERTTOLIBCCALLSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

struct SbpConvertToLibcCallsPass
    : public sbp::impl::SbpConvertToLibcCallsPassBase<
          SbpConvertToLibcCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool hasMath = false, hasAssert = false;
    module.walk([&](Operation *op) {
      hasMath |= isa<math::MathDialect>(op->getDialect());
      hasAssert |= isa<cf::AssertOp>(op);
      return hasMath && hasAssert ? WalkResult::interrupt()
                                  : WalkResult::advance();
    });
    OpPassManager calls(ModuleOp::getOperationName());
    if (hasMath)
      calls.addPass(createConvertMathToLibmPass());
    if (hasAssert)
      calls.addPass(createConvertControlFlowToLLVMPass());
    if (calls.size() != 0 && failed(runPipeline(calls, module)))
      signalPassFailure();
  }
};

} // namespace
