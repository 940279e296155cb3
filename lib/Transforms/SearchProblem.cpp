//===- SearchProblem.cpp - A function's layout choice as costs ------------===//

#include "sbp/Transforms/SearchProblem.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/ShardingState.h"
#include <map>

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Layouts for a value of `type`: what an argument can arrive in and a
/// result can be handed back in, partial sums only where `partial`. A
/// dimension is split only when static and at least as large as the devices
/// splitting it.
SmallVector<NdSbpAttr> enumerateLayouts(RankedTensorType type, MeshOp mesh,
                                        bool partial = false) {
  ArrayRef<int64_t> meshShape = mesh.getShape();
  SmallVector<SmallVector<SbpEntry>> layouts = {{}};
  for (size_t axis = 0; axis < meshShape.size(); ++axis) {
    SmallVector<SmallVector<SbpEntry>> next;
    for (const SmallVector<SbpEntry> &prefix : layouts) {
      SmallVector<SbpEntry> choices = {SbpEntry::broadcast()};
      // On an axis of one device every entry is the same layout: `B`
      // alone keeps the states few.
      for (int64_t dim = 0; dim < type.getRank() && meshShape[axis] > 1; ++dim)
        choices.push_back(SbpEntry::split(dim));
      if (partial && meshShape[axis] > 1)
        choices.push_back(SbpEntry::partial());
      for (SbpEntry entry : choices) {
        SmallVector<SbpEntry> layout(prefix);
        layout.push_back(entry);
        next.push_back(std::move(layout));
      }
    }
    layouts = std::move(next);
  }
  SmallVector<NdSbpAttr> result;
  for (const SmallVector<SbpEntry> &layout : layouts) {
    bool valid = true;
    for (int64_t dim = 0; dim < type.getRank() && valid; ++dim) {
      int64_t parts = 1;
      for (auto [axis, entry] : llvm::enumerate(layout))
        if (entry.isSplit() && entry.getDim() == dim)
          parts *= meshShape[axis];
      int64_t size = type.getDimSize(dim);
      valid = parts == 1 || (!ShapedType::isDynamic(size) && size >= parts);
    }
    if (valid)
      result.push_back(NdSbpAttr::get(
          mesh.getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
          layout));
  }
  return result;
}

/// How often the body of the loops around `op` runs; 1 for loops without a
/// constant trip count.
double getMultiplicity(Operation *op) {
  double count = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (lb && ub && step && *step > 0 && *ub > *lb)
      count *= (*ub - *lb + *step - 1) / *step;
  }
  return count;
}

/// Ops that alias their operand once bufferized: they hold no bytes of
/// their own and keep their source alive.
bool isView(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
      op);
}

/// The value whose buffer `value` is: a loop's iteration argument and
/// result are the buffer of its initial value.
Value getCarriedRoot(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0)
        return value;
      value = loop.getInitArgs()[arg.getArgNumber() - 1];
    } else if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      value = loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
    } else {
      return value;
    }
  }
}

/// Whether `result` is written into the buffer of a loop-carried value
/// (an insert into the saved-activation stack, an accumulation into a
/// gradient): bufferized in place, it holds no bytes of its own.
bool isInPlaceOnCarried(OpResult result) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
  if (!dps)
    return false;
  auto arg = dyn_cast<BlockArgument>(dps.getTiedOpOperand(result)->get());
  return arg && arg.getArgNumber() > 0 &&
         isa<scf::ForOp>(arg.getOwner()->getParentOp());
}

