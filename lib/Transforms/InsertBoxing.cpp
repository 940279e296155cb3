//===- InsertBoxing.cpp - Insert sbp.boxing between layouts ---------------===//

#include "mlir/IR/Builders.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/ShardingState.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPINSERTBOXINGPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

struct SbpInsertBoxingPass
    : public sbp::impl::SbpInsertBoxingPassBase<SbpInsertBoxingPass> {
  using Base::Base;

  void runOnOperation() override {
    // Collect first: inserting boxings adds uses.
    SmallVector<std::pair<OpOperand *, NdSbpAttr>> mismatches;
    getOperation().walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        if (!isa<RankedTensorType>(use.get().getType()))
          continue;
        NdSbpAttr needed = getUseSharding(use);
        NdSbpAttr have = getValueSharding(use.get());
        if (needed && have && needed != have)
          mismatches.emplace_back(&use, needed);
      }
    });

    DenseMap<std::pair<Value, Attribute>, Value> boxed;
    OpBuilder builder(&getContext());
    for (auto [use, needed] : mismatches) {
      Value value = use->get();
      Value &result = boxed[{value, needed}];
      if (!result) {
        if (Operation *def = value.getDefiningOp())
          builder.setInsertionPointAfter(def);
        else
          builder.setInsertionPointToStart(
              cast<BlockArgument>(value).getOwner());
        result = BoxingOp::create(builder, value.getLoc(), value,
                                  getValueSharding(value), needed);
      }
      use->set(result);
    }
  }
};

} // namespace
