//===- FuseElementwise.cpp - Element-wise fusion without recomputation ----===//

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPFUSEELEMENTWISEPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Named structured ops (matmul, fill, transpose) stay as they are.
bool isNamedStructuredOp(Operation *op) {
  return isa_and_nonnull<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op);
}

bool shouldFuse(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  Operation *consumer = fusedOperand->getOwner();
  if (!producer || !producer->hasOneUse() || isNamedStructuredOp(producer) ||
      isNamedStructuredOp(consumer))
    return false;
  // A consumer that reads the producer through a projection (a broadcast)
  // would recompute each of its elements once per missing loop.
  if (auto generic = dyn_cast<linalg::GenericOp>(consumer);
      generic && isa<linalg::GenericOp>(producer))
    return generic.getMatchingIndexingMap(fusedOperand).isPermutation();
  return true;
}

struct SbpFuseElementwisePass
    : public sbp::impl::SbpFuseElementwisePassBase<SbpFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    linalg::populateConstantFoldLinalgOperations(patterns, shouldFuse);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