/// The ops that repeat an earlier op of their block on the same values
/// (cloneCheapValues' copies per user, or duplicates CSE would merge).
/// They are computed once where their layouts agree, as CSE merges them
/// after partitioning: the first is priced, the others compute nothing (an
/// underestimate only where copies are laid out differently, and such
/// copies compute values from constants alone).
DenseSet<Operation *> findRepeatedOps(FunctionOpInterface func) {
  DenseSet<Operation *> repeated;
  DenseMap<Value, Value> representative;
  auto canonical = [&](Value value) {
    Value first = representative.lookup(value);
    return first ? first : value;
  };
  DenseMap<llvm::hash_code, SmallVector<Operation *, 1>> byHash;
  constexpr auto flags = OperationEquivalence::IgnoreLocations;
  func->walk<WalkOrder::PreOrder>([&](Operation *op) {
    // A linalg op's payload is compared with the op.
    auto next = isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                          : WalkResult::advance();
    if (op->getNumResults() == 0 || !isMemoryEffectFree(op) ||
        op == func.getOperation())
      return next;
    llvm::hash_code hash = OperationEquivalence::computeHash(
        op, [&](Value value) { return hash_value(canonical(value)); },
        OperationEquivalence::ignoreHashValue, flags);
    for (Operation *earlier : byHash[hash]) {
      // Values of the two payloads matched so far.
      DenseMap<Value, Value> matched;
      if (earlier->getBlock() != op->getBlock() ||
          !OperationEquivalence::isEquivalentTo(
              earlier, op,
              [&](Value a, Value b) {
                return success(canonical(a) == canonical(b) ||
                               matched.lookup(b) == a);
              },
              [&](Value a, Value b) { matched[b] = a; }, flags))
        continue;
      repeated.insert(op);
      for (auto [from, to] :
           llvm::zip(op->getResults(), earlier->getResults()))
        representative[from] = canonical(to);
      return next;
    }
    byHash[hash].push_back(op);
    return next;
  });
  return repeated;
}

/// Identifies ops that cost the same under each of the same signatures:
/// name, attributes, types, payload and the signatures themselves (a fill's
/// signatures depend on the value it fills with).
std::vector<const void *>
getStructuralKey(Operation *op, ArrayRef<NdSbpSignature> signatures) {
  std::vector<const void *> key = {
      op->getName().getAsOpaquePointer(),
      op->getRawDictionaryAttrs().getAsOpaquePointer(),
      op->getPropertiesAsAttribute().getAsOpaquePointer()};
  for (Type type : op->getOperandTypes())
    key.push_back(type.getAsOpaquePointer());
  for (Type type : op->getResultTypes())
    key.push_back(type.getAsOpaquePointer());
  for (Region &region : op->getRegions())
    region.walk([&](Operation *payload) {
      key.push_back(payload->getName().getAsOpaquePointer());
    });
  for (const NdSbpSignature &signature : signatures) {
    key.push_back(nullptr);
    for (NdSbpAttr layout : signature.operands)
      key.push_back(layout.getAsOpaquePointer());
    for (NdSbpAttr layout : signature.results)
      key.push_back(layout.getAsOpaquePointer());
  }
  return key;
}

} // namespace

