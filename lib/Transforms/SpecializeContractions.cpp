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

/// The loop each dimension of an operand indexed by `map` is read by.
SmallVector<unsigned> getLoops(AffineMap map) {
  return llvm::map_to_vector(map.getResults(), [](AffineExpr expr) {
    return cast<AffineDimExpr>(expr).getPosition();
  });
}

/// `value`, whose dimension `i` is read by loop `have[i]`, transposed so
/// that dimension `i` is the one read by `want[i]`; itself when in order.
Value arrange(PatternRewriter &rewriter, Location loc, Value value,
              ArrayRef<unsigned> have, ArrayRef<unsigned> want) {
  if (have == want)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> permutation, shape;
  for (unsigned loop : want) {
    permutation.push_back(llvm::find(have, loop) - have.begin());
    shape.push_back(type.getDimSize(permutation.back()));
  }
  Value init =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, value, init, permutation)
      ->getResult(0);
}

/// How the `count` leading batch dimensions of a (batch.., rows, columns)
/// tensor merge into one.
SmallVector<ReassociationIndices> getBatchGroups(size_t count) {
  SmallVector<ReassociationIndices> groups(1);
  for (size_t dim = 0; dim < count; ++dim)
    groups[0].push_back(dim);
  groups.push_back({int64_t(count)});
  groups.push_back({int64_t(count) + 1});
  return groups;
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
    // Every operand as (batch.., rows, columns).
    auto order = [&](unsigned rows, unsigned columns) {
      SmallVector<unsigned> all(loops->batch);
      all.append({rows, columns});
      return all;
    };
    unsigned lhs = loops->lhs;
    Value a = arrange(rewriter, loc, op.getDpsInputs()[lhs],
                      getLoops(maps[lhs]), order(loops->m, loops->k));
    Value b = arrange(rewriter, loc, op.getDpsInputs()[1 - lhs],
                      getLoops(maps[1 - lhs]), order(loops->k, loops->n));
    SmallVector<unsigned> outLoops = getLoops(maps[2]);
    SmallVector<unsigned> productLoops = order(loops->m, loops->n);
    Value c =
        arrange(rewriter, loc, op.getDpsInits()[0], outLoops, productLoops);
    Value product;
    size_t count = loops->batch.size();
    if (!count) {
      product = linalg::MatmulOp::create(rewriter, loc, c.getType(),
                                         ValueRange{a, b}, ValueRange{c})
                    ->getResult(0);
    } else {
      // batch_matmul has one batch dimension.
      auto merge = [&](Value value) -> Value {
        if (count == 1)
          return value;
        return tensor::CollapseShapeOp::create(rewriter, loc, value,
                                               getBatchGroups(count));
      };
      Value init = merge(c);
      product = linalg::BatchMatmulOp::create(rewriter, loc, init.getType(),
                                              ValueRange{merge(a), merge(b)},
                                              ValueRange{init})
                    ->getResult(0);
      if (count > 1)
        product = tensor::ExpandShapeOp::create(rewriter, loc, c.getType(),
                                                product, getBatchGroups(count));
    }
    rewriter.replaceOp(op,
                       arrange(rewriter, loc, product, productLoops, outLoops));
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
