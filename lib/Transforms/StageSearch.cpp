//===- StageSearch.cpp - Searching one pipeline stage ---------------------===//
//
// Each candidate stage of a pipeline is searched on its sub-mesh with its
// layouts `B` along the stage axis; a training stage's backward first,
// then its forward and update with the layouts they share fixed. See
// StageSearch.h.
//
//===----------------------------------------------------------------------===//

#include "StageSearch.h"
#include "mlir/IR/Diagnostics.h"
#include "sbp/Transforms/Propagation.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::detail;

namespace {

/// Stage plans live on the pipeline mesh with every layout `B` along its
/// first axis (the stages), so that a stage's collectives stay within it.
bool isWithinStage(NdSbpAttr layout) {
  return !layout || layout.getEntries()[0].isBroadcast();
}

bool allowWithinStage(const SearchProblem::Node &node, unsigned state) {
  if (node.kind != SearchProblem::NodeKind::Op)
    return isWithinStage(node.layouts[state]);
  const NdSbpSignature &signature = node.signatures[state];
  return llvm::all_of(signature.operands, isWithinStage) &&
         llvm::all_of(signature.results, isWithinStage);
}

/// Megatron-LM's layouts (getDataTensorParallel) on the axes of a stage
/// mesh after the stages': the stage function's inputs that `batching`
/// cuts along dimension 0 are batches, its other inputs are parameters or
/// optimizer state; what it receives from other stages or saved for its
/// backward is free.
Allow getStageReference(func::FuncOp func, const SearchProblem &problem,
                        const MicroBatching &batching) {
  auto roles = [func, dims = batching.argDims](
                   unsigned i) mutable -> std::optional<bool> {
    int64_t input = getSourceField(func, i, "input");
    if (input < 0 || dims[input] > 0)
      return std::nullopt;
    return dims[input] < 0;
  };
  Allow reference = getDataTensorParallel(problem, 1, roles);
  return [reference](const SearchProblem::Node &node, unsigned state) {
    return allowWithinStage(node, state) && reference(node, state);
  };
}

/// The bytes per device that stage `k` of `stages`, its layouts recorded,
/// sends the later stages per micro-batch: its shard of each result they
/// receive.
double getSentBytes(ArrayRef<func::FuncOp> stages, int64_t k,
                    const CostModel &model) {
  func::FuncOp sender = stages[k];
  llvm::SmallDenseSet<int64_t> results;
  for (func::FuncOp later : stages.drop_front(k + 1))
    for (unsigned i = 0; i < later.getNumArguments(); ++i)
      if (getSourceField(later, i, "stage") == k)
        results.insert(getSourceField(later, i, "result"));
  double bytes = 0;
  for (int64_t r : results)
    if (auto type = dyn_cast<RankedTensorType>(sender.getResultTypes()[r]))
      bytes +=
          model.getLocalBytes(type, sender.getResultAttrOfType<NdSbpAttr>(
                                        r, SbpDialect::getShardingAttrName()));
  return bytes;
}

NdSbpAttr getArgLayout(func::FuncOp func, unsigned i) {
  return func.getArgAttrOfType<NdSbpAttr>(i, SbpDialect::getShardingAttrName());
}

void setArgLayout(func::FuncOp func, unsigned i, NdSbpAttr layout) {
  if (layout)
    func.setArgAttr(i, SbpDialect::getShardingAttrName(), layout);
}

void setResultLayout(func::FuncOp func, unsigned i, NdSbpAttr layout) {
  if (layout)
    func.setResultAttr(i, SbpDialect::getShardingAttrName(), layout);
}

} // namespace