FailureOr<SearchProblem> SearchProblem::build(FunctionOpInterface func,
                                              MeshOp mesh,
                                              const CostModel &model,
                                              int64_t tied,
                                              unsigned partialFrom) {
  SearchProblem problem(func, model);
  SmallVector<Node> &nodes = problem.nodes;
  NdSbpAttr replicated = getReplicated(mesh);
  StringRef name = SbpDialect::getShardingAttrName();
  Block &entry = func.getFunctionBody().front();
  // Every op in program order, nested ones too, and where each loop's
  // body ends: a value used in a loop lives until the loop's end, one
  // defined in its body only until its last use there.
  DenseMap<Operation *, unsigned> position, loopEnd;
  func.getFunctionBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) { position[op] = problem.numPositions++; });
  func.getFunctionBody().walk([&](scf::ForOp loop) {
    loopEnd[loop] = position.lookup(loop.getBody()->getTerminator());
  });
  auto livePosition = [&](Value value, Operation *at) {
    unsigned live = position.lookup(at);
    Value root = getCarriedRoot(value);
    Operation *scope = root.getParentBlock()->getParentOp();
    for (auto loop = at->getParentOfType<scf::ForOp>();
         loop && !loop->isAncestor(scope);
         loop = loop->getParentOfType<scf::ForOp>())
      live = std::max(live, loopEnd.lookup(loop));
    return live;
  };

  DenseMap<Value, std::pair<int, unsigned>> produced;
  DenseMap<Value, NdSbpAttr> fixed;
  std::map<std::vector<const void *>, SmallVector<NdSbpSignature>>
      signatureCache;
  // A training step hands back its first `tied` arguments updated, in the
  // layout the next step takes them in.
  if (tied < 0) {
    tied = 0;
    if (auto step = func->getAttrOfType<DictionaryAttr>(
            SbpDialect::getTrainStepAttrName()))
      tied = cast<IntegerAttr>(step.get("params")).getInt() +
             cast<IntegerAttr>(step.get("state")).getInt();
  }
  // Inputs share the batch size, dimension 0 of the first result.
  std::optional<int64_t> batch;
  if (tied)
    batch = std::nullopt;
  else if (func.getNumResults() > 0)
    if (auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[0]))
      if (type.getRank() > 0)
        batch = type.getDimSize(0);
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    if (auto layout =
            func.getArgAttrOfType<NdSbpAttr>(arg.getArgNumber(), name)) {
      fixed[arg] = layout;
      continue;
    }
    Node node{NodeKind::Argument};
    node.index = arg.getArgNumber();
    node.layouts = enumerateLayouts(type, mesh);
    node.isParameter =
        tied ? arg.getArgNumber() < tied
             : !(type.getRank() > 0 && batch && type.getDimSize(0) == *batch);
    produced[arg] = {nodes.size(), 0};
    nodes.push_back(std::move(node));
  }

  WalkResult walk =
      func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto annotate = dyn_cast<AnnotateOp>(op))
          fixed[annotate.getResult()] = annotate.getSharding();
        if (auto boxing = dyn_cast<BoxingOp>(op))
          fixed[boxing.getResult()] = boxing.getDst();
        if (!isLayoutDecision(op))
          return WalkResult::advance();
        // Ops of one structure whose constant operands agree (a fill's
        // signatures depend on its value) have the same signatures: the
        // layers of a deep model enumerate them once.
        std::vector<const void *> key;
        if (isa<SbpSignatureOpInterface>(op)) {
          key = getStructuralKey(op, {});
          for (Value operand : op->getOperands())
            if (auto constant = operand.getDefiningOp<arith::ConstantOp>())
              key.push_back(constant.getValue().getAsOpaquePointer());
            else
              key.push_back(nullptr);
        }
        auto cached =
            key.empty() ? signatureCache.end() : signatureCache.find(key);
        Node node{NodeKind::Op, op};
        if (cached != signatureCache.end()) {
          node.signatures = cached->second;
        } else {
          FailureOr<SmallVector<NdSbpSignature>> candidates =
              getCandidateSignatures(op, mesh);
          if (failed(candidates))
            return WalkResult::interrupt();
          node.signatures = std::move(*candidates);
          // As for layouts: `B` alone on axes of one device, unless the
          // op has no such signature (one recorded by hand).
          auto onUnitAxes = [&](NdSbpAttr layout) {
            return layout &&
                   llvm::any_of(llvm::enumerate(layout.getEntries()),
                                [&](auto entry) {
                                  return mesh.getShape()[entry.index()] == 1 &&
                                         !entry.value().isBroadcast();
                                });
          };
          auto redundant = [&](const NdSbpSignature &signature) {
            return llvm::any_of(signature.operands, onUnitAxes) ||
                   llvm::any_of(signature.results, onUnitAxes);
          };
          if (!llvm::all_of(node.signatures, redundant))
            llvm::erase_if(node.signatures, redundant);
          if (!key.empty())
            signatureCache.try_emplace(std::move(key), node.signatures);
        }
        node.multiplicity = getMultiplicity(op);
        for (OpResult result : op->getResults())
          produced[result] = {nodes.size(), result.getResultNumber()};
        nodes.push_back(std::move(node));
        return isa<SbpSignatureOpInterface>(op) ? WalkResult::skip()
                                                : WalkResult::advance();
      });
  if (walk.wasInterrupted())
    return failure();

  SmallVector<int> resultNodes(func.getNumResults(), -1);
  SmallVector<NdSbpAttr> resultLayouts(func.getNumResults());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    if (!type)
      continue;
    if (auto layout = func.getResultAttrOfType<NdSbpAttr>(i, name)) {
      resultLayouts[i] = layout;
      continue;
    }
    if (i < tied) {
      // The argument's node decides both layouts.
      auto it = produced.find(entry.getArgument(i));
      if (it != produced.end()) {
        resultNodes[i] = it->second.first;
        problem.tiedResults.push_back({i, unsigned(it->second.first)});
      } else {
        resultLayouts[i] = fixed.lookup(entry.getArgument(i));
      }
      continue;
    }
    Node node{NodeKind::Result};
    node.index = i;
    node.layouts = enumerateLayouts(type, mesh, i >= partialFrom);
    resultNodes[i] = nodes.size();
    nodes.push_back(std::move(node));
  }

  // Where a value's layout comes from: a node's result or a fixed layout.
  std::function<std::pair<int, unsigned>(Value, NdSbpAttr &)> sourceOf =
      [&](Value value, NdSbpAttr &layout) -> std::pair<int, unsigned> {
    if (auto it = produced.find(value); it != produced.end())
      return it->second;
    if (NdSbpAttr known = fixed.lookup(value)) {
      layout = known;
      return {-1, 0};
    }
    if (auto loop = value.getDefiningOp<scf::ForOp>())
      return sourceOf(
          loop.getInitArgs()[cast<OpResult>(value).getResultNumber()], layout);
    if (auto arg = dyn_cast<BlockArgument>(value))
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
        if (arg.getArgNumber() > 0)
          return sourceOf(loop.getInitArgs()[arg.getArgNumber() - 1], layout);
    layout = replicated;
    return {-1, 0};
  };
  auto addUse = [&](OpOperand &operand, int consumer, unsigned index,
                    NdSbpAttr need, Operation *at, bool needsProduced = false) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    // Re-laying out a tensor without contents costs nothing.
    if (!type || operand.get().getDefiningOp<tensor::EmptyOp>())
      return;
    Use use{type};
    std::tie(use.producer, use.result) =
        sourceOf(operand.get(), use.producerLayout);
    use.consumer = consumer;
    use.operand = index;
    use.consumerLayout = need;
    use.needsProduced = needsProduced;
    use.multiplicity = getMultiplicity(at);
    use.position = position.lookup(at);
    use.liveUntil = livePosition(operand.get(), at);
    problem.uses.push_back(use);
  };
  for (auto [index, node] : llvm::enumerate(nodes)) {
    if (node.kind != NodeKind::Op)
      continue;
    for (OpOperand &operand : node.op->getOpOperands())
      addUse(operand, index, operand.getOperandNumber(), {}, node.op);
  }
  func.walk([&](Operation *op) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      addUse(annotate->getOpOperand(0), -1, 0, annotate.getSharding(), op);
    } else if (op->hasTrait<OpTrait::ReturnLike>() &&
               op->getParentOp() == func.getOperation()) {
      for (OpOperand &operand : op->getOpOperands()) {
        unsigned i = operand.getOperandNumber();
        addUse(operand, resultNodes[i], 0, resultLayouts[i], op);
      }
    } else if (isa<scf::YieldOp>(op) && isa<scf::ForOp>(op->getParentOp())) {
      // The next iteration needs the layout of the initial value.
      auto loop = cast<scf::ForOp>(op->getParentOp());
      for (OpOperand &operand : op->getOpOperands()) {
        NdSbpAttr layout;
        auto [node, result] =
            sourceOf(loop.getInitArgs()[operand.getOperandNumber()], layout);
        addUse(operand, node, result, layout, op, /*needsProduced=*/true);
      }
    }
  });

  // An empty tensor's buffer is allocated by its user, except a loop's,
  // which holds it across the loop (the saved-activation stack).
  auto holdsBytes = [&](OpResult result) {
    if (isInPlaceOnCarried(result))
      return false;
    if (!isa<tensor::EmptyOp>(result.getOwner()))
      return true;
    return llvm::any_of(result.getUsers(),
                        [](Operation *user) { return isa<scf::ForOp>(user); });
  };
  DenseSet<Operation *> repeated = findRepeatedOps(func);
  // Compute times and result bytes, shared by ops of one structure.
  std::map<std::vector<const void *>, unsigned> seen;
  problem.defPosition.assign(nodes.size(), 0);
  problem.lastUse.assign(nodes.size(), 0);
  for (auto [index, node] : llvm::enumerate(nodes)) {
    SmallVector<double> times, bytes;
    if (node.kind == NodeKind::Op) {
      problem.defPosition[index] = problem.lastUse[index] =
          position.lookup(node.op);
      SmallVector<bool> holds =
          llvm::map_to_vector(node.op->getResults(), [&](OpResult result) {
            return !isView(node.op) && holdsBytes(result);
          });
      std::vector<const void *> key =
          getStructuralKey(node.op, node.signatures);
      static const char marker = 0;
      for (bool held : holds)
        key.push_back(held ? &marker : nullptr);
      key.push_back(repeated.contains(node.op) ? &marker : nullptr);
      auto [it, inserted] = seen.try_emplace(std::move(key), index);
      if (!inserted) {
        problem.computeTimes.push_back(problem.computeTimes[it->second]);
        problem.resultBytes.push_back(problem.resultBytes[it->second]);
        continue;
      }
      for (const NdSbpSignature &signature : node.signatures) {
        times.push_back(repeated.contains(node.op)
                            ? 0
                            : model.getComputeTime(
                                  model.getOpWork(node.op, signature)));
        double held = 0;
        for (OpResult result : node.op->getResults())
          if (auto type = dyn_cast<RankedTensorType>(result.getType()))
            if (holds[result.getResultNumber()])
              held += model.getLocalBytes(
                  type, signature.results[result.getResultNumber()]);
        bytes.push_back(held);
      }
    } else if (node.kind == NodeKind::Argument) {
      auto type =
          cast<RankedTensorType>(entry.getArgument(node.index).getType());
      // A stage function's value from another stage arrives over the
      // stages' axis, each device receiving its shard: where the sender's
      // layout is not fixed yet (a candidate stage alone), the search
      // prices that, not the plan, so that a layout cheap to receive wins
      // over an equally fast one that replicates the value.
      auto source = func.getArgAttrOfType<DictionaryAttr>(
          node.index, SbpDialect::getSourceAttrName());
      bool received =
          source && (source.contains("stage") || source.contains("backward"));
      for (NdSbpAttr layout : node.layouts) {
        bytes.push_back(model.getLocalBytes(type, layout));
        times.push_back(received ? model.getTransferTime(0, bytes.back()) : 0);
      }
    } else {
      times.assign(node.layouts.size(), 0);
      bytes.assign(node.layouts.size(), 0);
    }
    problem.computeTimes.push_back(std::move(times));
    problem.resultBytes.push_back(std::move(bytes));
  }
  for (const Use &use : problem.uses)
    if (use.producer >= 0)
      problem.lastUse[use.producer] =
          std::max(problem.lastUse[use.producer], use.liveUntil);
  // A view keeps its source alive as long as itself; views come after
  // their sources, so one backward pass carries lifetimes through chains.
  SmallVector<SmallVector<unsigned>> sourcesOfView(nodes.size());
  for (const Use &use : problem.uses)
    if (use.consumer >= 0 && use.producer >= 0 &&
        nodes[use.consumer].kind == NodeKind::Op &&
        isView(nodes[use.consumer].op))
      sourcesOfView[use.consumer].push_back(use.producer);
  for (int index = nodes.size() - 1; index >= 0; --index)
    for (unsigned source : sourcesOfView[index])
      problem.lastUse[source] =
          std::max(problem.lastUse[source], problem.lastUse[index]);
  return problem;
}

