//===- UnfoldConvolutions.cpp - Convolutions to matrix products -----------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Dialect/Sbp/Utils/MatrixProduct.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPUNFOLDCONVOLUTIONSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// The loops that operand `which` reads through `maps[which]`, in the order
/// the operands in `reference` read them, then in its own: the order in
/// which the matrix product reads the unfolded operand without a transpose
/// (an image's loops that the output reads, in its order, then the
/// kernel's).
SmallVector<unsigned> orderLoops(ArrayRef<AffineMap> maps, unsigned which,
                                 ArrayRef<unsigned> reference) {
  SmallVector<unsigned> loops;
  auto visit = [&](AffineMap map) {
    map.walkExprs([&](AffineExpr expr) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (dim && maps[which].isFunctionOfDim(dim.getPosition()) &&
          !llvm::is_contained(loops, dim.getPosition()))
        loops.push_back(dim.getPosition());
    });
  };
  for (unsigned other : reference)
    visit(maps[other]);
  visit(maps[which]);
  return loops;
}

/// `map` as a map of the loops `loops` only: loop `loops[i]` becomes `di`.
AffineMap renumber(AffineMap map, ArrayRef<unsigned> loops) {
  MLIRContext *context = map.getContext();
  SmallVector<AffineExpr> dims(map.getNumDims(),
                               getAffineConstantExpr(0, context));
  for (auto [i, loop] : llvm::enumerate(loops))
    dims[loop] = getAffineDimExpr(i, context);
  return map.replaceDimsAndSymbols(dims, {}, loops.size(), 0);
}

/// A generic that reads `input` through `inputMap` and writes `output`
/// through `outputMap`, its payload `combine(in, out)`: the gather of an
/// image, or the sum of products into the image's gradient.
Value buildCopy(
    PatternRewriter &rewriter, Location loc, Value input, AffineMap inputMap,
    Value output, AffineMap outputMap, ArrayRef<utils::IteratorType> iterators,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  return linalg::GenericOp::create(
             rewriter, loc, output.getType(), input, output,
             ArrayRef<AffineMap>{inputMap, outputMap}, iterators,
             [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
               linalg::YieldOp::create(b, bodyLoc,
                                       combine(b, bodyLoc, args[0], args[1]));
             })
      .getResult(0);
}

struct UnfoldConvolution : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!sbp::isUnfoldableProduct(op))
      return failure();
    // A unit loop read only by the output (an importer's group loop for
    // groups = 1) would be no matrix product's loop; a unit kernel loop
    // leaves the image read directly.
    FailureOr<linalg::DropUnitDimsResult> dropped =
        linalg::dropUnitDims(rewriter, op, linalg::ControlDropUnitDims());
    if (succeeded(dropped)) {
      rewriter.replaceOp(op, dropped->replacements);
      op = cast<linalg::GenericOp>(dropped->resultOp.getOperation());
      rewriter.setInsertionPoint(op);
    }
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // Each windowed operand becomes a tensor over the loops its positions
    // use: an image ordered like the output, then the kernel, so that the
    // product reads it without a transpose; the image's gradient like the
    // inputs.
    SmallVector<SmallVector<unsigned>> unfolded(3);
    SmallVector<AffineMap> productMaps(maps);
    for (unsigned which : {0u, 1u, 2u}) {
      if (maps[which].isProjectedPermutation())
        continue;
      unfolded[which] =
          orderLoops(maps, which,
                     which == 2 ? SmallVector<unsigned>{0, 1}
                                : SmallVector<unsigned>{2, 1 - which});
      productMaps[which] = AffineMap::get(
          maps[which].getNumDims(), 0,
          llvm::map_to_vector(
              unfolded[which],
              [&](unsigned loop) { return rewriter.getAffineDimExpr(loop); }),
          rewriter.getContext());
    }
    // The product's loops numbered in its output's order first: the
    // output's first row or column loop then makes A the input that holds
    // it (sbp-specialize-contractions), and the output needs no transpose.
    SmallVector<unsigned> order = orderLoops(productMaps, 2, {});
    for (unsigned input : {0u, 1u})
      for (unsigned loop : orderLoops(productMaps, input, {}))
        if (!llvm::is_contained(order, loop))
          order.push_back(loop);
    if (llvm::all_of(unfolded, [](auto &loops) { return loops.empty(); }) &&
        llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
      return success(succeeded(dropped));

    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Value> operands(op->getOperands());
    auto makeEmpty = [&](ArrayRef<unsigned> loops, Type element) -> Value {
      SmallVector<int64_t> shape = llvm::map_to_vector(
          loops, [&](unsigned loop) { return ranges[loop]; });
      return tensor::EmptyOp::create(rewriter, loc, shape, element);
    };
    for (unsigned input : {0u, 1u}) {
      ArrayRef<unsigned> loops = unfolded[input];
      if (loops.empty())
        continue;
      // The image's elements gathered at every window position (im2col).
      operands[input] = buildCopy(
          rewriter, loc, operands[input], renumber(maps[input], loops),
          makeEmpty(loops, getElementTypeOrSelf(operands[input].getType())),
          rewriter.getMultiDimIdentityMap(loops.size()),
          SmallVector<utils::IteratorType>(loops.size(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &, Location, Value in, Value) { return in; });
    }
    ArrayRef<unsigned> outLoops = unfolded[2];
    if (!outLoops.empty()) {
      // The products at every window position, from zero, summed into the
      // output afterwards (col2im).
      Type element = getElementTypeOrSelf(operands[2].getType());
      Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                             rewriter.getZeroAttr(element));
      operands[2] = linalg::FillOp::create(rewriter, loc, zero,
                                           makeEmpty(outLoops, element))
                        .getResult(0);
    }
    // The loops the (unfolded) output reads are the product's parallel
    // ones.
    auto product = linalg::GenericOp::create(
        rewriter, loc, operands[2].getType(),
        ValueRange{operands[0], operands[1]}, operands[2],
        llvm::map_to_vector(
            productMaps, [&](AffineMap map) { return renumber(map, order); }),
        llvm::map_to_vector(order, [&](unsigned loop) {
          return productMaps[2].isFunctionOfDim(loop)
                     ? utils::IteratorType::parallel
                     : utils::IteratorType::reduction;
        }));
    rewriter.cloneRegionBefore(op.getRegion(), product.getRegion(),
                               product.getRegion().end());
    Value result = product.getResult(0);
    if (!outLoops.empty()) {
      // A loop the output reads only inside a window position is summed.
      SmallVector<utils::IteratorType> foldIterators;
      for (unsigned loop : outLoops)
        foldIterators.push_back(
            llvm::is_contained(maps[2].getResults(),
                               rewriter.getAffineDimExpr(loop))
                ? utils::IteratorType::parallel
                : utils::IteratorType::reduction);
      result = buildCopy(
          rewriter, loc, result,
          rewriter.getMultiDimIdentityMap(outLoops.size()), op.getDpsInits()[0],
          renumber(maps[2], outLoops), foldIterators,
          [](OpBuilder &b, Location bodyLoc, Value in, Value out) -> Value {
            return arith::AddFOp::create(b, bodyLoc, out, in);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SbpUnfoldConvolutionsPass
    : public sbp::impl::SbpUnfoldConvolutionsPassBase<
          SbpUnfoldConvolutionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnfoldConvolution>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
