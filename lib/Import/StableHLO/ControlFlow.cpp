//===- ControlFlow.cpp - StableHLO while and case -------------------------===//
//
// The logical program has no control flow: loops whose trip count follows
// from constants (JAX's fori_loop and scan over a static range) are
// unrolled, and a case whose index is a constant is replaced by its branch;
// one on a run-time index becomes nested scf.if.
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

Result convertWhile(Operation *op, OpBuilder &b) {
  auto loop = cast<shlo::WhileOp>(op);
  Block &cond = loop.getCond().front();
  Block &body = loop.getBody().front();
  // The integer values carried around the loop, as far as constants give
  // them: enough to evaluate the condition.
  llvm::DenseMap<Value, int64_t> known;
  SmallVector<std::optional<int64_t>> carried;
  for (Value init : loop.getOperand())
    carried.push_back(evaluateIndex(init));
  SmallVector<Value> values(loop.getOperand());
  for (int64_t trip = 0;; ++trip) {
    known.clear();
    for (auto [arg, value] : llvm::zip(cond.getArguments(), carried))
      if (value)
        known[arg] = *value;
    std::optional<int64_t> proceed =
        evaluateIndex(cond.getTerminator()->getOperand(0), &known);
    if (!proceed) {
      op->emitError("the loop's condition does not follow from constants; "
                    "only loops with a static trip count are supported");
      return failure();
    }
    if (!*proceed)
      return values;
    if (trip == kMaxTrips) {
      op->emitError() << "the loop runs more than " << kMaxTrips
                      << " times; it is not unrolled";
      return failure();
    }
    known.clear();
    for (auto [arg, value] : llvm::zip(body.getArguments(), carried))
      if (value)
        known[arg] = *value;
    for (auto [i, result] :
         llvm::enumerate(body.getTerminator()->getOperands()))
      carried[i] = evaluateIndex(result, &known);
    values = cloneBlock(b, body, values);
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