NdSbpAttr SearchProblem::producedLayout(const Use &use, unsigned state) const {
  if (use.producer < 0)
    return use.producerLayout;
  const Node &node = nodes[use.producer];
  return node.kind == NodeKind::Op ? node.signatures[state].results[use.result]
                                   : node.layouts[state];
}

NdSbpAttr SearchProblem::neededLayout(const Use &use, unsigned state) const {
  if (use.consumer < 0)
    return use.consumerLayout;
  const Node &node = nodes[use.consumer];
  if (node.kind != NodeKind::Op)
    return node.layouts[state];
  if (use.needsProduced)
    return node.signatures[state].results[use.operand];
  return node.signatures[state].operands[use.operand];
}

CostGraph SearchProblem::buildGraph(
    double memoryWeight,
    const std::function<bool(const Node &, unsigned)> &allow,
    std::vector<std::vector<unsigned>> &states) const {
  CostGraph graph;
  states.assign(nodes.size(), {});
  for (auto [index, node] : llvm::enumerate(nodes)) {
    for (unsigned s = 0; s < node.getNumStates(); ++s)
      if (!allow || allow(node, s))
        states[index].push_back(s);
    if (states[index].empty())
      for (unsigned s = 0; s < node.getNumStates(); ++s)
        states[index].push_back(s);
    std::vector<double> costs;
    for (unsigned s : states[index])
      costs.push_back(computeTimes[index][s] * node.multiplicity +
                      memoryWeight * resultBytes[index][s]);
    graph.addNode(std::move(costs));
  }
  // Repeated layers ask for the same prices again and again.
  DenseMap<std::tuple<const void *, const void *, const void *>, double> prices;
  auto price = [&](RankedTensorType type, NdSbpAttr from, NdSbpAttr to) {
    auto key =
        std::make_tuple(type.getAsOpaquePointer(), from.getAsOpaquePointer(),
                        to.getAsOpaquePointer());
    auto [it, inserted] = prices.try_emplace(key, 0);
    if (inserted)
      it->second = model->getBoxingTime(type, from, to);
    return it->second;
  };
  // Repeated layers have the same tables between the same layouts.
  std::map<std::vector<const void *>, std::vector<double>> tables;
  // A use with one fixed end costs its node alone.
  std::vector<std::vector<double>> extra(nodes.size());
  for (unsigned index = 0; index < nodes.size(); ++index)
    extra[index].assign(states[index].size(), 0);
  for (const Use &use : uses) {
    if (use.producer >= 0 && use.producer == use.consumer)
      continue;
    if (use.producer < 0 && use.consumer < 0)
      continue;
    if (use.producer < 0 || use.consumer < 0) {
      int node = use.producer < 0 ? use.consumer : use.producer;
      for (auto [k, s] : llvm::enumerate(states[node])) {
        NdSbpAttr from =
            use.producer < 0 ? use.producerLayout : producedLayout(use, s);
        NdSbpAttr to =
            use.consumer < 0 ? use.consumerLayout : neededLayout(use, s);
        extra[node][k] += price(use.type, from, to) * use.multiplicity;
      }
      continue;
    }
    const std::vector<unsigned> &from = states[use.producer];
    const std::vector<unsigned> &to = states[use.consumer];
    SmallVector<NdSbpAttr> produced, needed;
    std::vector<const void *> key = {use.type.getAsOpaquePointer()};
    for (unsigned s : from) {
      produced.push_back(producedLayout(use, s));
      key.push_back(produced.back().getAsOpaquePointer());
    }
    key.push_back(nullptr);
    for (unsigned t : to) {
      needed.push_back(neededLayout(use, t));
      key.push_back(needed.back().getAsOpaquePointer());
    }
    auto [it, inserted] = tables.try_emplace(std::move(key));
    if (inserted) {
      it->second.reserve(from.size() * to.size());
      for (NdSbpAttr layout : produced)
        for (NdSbpAttr need : needed)
          it->second.push_back(price(use.type, layout, need));
    }
    std::vector<double> table = it->second;
    if (use.multiplicity != 1)
      for (double &cost : table)
        cost *= use.multiplicity;
    graph.addEdge(use.producer, use.consumer, std::move(table));
  }
  for (unsigned index = 0; index < nodes.size(); ++index)
    if (llvm::any_of(extra[index], [](double v) { return v != 0; }))
      graph.addNodeCosts(index, extra[index]);
  return graph;
}

