//===- OverlapCollectives.cpp - Collectives beside independent kernels ----===//
//
// Buffers are only reached through SSA values: the buffer itself and the
// views and casts made from it. So the first op that uses any value
// derived from a collective's buffers is the first one that may read what
// the collective writes, or write or free what it reads; everything before
// it may run concurrently.
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/Passes.h"
#include "llvm/Support/Regex.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPOVERLAPCOLLECTIVESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `value` is a memref (ranked or not).
bool isBuffer(Value value) { return isa<BaseMemRefType>(value.getType()); }

/// The buffer that `value` views: through every op that makes a memref
/// from exactly one memref operand (casts, views, reshapes).
Value getRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto sources = llvm::make_filter_range(def->getOperands(), isBuffer);
    if (!llvm::hasSingleElement(sources))
      break;
    value = *sources.begin();
  }
  return value;
}

/// Adds to `aliases` `root` and every memref made from it, transitively.
void addViews(Value root, DenseSet<Value> &aliases) {
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!aliases.insert(value).second)
      continue;
    for (Operation *user : value.getUsers())
      for (Value result : user->getResults())
        if (isBuffer(result))
          worklist.push_back(result);
  }
}

/// Whether `op` or an op nested in it uses one of `aliases`.
bool usesAny(Operation *op, const DenseSet<Value> &aliases) {
  WalkResult walk = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (aliases.contains(operand))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Declares runtime function `name` once.
func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto func = func::FuncOp::create(builder, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

struct SbpOverlapCollectivesPass
    : public sbp::impl::SbpOverlapCollectivesPassBase<
          SbpOverlapCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Regex collective("^sbp_rt_(all_reduce|all_gather|reduce_scatter|"
                           "all_to_all|broadcast|send|recv)_[a-z0-9]+$");
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (collective.match(call.getCallee()))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    OpBuilder builder(module.getContext());
    Type i64 = builder.getI64Type();
    func::FuncOp begin = declare(module, "sbp_rt_cuda_collective_begin",
                                 builder.getFunctionType({}, {}));
    func::FuncOp end = declare(module, "sbp_rt_cuda_collective_end",
                               builder.getFunctionType({}, {i64}));
    func::FuncOp wait = declare(module, "sbp_rt_cuda_collective_wait",
                                builder.getFunctionType({i64}, {}));

    for (func::CallOp call : calls) {
      Location loc = call.getLoc();
      builder.setInsertionPoint(call);
      func::CallOp::create(builder, loc, begin, ValueRange());
      builder.setInsertionPointAfter(call);
      auto ended = func::CallOp::create(builder, loc, end, ValueRange());
      Value handle = ended.getResult(0);

      DenseSet<Value> aliases;
      for (Value operand : call.getOperands())
        if (isBuffer(operand))
          addViews(getRoot(operand), aliases);
      // The first later op of the block that touches the buffers waits;
      // the terminator at the latest.
      Operation *waitBefore = ended->getBlock()->getTerminator();
      for (Operation *op = ended->getNextNode(); op; op = op->getNextNode())
        if (usesAny(op, aliases)) {
          waitBefore = op;
          break;
        }
      builder.setInsertionPoint(waitBefore);
      func::CallOp::create(builder, loc, wait, ValueRange{handle});
    }
  }
};

} // namespace
