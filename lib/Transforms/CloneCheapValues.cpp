//===- CloneCheapValues.cpp - One copy of a constant value per user -------===//
//
// A value is cheap when the op defining it has no memory effects and reads
// only cheap values: it depends on no argument of the function, so copies
// of its ops compute it again wherever needed. JAX hoists such values out
// of a scan (the causal mask, the RoPE tables), and once the scan is
// unrolled one value reaches every layer, forward and backward: in the
// search's graph a node of high degree that keeps the layers from being
// eliminated one by one. With a copy per user each copy is a leaf of its
// user, eliminated at once, and the search may lay each copy out as its
// user reads it. The copies' compute is priced like any op's.
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/Propagation.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sbp/Transforms/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPCLONECHEAPVALUESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Copies made per op of the function at most: a value read by many users
/// through a deep chain of cheap ops is copied whole for each, which must
/// not grow a large program without bound.
constexpr unsigned kMaxCopiesPerOp = 4;

/// Whether `op` may be computed again anywhere its operands are available.
bool isCheapOp(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return false;
  if (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type type) {
    return isa<RankedTensorType>(type);
  });
}

} // namespace

unsigned mlir::sbp::cloneCheapValues(FunctionOpInterface func) {
  // In program order: an op is cheap when its operands are.
  llvm::DenseSet<Operation *> cheap;
  SmallVector<Operation *> order;
  unsigned numOps = 0;
  func->walk([&](Operation *op) {
    ++numOps;
    if (op == func.getOperation() || !isCheapOp(op))
      return;
    // Operands defined by cheap ops or scalar constants (a fill's value).
    bool fromCheap = llvm::all_of(op->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && (cheap.contains(def) ||
                     def->hasTrait<OpTrait::ConstantLike>());
    });
    if (!fromCheap)
      return;
    cheap.insert(op);
    order.push_back(op);
  });
  // Users first, so that an op copied for its users is copied again for
  // the users' copies.
  unsigned added = 0, budget = kMaxCopiesPerOp * numOps;
  for (Operation *op : llvm::reverse(order)) {
    llvm::SetVector<Operation *> users;
    for (OpOperand &use : op->getUses())
      users.insert(use.getOwner());
    if (users.size() < 2)
      continue;
    if (added + users.size() - 1 > budget)
      break;
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    for (Operation *user : users.getArrayRef().drop_front()) {
      // Right after the original, so that a user in a loop does not
      // compute it every trip.
      Operation *copy = builder.clone(*op);
      for (auto [from, to] : llvm::zip(op->getResults(), copy->getResults()))
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          return use.getOwner() == user;
        });
      ++added;
    }
  }
  return added;
}

namespace {

struct SbpCloneCheapValuesPass
    : public sbp::impl::SbpCloneCheapValuesPassBase<SbpCloneCheapValuesPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<FunctionOpInterface>())
      if (!func.isExternal())
        cloneCheapValues(func);
  }
};

} // namespace
