//===- ControlFlow.cpp - StableHLO while and case -------------------------===//
//
// The logical program has no control flow: loops whose trip count follows
// from constants (JAX's fori_loop and scan over a static range) are
// unrolled, and a case whose index is a constant is replaced by its branch.
// The cloned ops are StableHLO still; the driver converts them next.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
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

Result convertCase(Operation *op, OpBuilder &b) {
  auto caseOp = cast<shlo::CaseOp>(op);
  std::optional<int64_t> index = evaluateIndex(caseOp.getIndex());
  if (!index) {
    op->emitError("the case index does not follow from constants");
    return failure();
  }
  int64_t count = caseOp.getBranches().size();
  // Out-of-range indices take the last branch.
  int64_t branch = *index < 0 || *index >= count ? count - 1 : *index;
  return cloneBlock(b, caseOp.getBranches()[branch].front(), ValueRange());
}
} // namespace

void stablehlo_import::addControlFlowConverters(ConverterTable &table) {
  table["stablehlo.while"] = convertWhile;
  table["stablehlo.case"] = convertCase;
}
