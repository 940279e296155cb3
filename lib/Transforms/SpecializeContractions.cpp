//===- SpecializeContractions.cpp - Generic matrix products to matmul -----===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPSPECIALIZECONTRACTIONSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Whether the payload is `out + in0 * in1` (in either order) on floats.
bool isMultiplyAccumulate(linalg::GenericOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2), product = add.getRhs();
  if (add.getLhs() != out)
    std::swap(out, product), out = add.getRhs(), product = add.getLhs();
  if (out != body->getArgument(2))
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  return mul && ((mul.getLhs() == body->getArgument(0) &&
                  mul.getRhs() == body->getArgument(1)) ||
                 (mul.getLhs() == body->getArgument(1) &&
                  mul.getRhs() == body->getArgument(0)));
}

struct SpecializeContraction : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op.getNumLoops() != 3 ||
        !isMultiplyAccumulate(op))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (AffineMap map : maps)
      if (map.getNumResults() != 2 || !map.isProjectedPermutation())
        return failure();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned m = maps[2].getDimPosition(0), n = maps[2].getDimPosition(1);
    unsigned k = 3 - m - n;
    if (iterators[k] != utils::IteratorType::reduction)
      return failure();
    // A holds m and k, B holds k and n.
    int a = maps[0].isFunctionOfDim(m) ? 0 : 1, b = 1 - a;
    auto holds = [&](AffineMap map, unsigned x, unsigned y) {
      return map.isFunctionOfDim(x) && map.isFunctionOfDim(y);
    };
    if (!holds(maps[a], m, k) || !holds(maps[b], k, n))
      return failure();
    Location loc = op.getLoc();
    // The operand laid out as (first, second), transposed when needed.
    auto arrange = [&](int input, unsigned first) -> Value {
      Value value = op.getDpsInputs()[input];
      if (maps[input].getDimPosition(0) == first)
        return value;
      auto type = cast<RankedTensorType>(value.getType());
      Value init = tensor::EmptyOp::create(
          rewriter, loc, {type.getDimSize(1), type.getDimSize(0)},
          type.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, value, init,
                                         ArrayRef<int64_t>{1, 0})
          ->getResult(0);
    };
    Value lhs = arrange(a, m), rhs = arrange(b, k);
    rewriter.replaceOpWithNewOp<linalg::MatmulOp>(
        op, op->getResultTypes(), ValueRange{lhs, rhs},
        ValueRange{op.getDpsInits()[0]});
    return success();
  }
};

struct SbpSpecializeContractionsPass
    : public sbp::impl::SbpSpecializeContractionsPassBase<
          SbpSpecializeContractionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SpecializeContraction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