FailureOr<StageSearch> mlir::sbp::detail::searchStage(
    func::FuncOp func, MeshOp mesh, const CostModel &model, double limit,
    double timeLimit, double &leastMemory, const MicroBatching *reference,
    int64_t tied, unsigned partialFrom) {
  FailureOr<SearchProblem> problem =
      SearchProblem::build(func, mesh, model, tied, partialFrom);
  if (failed(problem))
    return failure();
  FailureOr<Plan> plan = searchWithinMemory(
      *problem, limit, timeLimit, leastMemory, [](const Twine &) {},
      reference ? getStageReference(func, *problem, *reference)
                : Allow(allowWithinStage));
  if (failed(plan))
    return failure();
  problem->record(plan->states);
  return StageSearch{std::move(*problem), std::move(*plan)};
}

std::optional<Training> mlir::sbp::detail::getTraining(func::FuncOp func) {
  auto step =
      func->getAttrOfType<DictionaryAttr>(SbpDialect::getTrainStepAttrName());
  if (!step)
    return std::nullopt;
  return Training{getOptimizerSpec(func),
                  cast<IntegerAttr>(step.get("params")).getInt(),
                  cast<IntegerAttr>(step.get("state")).getInt()};
}

LogicalResult
mlir::sbp::detail::microBatchForPipeline(func::FuncOp func, func::FuncOp target,
                                         int64_t count,
                                         MicroBatching &batching) {
  bool train = getTraining(func).has_value();
  SmallVector<int64_t> batchArgs =
      train ? getTrainBatchArgs(func) : getDefaultBatchArgs(func);
  if (train)
    reduceToLoss(target);
  return microBatch(target, count, batchArgs, batching);
}

LogicalResult mlir::sbp::detail::outlineTrainingStages(
    func::FuncOp func, const MicroBatching &batching, const Training &train,
    SmallVectorImpl<func::FuncOp> &forward,
    SmallVectorImpl<func::FuncOp> &backward,
    SmallVectorImpl<func::FuncOp> &update,
    SmallVectorImpl<PipelineOutput> &outputs, int64_t only) {
  SmallVector<PipelineOutput> lossOutputs;
  FailureOr<SmallVector<func::FuncOp>> stages =
      outlineStages(func, batching, lossOutputs);
  if (failed(stages))
    return failure();
  forward.assign(stages->begin(), stages->end());
  return buildTrainingStages(func, train.spec, train.params, train.state,
                             forward, lossOutputs.front(), backward, update,
                             outputs, only);
}

