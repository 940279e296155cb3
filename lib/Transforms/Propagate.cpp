//===- Propagate.cpp - Choose layouts and signatures ----------------------===//
//
// Chooses, per function, a signature for every op that computes on tensors
// so that the bytes of boxing between producers and users are as few as
// possible. Each op in turn takes its cheapest signature given its
// neighbours' current choices (iterated conditional modes), in forward and
// backward sweeps until a sweep changes nothing. User annotations and
// function argument/result layouts are fixed.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"
#include "sbp/Dialect/Sbp/Utils/BoxingPlan.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/ShardingState.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPPROPAGATEPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

bool sbp::isFreeToRepeat(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResultTypes()[0]))
    return false;
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      return dense.isSplat();
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() &&
           fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  return false;
}

namespace {

/// Cost of a boxing that sends nothing (a local slice or zero fill): enough
/// to prefer not boxing at all, too little to outweigh any real transfer.
constexpr double kLocalBoxingCost = 1e-3;

bool hasTensors(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<RankedTensorType>(t); });
}

/// Whether `candidate` is the signature recorded on `op`. Only tensors carry
/// layouts: other operands match any entry.
bool matchesRecordedSignature(Operation *op, const NdSbpSignature &candidate) {
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) &&
        getUseSharding(operand) !=
            candidate.operands[operand.getOperandNumber()])
      return false;
  for (OpResult result : op->getResults())
    if (getValueSharding(result) != candidate.results[result.getResultNumber()])
      return false;
  return true;
}

/// An op whose signature is chosen.
struct Decision {
  Operation *op;
  SmallVector<NdSbpSignature> candidates;
  unsigned chosen = 0;
  /// Until the first sweep reaches an op, its users' needs are unknown and
  /// cost nothing: the first sweep propagates forward from the inputs.
  bool decided = false;
  const NdSbpSignature &current() const { return candidates[chosen]; }
};

class FunctionPropagation {
public:
  FunctionPropagation(FunctionOpInterface func, MeshOp mesh)
      : func(func), mesh(mesh), replicated(getReplicated(mesh)) {}

  LogicalResult run(unsigned maxSweeps);

private:
  LogicalResult collectFixedLayouts();
  LogicalResult collectDecisions();
  /// The layout `value` currently has.
  NdSbpAttr layoutOf(Value value);
  /// The layout `use` currently needs; null when any will do.
  NdSbpAttr neededBy(OpOperand &use);
  double boxingCost(Value value, NdSbpAttr from, NdSbpAttr to);
  double cost(const Decision &decision, const NdSbpSignature &signature);
  void settleEmptyTensors();
  bool improve(Decision &decision);
  void record();

  FunctionOpInterface func;
  MeshOp mesh;
  NdSbpAttr replicated;
  DenseMap<Value, NdSbpAttr> fixed;
  SmallVector<NdSbpAttr> resultLayouts;
  SmallVector<Decision> decisions;
  DenseMap<Operation *, unsigned> decisionOf;
};

LogicalResult FunctionPropagation::collectFixedLayouts() {
  StringRef name = SbpDialect::getShardingAttrName();
  Block &entry = func.getFunctionBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    auto layout = func.getArgAttrOfType<NdSbpAttr>(arg.getArgNumber(), name);
    if (isa<RankedTensorType>(arg.getType()))
      fixed[arg] = layout ? layout : replicated;
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto layout = func.getResultAttrOfType<NdSbpAttr>(i, name);
    resultLayouts.push_back(layout ? layout : replicated);
  }

  // An annotation fixes its result and constrains its operand: two
  // annotations of one value must agree, with each other and with the
  // layout of a function argument.
  DenseMap<Value, AnnotateOp> annotated;
  WalkResult walk = func.walk([&](AnnotateOp annotate) {
    fixed[annotate.getResult()] = annotate.getSharding();
    Value input = annotate.getInput();
    auto [it, inserted] = annotated.try_emplace(input, annotate);
    if (!inserted && it->second.getSharding() != annotate.getSharding()) {
      InFlightDiagnostic diag =
          annotate.emitError()
          << "conflicting annotations of one value: " << annotate.getSharding()
          << " here and " << it->second.getSharding();
      diag.attachNote(it->second.getLoc()) << "the other annotation is here";
      return WalkResult::interrupt();
    }
    auto arg = dyn_cast<BlockArgument>(input);
    if (arg && arg.getOwner() == &entry) {
      auto layout = func.getArgAttrOfType<NdSbpAttr>(arg.getArgNumber(), name);
      if (layout && layout != annotate.getSharding()) {
        annotate.emitError() << "conflicting annotations of one value: "
                             << annotate.getSharding() << " here and " << layout
                             << " on argument #" << arg.getArgNumber()
                             << " of @" << func.getName();
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult FunctionPropagation::collectDecisions() {
  WalkResult walk =
      func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isLayoutDecision(op))
          return WalkResult::advance();
        FailureOr<SmallVector<NdSbpSignature>> candidates =
            getCandidateSignatures(op, mesh);
        if (failed(candidates))
          return WalkResult::interrupt();
        decisionOf[op] = decisions.size();
        decisions.push_back(Decision{op, std::move(*candidates)});
        // Payloads of ops with a rule are part of the op.
        return isa<SbpSignatureOpInterface>(op) ? WalkResult::skip()
                                                : WalkResult::advance();
      });
  return failure(walk.wasInterrupted());
}

NdSbpAttr FunctionPropagation::layoutOf(Value value) {
  if (NdSbpAttr layout = fixed.lookup(value))
    return layout;
  if (!isa<RankedTensorType>(value.getType()))
    return {};
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    auto it = decisionOf.find(op);
    if (it != decisionOf.end())
      return decisions[it->second].current().results[result.getResultNumber()];
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return layoutOf(loop.getInitArgs()[result.getResultNumber()]);
    if (auto boxing = dyn_cast<BoxingOp>(op))
      return boxing.getDst();
    return replicated;
  }
  auto arg = cast<BlockArgument>(value);
  if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
    if (arg.getArgNumber() > 0)
      return layoutOf(loop.getInitArgs()[arg.getArgNumber() - 1]);
  return replicated;
}

