//===- ControlFlow.cpp - StableHLO while and case -------------------------===//
//
// Loops whose trip count follows from constants (JAX's fori_loop and scan
// over a static range) are unrolled, up to kMaxTrips iterations; others
// become scf.while. A case whose index is a constant is replaced by its
// branch; one on a run-time index becomes nested scf.if.
// The cloned ops are StableHLO still; the driver converts them next.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

/// Loops longer than this are not unrolled.
constexpr int64_t kMaxTrips = 4096;

/// Clones the ops of `block` but its terminator in front of the builder's
/// point with `arguments` for its arguments; returns what it returns.
SmallVector<Value> cloneBlock(OpBuilder &b, Block &block,
                              ValueRange arguments) {
  IRMapping mapping;
  mapping.map(block.getArguments(), arguments);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value value : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(value));
  return results;
}

/// The loop as scf.while; its regions stay StableHLO, converted in the next
/// round.
Result buildWhile(shlo::WhileOp loop, OpBuilder &b) {
  if (llvm::any_of(loop->getResultTypes(),
                   [](Type type) { return !isa<RankedTensorType>(type); })) {
    loop.emitError("a loop whose trip count is known only at run time needs "
                   "tensors for every carried value");
    return failure();
  }
  Location loc = loop.getLoc();
  auto whileOp = scf::WhileOp::create(
      b, loc, loop->getResultTypes(), loop.getOperand(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value proceed = cloneBlock(nb, loop.getCond().front(), args)[0];
        scf::ConditionOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, proceed, ValueRange()),
            args);
      },
      [&](OpBuilder &nb, Location l, ValueRange args) {
        scf::YieldOp::create(nb, l,
                             cloneBlock(nb, loop.getBody().front(), args));
      });
  return SmallVector<Value>(whileOp.getResults());
}

/// The integer values carried around `loop`, as far as constants give them,
/// across one trip: enough to evaluate its condition. Returns whether the
/// loop goes on (std::nullopt where constants do not say) and, when it
/// does, advances `carried`.
std::optional<bool>
advanceTrip(shlo::WhileOp loop,
            SmallVectorImpl<std::optional<int64_t>> &carried) {
  auto evaluate = [&](Block &block, Value value) {
    llvm::DenseMap<Value, int64_t> known;
    for (auto [arg, number] : llvm::zip(block.getArguments(), carried))
      if (number)
        known[arg] = *number;
    return evaluateIndex(value, &known);
  };
  Block &cond = loop.getCond().front(), &body = loop.getBody().front();
  std::optional<int64_t> proceed =
      evaluate(cond, cond.getTerminator()->getOperand(0));
  if (!proceed || !*proceed)
    return proceed.has_value() ? std::optional<bool>(false) : std::nullopt;
  SmallVector<std::optional<int64_t>> next;
  for (Value result : body.getTerminator()->getOperands())
    next.push_back(evaluate(body, result));
  carried.assign(next.begin(), next.end());
  return true;
}

Result convertWhile(Operation *op, OpBuilder &b) {
  auto loop = cast<shlo::WhileOp>(op);
  SmallVector<std::optional<int64_t>> initial;
  for (Value init : loop.getOperand())
    initial.push_back(evaluateIndex(init));
  // Count the trips first: a loop whose count is known only at run time, or
  // is large, stays a loop.
  SmallVector<std::optional<int64_t>> carried(initial);
  int64_t trips = 0;
  for (;; ++trips) {
    std::optional<bool> proceed = advanceTrip(loop, carried);
    if (!proceed || (*proceed && trips == kMaxTrips))
      return buildWhile(loop, b);
    if (!*proceed)
      break;
  }
  carried = initial;
  SmallVector<Value> values(loop.getOperand());
  for (int64_t trip = 0; trip < trips; ++trip) {
    advanceTrip(loop, carried);
    values = cloneBlock(b, loop.getBody().front(), values);
    // Counters known here become constants, so that indices computed from
    // them in later iterations are known too.
    for (auto [value, number] : llvm::zip(values, carried)) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (number && type && type.getRank() == 0 &&
          isa<IntegerType>(type.getElementType()))
        value = shlo::ConstantOp::create(
            b, op->getLoc(), type,
            DenseElementsAttr::get(
                type, IntegerAttr::get(type.getElementType(), *number)));
    }
  }
  return values;
}

/// The branches of `caseOp` from `first` on as nested `scf.if`s on the
/// scalar `index`: branch k where the index is k, the last one otherwise.
SmallVector<Value> buildBranches(OpBuilder &b, shlo::CaseOp caseOp, Value index,
                                 unsigned first) {
  auto branches = caseOp.getBranches();
  if (first + 1 == branches.size())
    return cloneBlock(b, branches[first].front(), ValueRange());
  Location loc = caseOp.getLoc();
  Value isFirst = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, index,
      arith::ConstantOp::create(b, loc,
                                b.getIntegerAttr(index.getType(), first)));
  auto branch = scf::IfOp::create(b, loc, caseOp->getResultTypes(), isFirst,
                                  /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  for (unsigned side = 0; side < 2; ++side) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&branch->getRegion(side).front());
    SmallVector<Value> results =
        side == 0 ? cloneBlock(b, branches[first].front(), ValueRange())
                  : buildBranches(b, caseOp, index, first + 1);
    scf::YieldOp::create(b, loc, results);
  }
  return SmallVector<Value>(branch.getResults());
}

Result convertCase(Operation *op, OpBuilder &b) {
  auto caseOp = cast<shlo::CaseOp>(op);
  int64_t count = caseOp.getBranches().size();
  if (std::optional<int64_t> index = evaluateIndex(caseOp.getIndex())) {
    // Out-of-range indices take the last branch.
    int64_t branch = *index < 0 || *index >= count ? count - 1 : *index;
    return cloneBlock(b, caseOp.getBranches()[branch].front(), ValueRange());
  }
  // A run-time index (JAX's lax.cond and lax.switch): a branch on it, which
  // autodiff differentiates side by side.
  auto indexType = dyn_cast<RankedTensorType>(caseOp.getIndex().getType());
  if (!indexType || indexType.getRank() != 0 ||
      !isa<IntegerType>(indexType.getElementType()) ||
      llvm::any_of(caseOp->getResultTypes(),
                   [](Type type) { return !isa<RankedTensorType>(type); })) {
    op->emitError("a case on a run-time index needs a scalar integer index "
                  "and tensor results");
    return failure();
  }
  Value index =
      tensor::ExtractOp::create(b, op->getLoc(), caseOp.getIndex(), {});
  return buildBranches(b, caseOp, index, 0);
}
Result convertOptimizationBarrier(Operation *op, OpBuilder &) {
  return SmallVector<Value>(op->getOperands());
}
} // namespace

void stablehlo_import::addControlFlowConverters(ConverterTable &table) {
  table["stablehlo.optimization_barrier"] = convertOptimizationBarrier;
  table["stablehlo.while"] = convertWhile;
  table["stablehlo.case"] = convertCase;
}
