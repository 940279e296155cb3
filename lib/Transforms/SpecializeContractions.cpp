//===- SpecializeContractions.cpp - Generic matrix products to matmul -----===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Dialect/Sbp/Utils/MatrixProduct.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPSPECIALIZECONTRACTIONSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// `value` with its dimensions reordered so that dimension `i` is the one
/// `map` indexes by `loops[i]`; `value` itself when they are in order.
Value arrange(PatternRewriter &rewriter, Location loc, Value value,
              AffineMap map, ArrayRef<unsigned> loops) {
  SmallVector<int64_t> permutation;
  for (unsigned loop : loops)
    permutation.push_back(*map.getResultPosition(
        getAffineDimExpr(loop, rewriter.getContext())));
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, value, init, permutation)
      ->getResult(0);
}

/// `value` with its leading `count` dimensions merged into one, or split
/// back into those of `like` (`expand`).
Value mergeBatch(PatternRewriter &rewriter, Location loc, Value value,
                 size_t count, RankedTensorType like, bool expand) {
  if (count == 1)
    return value;
  SmallVector<ReassociationIndices> groups(1);
  for (size_t dim = 0; dim < count; ++dim)
    groups[0].push_back(dim);
  groups.push_back({int64_t(count)});
  groups.push_back({int64_t(count) + 1});
  if (expand)
    return tensor::ExpandShapeOp::create(rewriter, loc, like, value, groups);
  return tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
}

struct SpecializeContraction : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<sbp::MatrixProductLoops> loops = sbp::matchMatrixProduct(op);
    if (!loops)
      return failure();
    Location loc = op.getLoc();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto order = [&](unsigned first, unsigned second) {
      SmallVector<unsigned> all(loops->batch);
      all.append({first, second});
      return all;
    };
    SmallVector<unsigned> outLoops = order(loops->m, loops->n);
    unsigned lhs = loops->lhs;
    Value a = arrange(rewriter, loc, op.getDpsInputs()[lhs], maps[lhs],
                      order(loops->m, loops->k));
    Value b = arrange(rewriter, loc, op.getDpsInputs()[1 - lhs],
                      maps[1 - lhs], order(loops->k, loops->n));
    Value c =
        arrange(rewriter, loc, op.getDpsInits()[0], maps[2], outLoops);
    Value product;
    if (loops->batch.empty()) {
      product = linalg::MatmulOp::create(rewriter, loc, c.getType(),
                                         ValueRange{a, b}, ValueRange{c})
                    ->getResult(0);
    } else {
      size_t count = loops->batch.size();
      auto cType = cast<RankedTensorType>(c.getType());
      Value init = mergeBatch(rewriter, loc, c, count, cType, false);
      product = linalg::BatchMatmulOp::create(
                    rewriter, loc, init.getType(),
                    ValueRange{mergeBatch(rewriter, loc, a, count, {}, false),
                               mergeBatch(rewriter, loc, b, count, {}, false)},
                    ValueRange{init})
                    ->getResult(0);
      product = mergeBatch(rewriter, loc, product, count, cType, true);
    }
    // Back to the output's own order of dimensions: its map read as a
    // permutation of `outLoops`.
    SmallVector<unsigned> resultLoops;
    for (AffineExpr expr : maps[2].getResults())
      resultLoops.push_back(cast<AffineDimExpr>(expr).getPosition());
    AffineMap arranged = AffineMap::get(
        op.getNumLoops(), 0,
        llvm::map_to_vector(outLoops,
                            [&](unsigned loop) -> AffineExpr {
                              return rewriter.getAffineDimExpr(loop);
                            }),
        rewriter.getContext());
    rewriter.replaceOp(
        op, arrange(rewriter, loc, product, arranged, resultLoops));
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
