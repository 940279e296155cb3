//===- Recomputation.cpp - Recomputing activations in a training step -----===//

#include "sbp/Transforms/Recomputation.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "sbp/Transforms/Pipelining.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// The top-level op of `block` that holds `op`, or null.
Operation *getTopLevel(Block &block, Operation *op) {
  return block.findAncestorOpInBlock(*op);
}

/// Every value `op` reads: its operands and what its regions use from above.
SmallVector<Value> getReadValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  if (op->getNumRegions()) {
    SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    values.append(above.begin(), above.end());
  }
  return values;
}

int64_t getBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

} // namespace

ForwardSegments sbp::getForwardSegments(func::FuncOp func, int64_t count) {
  ForwardSegments result;
  Block &block = func.front();
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() == 0)
    return result;
  // The loss's producers, transitively.
  SmallVector<Operation *> worklist;
  auto visit = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == &block && result.forward.insert(def).second)
      worklist.push_back(def);
  };
  visit(terminator->getOperands().back());
  while (!worklist.empty())
    for (Value value : getReadValues(worklist.pop_back_val()))
      visit(value);

  // Balanced by iteration-space work, cheap producers left out: they are
  // copied wherever they are needed anyway.
  SmallVector<Operation *> ops;
  double total = 0;
  for (Operation &op : block.without_terminator())
    if (result.forward.contains(&op) && !isCheapToRecompute(&op)) {
      ops.push_back(&op);
      total += getIterationWork(&op);
    }
  count = std::max<int64_t>(1, std::min<int64_t>(count, ops.size()));
  double before = 0;
  for (Operation *op : ops) {
    double work = getIterationWork(op);
    int64_t segment = std::min<int64_t>(
        count - 1,
        total > 0 ? int64_t((before + work / 2) / total * count) : 0);
    before += work;
    if (result.segments.size() <= size_t(segment))
      result.segments.resize(segment + 1);
    result.segments[segment].push_back(op);
  }
  llvm::erase_if(result.segments,
                 [](const SmallVector<Operation *> &s) { return s.empty(); });
  for (const SmallVector<Operation *> &segment : result.segments) {
    double bytes = 0;
    for (Operation *op : segment)
      for (Value value : op->getResults())
        if (llvm::any_of(value.getUsers(), [&](Operation *user) {
              Operation *top = getTopLevel(block, user);
              return top && !result.forward.contains(top);
            }))
          bytes += getBytes(value);
    result.savedBytes.push_back(bytes);
  }
  return result;
}

int64_t sbp::recomputeSegment(func::FuncOp func,
                              const ForwardSegments &segments, int64_t index,
                              DenseSet<Operation *> &copies) {
  Block &block = func.front();
  ArrayRef<Operation *> segment = segments.segments[index];
  DenseSet<Operation *> members(segment.begin(), segment.end());
  // Backward readers: top-level ops outside the forward pass that are not
  // copies made for other segments.
  auto isBackwardUse = [&](OpOperand &use) {
    Operation *top = getTopLevel(block, use.getOwner());
    return top && !segments.forward.contains(top) && !copies.contains(top);
  };
  SmallVector<Value> saved;
  Operation *first = nullptr;
  for (Operation *op : segment)
    for (Value value : op->getResults())
      for (OpOperand &use : value.getUses())
        if (isBackwardUse(use)) {
          if (saved.empty() || saved.back() != value)
            saved.push_back(value);
          Operation *top = getTopLevel(block, use.getOwner());
          if (!first || top->isBeforeInBlock(first))
            first = top;
        }
  if (saved.empty())
    return 0;
  // The segment's ops the saved values depend on, with the cheap
  // producers they read from the segment's surroundings.
  DenseSet<Operation *> needed;
  SmallVector<Operation *> worklist;
  auto need = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == &block &&
        (members.contains(def) || isCheapToRecompute(def)) &&
        needed.insert(def).second)
      worklist.push_back(def);
  };
  for (Value value : saved)
    need(value);
  while (!worklist.empty())
    for (Value value : getReadValues(worklist.pop_back_val()))
      need(value);

  OpBuilder builder(first);
  IRMapping mapping;
  int64_t copied = 0;
  for (Operation &op : block.without_terminator()) {
    if (&op == first)
      break;
    if (!needed.contains(&op))
      continue;
    copies.insert(builder.clone(op, mapping));
    ++copied;
  }
  for (Value value : saved)
    value.replaceUsesWithIf(mapping.lookup(value), isBackwardUse);
  return copied;
}