FailureOr<RangeCost> mlir::sbp::detail::searchTrainingStage(
    ArrayRef<func::FuncOp> forward, ArrayRef<func::FuncOp> backward,
    ArrayRef<func::FuncOp> update, int64_t k, MeshOp mesh,
    const CostModel &model, double limit, double timeLimit, double &leastMemory,
    const MicroBatching *reference, OnSearched onSearched) {
  func::FuncOp fwd = forward[k], back = backward[k], apply = update[k];
  // Per function (forward, backward, update): its search, whose layouts
  // are recorded at once for the next function to read.
  struct Searched {
    func::FuncOp func;
    SearchProblem problem;
    Plan plan;
  };
  std::optional<Searched> searched[3];
  auto search = [&](unsigned slot, func::FuncOp func, int64_t tied,
                    double within,
                    unsigned partialFrom = ~0u) -> FailureOr<PlanCost> {
    FailureOr<StageSearch> stage =
        searchStage(func, mesh, model, within, timeLimit, leastMemory,
                    reference, tied, partialFrom);
    if (failed(stage))
      return failure();
    PlanCost cost = stage->plan.cost;
    searched[slot].emplace(
        Searched{func, std::move(stage->problem), std::move(stage->plan)});
    return cost;
  };

  // The backward takes the forward's arguments first; it returns the
  // gradients of the received ones first, in argument order.
  unsigned numArgs = fwd.getNumArguments(), numReceived = 0;
  for (unsigned i = 0; i < numArgs; ++i) {
    setArgLayout(back, i, getArgLayout(fwd, i));
    if (getSourceField(fwd, i, "stage") >= 0)
      setResultLayout(back, numReceived++, getArgLayout(fwd, i));
  }
  // The forward result each gradient argument belongs to: later stages'
  // received arguments from this one, in stage and argument order.
  SmallVector<int64_t> resultOf;
  for (func::FuncOp later : forward.drop_front(k + 1))
    for (unsigned i = 0; i < later.getNumArguments(); ++i)
      if (getSourceField(later, i, "stage") == k)
        resultOf.push_back(getSourceField(later, i, "result"));
  FailureOr<PlanCost> backCost = search(1, back, 0, limit, numReceived);
  if (failed(backCost))
    return failure();
  // A result sent to several stages comes back from each: once in one
  // layout.
  DenseMap<int64_t, NdSbpAttr> sentLayout;
  bool agree = true;
  for (auto [j, result] : llvm::enumerate(resultOf)) {
    NdSbpAttr layout = getArgLayout(back, numArgs + j);
    auto [it, inserted] = sentLayout.try_emplace(result, layout);
    agree &= inserted || it->second == layout;
  }
  if (!agree) {
    for (auto [j, result] : llvm::enumerate(resultOf))
      setArgLayout(back, numArgs + j, sentLayout.lookup(result));
    backCost = search(1, back, 0, limit, numReceived);
    if (failed(backCost))
      return failure();
  }

  for (unsigned i = 0; i < numArgs; ++i)
    setArgLayout(fwd, i, getArgLayout(back, i));
  for (auto [result, layout] : sentLayout)
    setResultLayout(fwd, result, layout);
  // What the forward saves for the backward (its last results) it returns
  // as the backward takes it.
  double saved = 0;
  unsigned numResults = fwd.getNumResults(), numSaved = 0;
  for (unsigned a = numArgs; a < back.getNumArguments(); ++a)
    numSaved += getSourceField(back, a, "saved") >= 0;
  for (unsigned a = numArgs; a < back.getNumArguments(); ++a)
    if (int64_t j = getSourceField(back, a, "saved"); j >= 0) {
      setResultLayout(fwd, numResults - numSaved + j, getArgLayout(back, a));
      saved += model.getLocalBytes(
          cast<RankedTensorType>(back.getArgumentTypes()[a]),
          getArgLayout(back, a));
    }
  FailureOr<PlanCost> fwdCost = search(0, fwd, 0, limit);
  if (failed(fwdCost))
    return failure();

  // The backward's layout of each input (or rows of one) held in the
  // stage.
  std::map<std::pair<int64_t, int64_t>, NdSbpAttr> heldLayout;
  for (unsigned a = 0; a < back.getNumArguments(); ++a)
    if (getSourceField(back, a, "input") >= 0 &&
        getSourceField(back, a, "micro_batch_dim") < 0)
      heldLayout[{getSourceField(back, a, "input"),
                  getSourceField(back, a, "offset")}] = getArgLayout(back, a);
  unsigned numKept = 0;
  // The runtime adds each micro-batch's parameter gradients into the
  // step's sums (`sum += gradient`: two reads and a write a micro-batch).
  double summing = 0;
  for (unsigned i = 0; i < apply.getNumArguments(); ++i) {
    int64_t gradient = getSourceField(apply, i, "gradient");
    if (gradient >= 0) {
      auto layout = back.getResultAttrOfType<NdSbpAttr>(
          numReceived + gradient, SbpDialect::getShardingAttrName());
      setArgLayout(apply, i, layout);
      summing += model.getElementwiseTime(
          cast<RankedTensorType>(apply.getArgumentTypes()[i]), layout,
          /*inputs=*/2);
      continue;
    }
    // The i-th result is the i-th argument updated.
    auto it = heldLayout.find({getSourceField(apply, i, "input"),
                               getSourceField(apply, i, "offset")});
    if (it != heldLayout.end()) {
      setArgLayout(apply, i, it->second);
      setResultLayout(apply, numKept, it->second);
    }
    ++numKept;
  }
  // The update holds the parameters, their state and the summed gradients
  // beside the passes' working memory: the memory left to it is what
  // shards the state (ZeRO) when the whole does not fit.
  double held = 0;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto type = dyn_cast<RankedTensorType>(fwd.getArgumentTypes()[i]);
    if (!type)
      continue;
    double bytes = model.getLocalBytes(type, getArgLayout(fwd, i));
    if (getSourceField(fwd, i, "stage") >= 0)
      saved += bytes;
    else if (getSourceField(fwd, i, "micro_batch_dim") < 0)
      held += bytes;
  }
  double working = std::max(fwdCost->peakMemory, backCost->peakMemory) - held;
  FailureOr<PlanCost> updateCost =
      search(2, apply, numKept, std::max(limit - working, 0.0));
  if (failed(updateCost)) {
    leastMemory += working;
    return failure();
  }

  for (std::optional<Searched> &each : searched)
    if (failed(onSearched(each->func, each->problem, each->plan)))
      return failure();

  // Held throughout: what the update holds and the passes' working
  // memory; per micro-batch in flight: what the forward received and what
  // its loops saved, kept for the backward.
  RangeCost cost;
  cost.time = fwdCost->stepTime();
  cost.backward = backCost->stepTime() + summing;
  cost.summing = summing;
  cost.update = updateCost->stepTime();
  cost.parameters = updateCost->peakMemory + working;
  cost.activations = saved;
  return cost;
}

