//===- ShardingState.cpp - Reading and writing chosen layouts -------------===//

#include "sbp/Transforms/ShardingState.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {
NdSbpAttr getEntry(Operation *op, StringRef name, unsigned index) {
  auto array = op->getAttrOfType<ArrayAttr>(name);
  if (!array || index >= array.size())
    return {};
  return dyn_cast<NdSbpAttr>(array[index]);
}

ArrayAttr toArray(MLIRContext *ctx, ArrayRef<NdSbpAttr> shardings) {
  SmallVector<Attribute> elements;
  for (NdSbpAttr sharding : shardings)
    elements.push_back(sharding ? Attribute(sharding) : UnitAttr::get(ctx));
  return ArrayAttr::get(ctx, elements);
}
} // namespace

NdSbpAttr sbp::getValueSharding(Value value) {
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    if (auto annotate = dyn_cast<AnnotateOp>(op))
      return annotate.getSharding();
    if (auto boxing = dyn_cast<BoxingOp>(op))
      return boxing.getDst();
    return getEntry(op, SbpDialect::getResultShardingsAttrName(),
                    result.getResultNumber());
  }
  auto arg = cast<BlockArgument>(value);
  Operation *parent = arg.getOwner()->getParentOp();
  if (auto func = dyn_cast<FunctionOpInterface>(parent)) {
    if (arg.getOwner() != &func.getFunctionBody().front())
      return {};
    return func.getArgAttrOfType<NdSbpAttr>(arg.getArgNumber(),
                                            SbpDialect::getShardingAttrName());
  }
  if (auto loop = dyn_cast<scf::ForOp>(parent)) {
    if (arg.getArgNumber() == 0)
      return {};
    return getEntry(loop, SbpDialect::getResultShardingsAttrName(),
                    arg.getArgNumber() - 1);
  }
  // A while loop's condition region takes what its operands (then its body)
  // pass, its body what its results get.
  if (auto loop = dyn_cast<scf::WhileOp>(parent))
    return arg.getOwner()->getParent() == &loop.getBefore()
               ? getEntry(loop, SbpDialect::getOperandShardingsAttrName(),
                          arg.getArgNumber())
               : getEntry(loop, SbpDialect::getResultShardingsAttrName(),
                          arg.getArgNumber());
  return {};
}

NdSbpAttr sbp::getUseSharding(OpOperand &use) {
  Operation *user = use.getOwner();
  unsigned index = use.getOperandNumber();
  if (auto annotate = dyn_cast<AnnotateOp>(user))
    return annotate.getSharding();
  if (auto boxing = dyn_cast<BoxingOp>(user))
    return boxing.getSrc();
  Operation *parent = user->getParentOp();
  if (user->hasTrait<OpTrait::IsTerminator>()) {
    if (auto func = dyn_cast_or_null<FunctionOpInterface>(parent))
      return func.getResultAttrOfType<NdSbpAttr>(
          index, SbpDialect::getShardingAttrName());
    // A while's condition passes its operands after the first to the
    // results; its body yields the next operands.
    if (auto loop = dyn_cast_or_null<scf::WhileOp>(parent)) {
      if (isa<scf::ConditionOp>(user))
        return index == 0
                   ? NdSbpAttr()
                   : getEntry(loop, SbpDialect::getResultShardingsAttrName(),
                              index - 1);
      return getEntry(loop, SbpDialect::getOperandShardingsAttrName(), index);
    }
    if (parent && index < parent->getNumResults())
      return getEntry(parent, SbpDialect::getResultShardingsAttrName(), index);
    return {};
  }
  // A tensor that the payload of an op with a chosen layout reads from
  // outside (a gather's table, read with tensor.extract) is none of the op's
  // operands, so its rule cannot have split it: the payload reads it whole.
  Value value = use.get();
  if (isa<RankedTensorType>(value.getType()))
    for (Operation *ancestor = parent;
         ancestor && !isa<FunctionOpInterface>(ancestor);
         ancestor = ancestor->getParentOp()) {
      // Only a payload that is part of its op (one with a rule, like a
      // linalg op; not a loop, whose body ops have layouts of their own).
      if (!isa<SbpSignatureOpInterface>(ancestor) ||
          !ancestor->hasAttr(SbpDialect::getResultShardingsAttrName()) ||
          ancestor->isAncestor(value.getParentRegion()->getParentOp()))
        continue;
      NdSbpAttr have = getValueSharding(value);
      if (!have)
        return {};
      SmallVector<SbpEntry> whole(have.getEntries().size(),
                                  SbpEntry::broadcast());
      return NdSbpAttr::get(user->getContext(), have.getMesh(), whole);
    }
  return getEntry(user, SbpDialect::getOperandShardingsAttrName(), index);
}

void sbp::setOpShardings(Operation *op, ArrayRef<NdSbpAttr> operands,
                         ArrayRef<NdSbpAttr> results) {
  MLIRContext *ctx = op->getContext();
  op->setAttr(SbpDialect::getOperandShardingsAttrName(),
              toArray(ctx, operands));
  op->setAttr(SbpDialect::getResultShardingsAttrName(), toArray(ctx, results));
}

void sbp::clearOpShardings(Operation *op) {
  op->removeAttr(SbpDialect::getOperandShardingsAttrName());
  op->removeAttr(SbpDialect::getResultShardingsAttrName());
}
