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

/// How a (batch.., rows.., columns..) tensor, `sizes` the lengths of the
/// three groups, merges into (batch, rows, columns), without the batch
/// dimension where there is no batch loop.
SmallVector<ReassociationIndices> getGroups(ArrayRef<size_t> sizes) {
  SmallVector<ReassociationIndices> groups;
  int64_t dim = 0;
  for (size_t size : sizes) {
    if (!size)
      continue;
    groups.emplace_back();
    for (size_t i = 0; i < size; ++i)
      groups.back().push_back(dim++);
  }
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
    // Every operand as (batch.., rows.., columns..), then with each group
    // merged into one dimension.
    auto order = [&](ArrayRef<unsigned> rows, ArrayRef<unsigned> columns) {
      SmallVector<unsigned> all(loops->batch);
      llvm::append_range(all, rows);
      llvm::append_range(all, columns);
      return all;
    };
    size_t count = loops->batch.size();
    auto merge = [&](Value value, ArrayRef<unsigned> rows,
                     ArrayRef<unsigned> columns) -> Value {
      SmallVector<ReassociationIndices> groups =
          getGroups({count, rows.size(), columns.size()});
      if (int64_t(groups.size()) ==
          cast<RankedTensorType>(value.getType()).getRank())
        return value;
      return tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
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
    Value init = merge(c, loops->m, loops->n);
    a = merge(a, loops->m, loops->k);
    b = merge(b, loops->k, loops->n);
    // batch_matmul has one batch dimension.
    Value product =
        count
            ? linalg::BatchMatmulOp::create(rewriter, loc, init.getType(),
                                            ValueRange{a, b}, ValueRange{init})
                  ->getResult(0)
            : linalg::MatmulOp::create(rewriter, loc, init.getType(),
                                       ValueRange{a, b}, ValueRange{init})
                  ->getResult(0);
    if (init != c)
      product = tensor::ExpandShapeOp::create(
          rewriter, loc, c.getType(), product,
          getGroups({count, loops->m.size(), loops->n.size()}));
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