NdSbpAttr FunctionPropagation::neededBy(OpOperand &use) {
  Operation *user = use.getOwner();
  unsigned index = use.getOperandNumber();
  auto it = decisionOf.find(user);
  if (it != decisionOf.end()) {
    const Decision &decision = decisions[it->second];
    return decision.decided ? decision.current().operands[index] : NdSbpAttr();
  }
  if (auto annotate = dyn_cast<AnnotateOp>(user))
    return annotate.getSharding();
  if (auto boxing = dyn_cast<BoxingOp>(user))
    return boxing.getSrc();
  if (!user->hasTrait<OpTrait::IsTerminator>())
    return {};
  Operation *parent = user->getParentOp();
  if (parent == func.getOperation())
    return resultLayouts[index];
  // A while loop has no rule, so it is laid out whole, and so are the values
  // its regions pass on (its condition's operands are off by one from its
  // results, and its body's go back to its arguments).
  if (isa<scf::WhileOp>(parent))
    return isa<RankedTensorType>(use.get().getType()) ? replicated
                                                      : NdSbpAttr();
  if (index < parent->getNumResults() &&
      isa<RankedTensorType>(parent->getResult(index).getType()))
    return layoutOf(parent->getResult(index));
  return {};
}

double FunctionPropagation::boxingCost(Value value, NdSbpAttr from,
                                       NdSbpAttr to) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !from || !to || from == to)
    return 0;
  // Re-laying out a tensor without contents costs nothing; see
  // settleEmptyTensors.
  bool isEmpty = value.getDefiningOp<tensor::EmptyOp>() != nullptr;
  SmallVector<int64_t> shape;
  for (int64_t size : type.getShape())
    shape.push_back(ShapedType::isDynamic(size) ? 1 : size);
  return (isEmpty ? 0 : kLocalBoxingCost) +
         getBoxingBytes(from.getEntries(), to.getEntries(), shape,
                        getElementBytes(type.getElementType()),
                        mesh.getShape());
}

double FunctionPropagation::cost(const Decision &decision,
                                 const NdSbpSignature &signature) {
  double total = 0;
  for (OpOperand &operand : decision.op->getOpOperands())
    total += boxingCost(operand.get(), layoutOf(operand.get()),
                        signature.operands[operand.getOperandNumber()]);
  for (OpResult result : decision.op->getResults())
    for (OpOperand &use : result.getUses())
      total += boxingCost(result, signature.results[result.getResultNumber()],
                          neededBy(use));
  return total;
}

bool FunctionPropagation::improve(Decision &decision) {
  unsigned best = decision.chosen;
  double bestCost = cost(decision, decision.current());
  for (auto [index, candidate] : llvm::enumerate(decision.candidates)) {
    double candidateCost = cost(decision, candidate);
    if (candidateCost < bestCost - 1e-9) {
      best = index;
      bestCost = candidateCost;
    }
  }
  bool changed = best != decision.chosen;
  decision.chosen = best;
  decision.decided = true;
  return changed;
}

/// A `tensor.empty` takes the layout its users need when they agree, so that
/// no boxing of undefined contents is left behind.
void FunctionPropagation::settleEmptyTensors() {
  for (Decision &decision : decisions) {
    auto empty = dyn_cast<tensor::EmptyOp>(decision.op);
    if (!empty)
      continue;
    NdSbpAttr needed;
    bool agree = true;
    for (OpOperand &use : empty->getUses()) {
      NdSbpAttr layout = neededBy(use);
      agree &= layout && (!needed || layout == needed);
      needed = layout;
    }
    if (!agree || !needed)
      continue;
    for (auto [index, candidate] : llvm::enumerate(decision.candidates))
      if (candidate.results.front() == needed)
        decision.chosen = index;
  }
}