PlanCost SearchProblem::evaluate(ArrayRef<unsigned> states,
                                 SmallVectorImpl<OpCost> *perOp) const {
  PlanCost cost;
  Block &entry = func.getFunctionBody().front();
  SmallVector<double> live(numPositions + 1, 0), transient(numPositions, 0);
  DenseMap<unsigned, unsigned> opIndex;
  for (auto [index, node] : llvm::enumerate(nodes)) {
    unsigned s = states[index];
    if (node.kind == NodeKind::Op) {
      double compute = computeTimes[index][s] * node.multiplicity;
      cost.compute += compute;
      live[defPosition[index]] += resultBytes[index][s];
      live[lastUse[index] + 1] -= resultBytes[index][s];
      if (perOp) {
        opIndex[index] = perOp->size();
        perOp->push_back({node.op, node.signatures[s], compute, 0, 0,
                          resultBytes[index][s]});
      }
    } else if (node.kind == NodeKind::Argument) {
      cost.parameterBytes += resultBytes[index][s];
    }
  }
  // Annotated arguments are held too.
  for (BlockArgument arg : entry.getArguments())
    if (auto type = dyn_cast<RankedTensorType>(arg.getType()))
      if (auto layout = func.getArgAttrOfType<NdSbpAttr>(
              arg.getArgNumber(), SbpDialect::getShardingAttrName()))
        cost.parameterBytes += model->getLocalBytes(type, layout);
  for (const Use &use : uses) {
    NdSbpAttr from =
        producedLayout(use, use.producer < 0 ? 0 : states[use.producer]);
    NdSbpAttr to =
        neededLayout(use, use.consumer < 0 ? 0 : states[use.consumer]);
    if (!from || !to || from == to)
      continue;
    BoxingCost boxing = model->getBoxingCost(use.type, from, to);
    double time = boxing.time * use.multiplicity;
    double bytes = boxing.bytes * use.multiplicity;
    cost.communication += time;
    cost.bytesMoved += bytes;
    transient[use.position] += model->getLocalBytes(use.type, to);
    if (perOp && use.consumer >= 0 && opIndex.count(use.consumer)) {
      OpCost &op = (*perOp)[opIndex[use.consumer]];
      op.communication += time;
      op.bytesMoved += bytes;
    }
  }
  double running = 0, peak = 0;
  for (unsigned p = 0; p < numPositions; ++p) {
    running += live[p];
    peak = std::max(peak, running + transient[p]);
  }
  cost.peakMemory = cost.parameterBytes + peak;
  return cost;
}

void SearchProblem::record(ArrayRef<unsigned> states) const {
  StringRef name = SbpDialect::getShardingAttrName();
  for (auto [index, node] : llvm::enumerate(nodes)) {
    unsigned s = states[index];
    switch (node.kind) {
    case NodeKind::Op:
      // Uninitialized tensors take their users' layouts in propagation.
      if (isa<tensor::EmptyOp>(node.op))
        break;
      setOpShardings(node.op, node.signatures[s].operands,
                     node.signatures[s].results);
      break;
    case NodeKind::Argument:
      func.setArgAttr(node.index, name, node.layouts[s]);
      break;
    case NodeKind::Result:
      func.setResultAttr(node.index, name, node.layouts[s]);
      break;
    }
  }
  for (auto [result, node] : tiedResults)
    func.setResultAttr(result, name, nodes[node].layouts[states[node]]);
}
