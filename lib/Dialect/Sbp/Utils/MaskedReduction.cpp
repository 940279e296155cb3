//===- MaskedReduction.cpp - Masked accumulations as reductions -----------===//

#include "sbp/Dialect/Sbp/Utils/MaskedReduction.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

void sbp::unmaskReductions(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  Operation *yield = body->getTerminator();
  for (BlockArgument out : op.getRegionOutputArgs()) {
    OpOperand &yielded =
        yield->getOpOperand(out.getArgNumber() - op.getNumDpsInputs());
    auto select = yielded.get().getDefiningOp<arith::SelectOp>();
    if (!select || select.getFalseValue() != out ||
        !select.getResult().hasOneUse())
      continue;
    Operation *combiner = select.getTrueValue().getDefiningOp();
    if (!combiner || combiner->getBlock() != body || !combiner->hasOneUse() ||
        combiner->getNumOperands() != 2 ||
        !llvm::is_contained(combiner->getOperands(), out))
      continue;
    auto floatType = dyn_cast<FloatType>(out.getType());
    if (!floatType)
      continue;
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    std::optional<APFloat> identity;
    if (isa<arith::AddFOp>(combiner))
      identity = APFloat::getZero(semantics, /*Negative=*/true);
    else if (isa<arith::MulFOp>(combiner))
      identity = APFloat::getOne(semantics);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
      identity = APFloat::getInf(semantics, /*Negative=*/true);
    else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
      identity = APFloat::getInf(semantics);
    if (!identity)
      continue;
    Value partial = combiner->getOperand(combiner->getOperand(0) == out);
    if (partial == out)
      continue;
    OpBuilder nb(select);
    Location loc = select.getLoc();
    Value none = arith::ConstantOp::create(
        nb, loc, nb.getFloatAttr(floatType, *identity));
    Value masked =
        arith::SelectOp::create(nb, loc, select.getCondition(), partial, none);
    Operation *unmasked = nb.clone(*combiner);
    unmasked->setOperands({out, masked});
    yielded.set(unmasked->getResult(0));
    select.erase();
    combiner->erase();
  }
}
