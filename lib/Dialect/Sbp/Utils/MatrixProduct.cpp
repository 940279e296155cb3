//===- MatrixProduct.cpp - Generic ops that are matrix products -----------===//

#include "sbp/Dialect/Sbp/Utils/MatrixProduct.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::sbp;

/// Whether the payload is `out + in0 * in1` (in either order) on floats.
bool mlir::sbp::isMultiplyAccumulate(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return false;
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  return mul && ((mul.getLhs() == body->getArgument(0) &&
                  mul.getRhs() == body->getArgument(1)) ||
                 (mul.getLhs() == body->getArgument(1) &&
                  mul.getRhs() == body->getArgument(0)));
}

std::optional<MatrixProductLoops>
mlir::sbp::matchMatrixProduct(linalg::GenericOp op) {
  if (!isMultiplyAccumulate(op))
    return std::nullopt;
  return matchMatrixProduct(op.getIndexingMapsArray(),
                            op.getIteratorTypesArray());
}

std::optional<MatrixProductLoops>
mlir::sbp::matchMatrixProduct(ArrayRef<AffineMap> maps,
                              ArrayRef<utils::IteratorType> iterators) {
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  // Each loop's role from which operands read it: the output's loops that
  // one input reads are its rows or columns, in the output's order.
  MatrixProductLoops loops;
  SmallVector<unsigned> ofA, ofB;
  for (AffineExpr expr : maps[2].getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    bool inA = maps[0].isFunctionOfDim(loop);
    bool inB = maps[1].isFunctionOfDim(loop);
    if (inA && inB)
      loops.batch.push_back(loop);
    else if (inA || inB)
      (inA ? ofA : ofB).push_back(loop);
    else
      return std::nullopt; // The same products in every position.
  }
  for (unsigned loop = 0; loop < iterators.size(); ++loop) {
    bool inC = maps[2].isFunctionOfDim(loop);
    bool reduction = iterators[loop] == utils::IteratorType::reduction;
    // A reduction the output reads, or one that only one input reads (a
    // sum of that input), is not a matrix product's.
    if (inC == reduction || (reduction && !(maps[0].isFunctionOfDim(loop) &&
                                            maps[1].isFunctionOfDim(loop))))
      return std::nullopt;
  }
  if (ofA.empty() || ofB.empty())
    return std::nullopt;
  // A is the input that holds the first of those loops.
  loops.lhs = *llvm::min_element(ofA) < *llvm::min_element(ofB) ? 0 : 1;
  loops.m = loops.lhs == 0 ? ofA : ofB;
  loops.n = loops.lhs == 0 ? ofB : ofA;
  // The reductions, in A's order.
  for (AffineExpr expr : maps[loops.lhs].getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    if (!maps[2].isFunctionOfDim(loop))
      loops.k.push_back(loop);
  }
  if (loops.k.empty())
    return std::nullopt;
  return loops;
}

bool mlir::sbp::isWindowPosition(AffineExpr expr) {
  if (isa<AffineDimExpr>(expr))
    return true;
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return false;
  auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (binary.getKind() == AffineExprKind::Mul)
    return isa<AffineDimExpr>(binary.getLHS()) && constant &&
           constant.getValue() > 0;
  return binary.getKind() == AffineExprKind::Add &&
         isWindowPosition(binary.getLHS()) &&
         (constant || isWindowPosition(binary.getRHS()));
}

bool mlir::sbp::isUnfoldableProduct(linalg::GenericOp op) {
  if (!isMultiplyAccumulate(op) || matchMatrixProduct(op))
    return false;
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> positions;
  for (auto [loop, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(range))
      return false;
    positions.push_back(range == 1 ? getAffineConstantExpr(0, context)
                                   : getAffineDimExpr(loop, context));
  }
  // The maps once loops of extent 1 read 0 and the operands' dimensions
  // that become 0 are dropped, and a windowed operand is unfolded over the
  // loops it reads.
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!llvm::all_of(map.getResults(), isWindowPosition))
      return false;
    map = map.replaceDimsAndSymbols(positions, {}, map.getNumDims(), 0);
    SmallVector<AffineExpr> results;
    if (map.isProjectedPermutation(/*allowZeroInResults=*/true)) {
      llvm::copy_if(map.getResults(), std::back_inserter(results),
                    [](AffineExpr expr) { return isa<AffineDimExpr>(expr); });
    } else {
      for (unsigned loop = 0; loop < map.getNumDims(); ++loop)
        if (map.isFunctionOfDim(loop))
          results.push_back(getAffineDimExpr(loop, context));
    }
    maps.push_back(AffineMap::get(map.getNumDims(), 0, results, context));
  }
  // The loops an unfolded output reads are parallel ones (a gradient's
  // window loops are reductions of the windowed output).
  SmallVector<utils::IteratorType> iterators;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    if (llvm::any_of(maps,
                     [&](AffineMap map) { return map.isFunctionOfDim(loop); }))
      iterators.push_back(maps[2].isFunctionOfDim(loop)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
  return matchMatrixProduct(compressUnusedDims(maps), iterators).has_value();
}
