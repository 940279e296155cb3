//===- DecomposeAggregates.cpp - Aggregated linalg ops to generics --------===//
//
// linalg.softmax and the other ops of `linalg::AggregatedOpInterface` keep
// their identity through the search (one SBP rule, one gradient rule, one
// op in the cost model); neither lowering has loops for them, so each rank's
// program decomposes them into the structured ops they stand for.
// math.clampf is an aggregate of a minimum and a maximum: MLIR 22's own
// expansion computes `maximumf(minimumf(value, min), max)`, its documented
// formula (the maximum whenever min < max); upstream has since defined the
// op as a clamp (`maximumf(minimumf(value, max), min)`, as CUDA and SPIR-V
// do), which is what is built here.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPDECOMPOSEAGGREGATESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

struct SbpDecomposeAggregatesPass
    : public sbp::impl::SbpDecomposeAggregatesPassBase<
          SbpDecomposeAggregatesPass> {
  using Base::Base;

  void runOnOperation() override {
    // A decomposition may itself hold aggregated ops: repeat until none is
    // left.
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    do {
      aggregates.clear();
      getOperation().walk(
          [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
      for (linalg::AggregatedOpInterface op : aggregates) {
        if (op->getNumResults() == 0 ||
            !llvm::all_of(op->getResultTypes(), llvm::IsaPred<TensorType>)) {
          op->emitOpError("cannot be decomposed: sbp decomposes aggregated "
                          "ops on tensors only");
          return signalPassFailure();
        }
        OpBuilder builder(op);
        FailureOr<SmallVector<Value>> results = op.decomposeOperation(builder);
        if (failed(results)) {
          op->emitOpError("cannot be decomposed into structured ops");
          return signalPassFailure();
        }
        op->replaceAllUsesWith(*results);
        op->erase();
      }
    } while (!aggregates.empty());

    getOperation().walk([](math::ClampFOp op) {
      OpBuilder builder(op);
      Value below = arith::MinimumFOp::create(
          builder, op.getLoc(), op.getValue(), op.getMax(), op.getFastmath());
      op.replaceAllUsesWith(arith::MaximumFOp::create(builder, op.getLoc(),
                                                      below, op.getMin(),
                                                      op.getFastmath())
                                .getResult());
      op.erase();
    });
  }
};

} // namespace