void FunctionPropagation::record() {
  StringRef name = SbpDialect::getShardingAttrName();
  Block &entry = func.getFunctionBody().front();
  for (BlockArgument arg : entry.getArguments())
    if (NdSbpAttr layout = fixed.lookup(arg))
      func.setArgAttr(arg.getArgNumber(), name, layout);
  for (auto [index, layout] : llvm::enumerate(resultLayouts))
    if (isa<RankedTensorType>(func.getResultTypes()[index]))
      func.setResultAttr(index, name, layout);
  for (const Decision &decision : decisions)
    setOpShardings(decision.op, decision.current().operands,
                   decision.current().results);
  func.walk([&](scf::ForOp loop) {
    SmallVector<NdSbpAttr> results;
    for (Value init : loop.getInitArgs())
      results.push_back(layoutOf(init));
    SmallVector<NdSbpAttr> operands(loop.getNumControlOperands(), NdSbpAttr());
    llvm::append_range(operands, results);
    setOpShardings(loop, operands, results);
  });
}

LogicalResult FunctionPropagation::run(unsigned maxSweeps) {
  if (failed(collectFixedLayouts()))
    return failure();
  if (failed(collectDecisions()))
    return failure();
  for (unsigned sweep = 0; sweep < maxSweeps; ++sweep) {
    bool changed = false;
    if (sweep % 2 == 0) {
      for (Decision &decision : decisions)
        changed |= improve(decision);
    } else {
      for (Decision &decision : llvm::reverse(decisions))
        changed |= improve(decision);
    }
    // A forward sweep that changes nothing can still leave room for a
    // backward one; stop after a quiet pair.
    if (!changed && sweep > 0)
      break;
  }
  settleEmptyTensors();
  record();
  return success();
}

} // namespace

FailureOr<MeshOp> sbp::findAnnotatedMesh(FunctionOpInterface func) {
  StringRef name = SbpDialect::getShardingAttrName();
  std::optional<std::pair<FlatSymbolRefAttr, Location>> first;
  auto check = [&](NdSbpAttr layout, Location loc) -> LogicalResult {
    if (!layout)
      return success();
    if (!first) {
      first = {layout.getMesh(), loc};
      return success();
    }
    if (first->first == layout.getMesh())
      return success();
    InFlightDiagnostic diag =
        emitError(loc) << "mixes meshes: " << layout.getMesh() << " here and "
                       << first->first << " elsewhere in @" << func.getName();
    diag.attachNote(first->second)
        << "mesh " << first->first << " is used here";
    return failure();
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (failed(check(func.getArgAttrOfType<NdSbpAttr>(i, name), func.getLoc())))
      return failure();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (failed(
            check(func.getResultAttrOfType<NdSbpAttr>(i, name), func.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](AnnotateOp annotate) {
    return failed(check(annotate.getSharding(), annotate.getLoc()))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!first)
    return MeshOp();
  return lookupMesh(func, first->first);
}

LogicalResult sbp::propagateLayouts(FunctionOpInterface func, MeshOp mesh,
                                    unsigned maxSweeps) {
  return FunctionPropagation(func, mesh).run(maxSweeps);
}

bool sbp::isLayoutDecision(Operation *op) {
  if (isa<AnnotateOp, BoxingOp, scf::ForOp>(op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  return hasTensors(op->getOperandTypes()) || hasTensors(op->getResultTypes());
}

FailureOr<SmallVector<NdSbpSignature>>
sbp::getCandidateSignatures(Operation *op, MeshOp mesh) {
  SmallVector<NdSbpSignature> candidates;
  if (auto iface = dyn_cast<SbpSignatureOpInterface>(op))
    candidates = iface.getNdSbpSignatures(mesh);
  bool whole = candidates.empty();
  if (whole) {
    NdSbpAttr replicated = getReplicated(mesh);
    NdSbpSignature signature;
    signature.operands.assign(op->getNumOperands(), replicated);
    signature.results.assign(op->getNumResults(), replicated);
    candidates.push_back(std::move(signature));
  }
  // A signature recorded before (by hand, or by an earlier run) is kept.
  if (op->hasAttr(SbpDialect::getResultShardingsAttrName())) {
    auto *it = llvm::find_if(candidates, [&](const NdSbpSignature &candidate) {
      return matchesRecordedSignature(op, candidate);
    });
    if (it == candidates.end())
      return op->emitError() << "the recorded signature (sbp.operands, "
                                "sbp.results) is not one of this op's "
                                "signatures on mesh @"
                             << mesh.getSymName();
    return SmallVector<NdSbpSignature>{*it};
  }
  if (whole)
    op->emitRemark() << "no SBP rule for this op on mesh @" << mesh.getSymName()
                     << ": it runs whole, B in, B out";
  return candidates;
}

namespace {

struct SbpPropagatePass
    : public sbp::impl::SbpPropagatePassBase<SbpPropagatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<MeshOp> mesh = findAnnotatedMesh(func);
      if (failed(mesh))
        return signalPassFailure();
      // Without annotations, the module's only mesh; with several meshes
      // and no annotation there is nothing to go by.
      if (!*mesh && meshes.size() == 1)
        *mesh = meshes.front();
      if (!*mesh)
        continue;
      if (failed(FunctionPropagation(func, *mesh).run(maxSweeps)))
        return signalPassFailure();
    }
  }
};

} // namespace
