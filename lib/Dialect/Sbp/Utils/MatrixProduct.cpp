//===- MatrixProduct.cpp - Generic ops that are matrix products -----------===//

#include "sbp/Dialect/Sbp/Utils/MatrixProduct.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::sbp;

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

} // namespace

std::optional<MatrixProductLoops>
mlir::sbp::matchMatrixProduct(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAccumulate(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
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
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
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
