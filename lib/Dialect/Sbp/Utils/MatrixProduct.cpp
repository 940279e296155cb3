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
  MatrixProductLoops loops;
  std::optional<unsigned> m, n, k;
  int64_t lhsOf = -1;
  // Each loop's role from which operands read it.
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    bool inA = maps[0].isFunctionOfDim(loop);
    bool inB = maps[1].isFunctionOfDim(loop);
    bool inC = maps[2].isFunctionOfDim(loop);
    bool reduction = iterators[loop] == utils::IteratorType::reduction;
    if (inA && inB && !inC && reduction && !k) {
      k = loop;
    } else if (reduction) {
      return std::nullopt;
    } else if (inA && inB && inC) {
      continue; // A batch loop, ordered by the output below.
    } else if (inC && (inA != inB) && !m) {
      m = loop;
      lhsOf = inA ? 0 : 1;
    } else if (inC && (inA != inB) && !n) {
      n = loop;
      // The input without `m` must hold `n`.
      if ((lhsOf == 0) == inA)
        return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!m || !n || !k)
    return std::nullopt;
  for (AffineExpr expr : maps[2].getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    if (loop != *m && loop != *n)
      loops.batch.push_back(loop);
  }
  loops.m = *m;
  loops.n = *n;
  loops.k = *k;
  loops.lhs = lhsOf;
  return loops;
}