RangeCost mlir::sbp::detail::priceRange(func::FuncOp base, int64_t begin,
                                        int64_t end,
                                        const MicroBatching &batching,
                                        MeshOp mesh, const CostModel &model,
                                        double limit, double timeLimit,
                                        const Training *train, bool reference) {
  const MicroBatching *constrain = reference ? &batching : nullptr;
  OpBuilder builder(base);
  builder.setInsertionPointAfter(base);
  auto func = cast<func::FuncOp>(builder.clone(*base));
  func.setName((base.getName() + "_range").str());
  llvm::scope_exit erase([&] { func.erase(); });
  SmallVector<int64_t> cuts = {begin, end};
  assignStagesAtUnits(func, cuts);
  RangeCost cost;
  double leastMemory = 0;
  SmallVector<func::FuncOp> forward, backward, update;
  SmallVector<PipelineOutput> outputs;
  if (train) {
    // A cut the training pipeline cannot take (a weight two stages share)
    // is not a candidate.
    ScopedDiagnosticHandler quiet(func.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (succeeded(outlineTrainingStages(func, batching, *train, forward,
                                        backward, update, outputs,
                                        /*only=*/1))) {
      FailureOr<RangeCost> searched =
          searchTrainingStage(forward, backward, update, 1, mesh, model, limit,
                              timeLimit, leastMemory, constrain,
                              [](func::FuncOp, const SearchProblem &,
                                 const Plan &) { return success(); });
      if (succeeded(searched)) {
        cost = *searched;
        cost.sent = getSentBytes(forward, 1, model);
      }
    }
  } else if (FailureOr<SmallVector<func::FuncOp>> stages =
                 outlineStages(func, batching, outputs);
             failed(stages)) {
    return cost;
  } else {
    forward.assign(stages->begin(), stages->end());
    if (FailureOr<StageSearch> stage = searchStage(
            forward[1], mesh, model, limit, timeLimit, leastMemory, constrain);
        succeeded(stage)) {
      const PlanCost &plan = stage->plan.cost;
      cost.time = plan.stepTime();
      cost.parameters = plan.parameterBytes;
      cost.activations = plan.peakMemory - plan.parameterBytes;
      cost.sent = getSentBytes(forward, 1, model);
    }
  }
  for (func::FuncOp stage :
       llvm::concat<func::FuncOp>(forward, backward, update))
    if (stage)
      stage.erase();
  return cost;
}
