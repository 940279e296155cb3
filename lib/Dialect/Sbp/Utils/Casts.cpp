//===- Casts.cpp - Tensors copied into another element type ---------------===//

#include "sbp/Dialect/Sbp/Utils/Casts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

bool sbp::isElementTypeCopy(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  return body.getOperations().size() == 2 &&
         isa<arith::TruncFOp, arith::ExtFOp>(body.front()) &&
         body.front().getOperand(0) == body.getArgument(0);
}
