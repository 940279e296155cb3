//===- SplitStages.cpp - Cut a function into pipeline stages --------------===//
//
// The pipeline of a user who chose the stages (by `sbp.stage` or by count);
// sbp-auto-parallel chooses them itself and shares the steps
// (Pipelining.h).
//
//===----------------------------------------------------------------------===//

#include "sbp/Cost/Cluster.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Pipelining.h"
#include "sbp/Transforms/TrainStep.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPSPLITSTAGESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

struct SbpSplitStagesPass
    : public sbp::impl::SbpSplitStagesPassBase<SbpSplitStagesPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The function named by `function`, else the module's only one.
  func::FuncOp findFunction();
};

func::FuncOp SbpSplitStagesPass::findFunction() {
  ModuleOp module = getOperation();
  if (!function.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal())
      module.emitError() << "sbp-split-stages: function=" << function
                         << ": no function of that name with a body";
    return func && !func.isExternal() ? func : func::FuncOp();
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      candidates.push_back(func);
  if (candidates.size() != 1) {
    module.emitError() << "sbp-split-stages: the module has "
                       << candidates.size()
                       << " functions with a body; name one with function=";
    return {};
  }
  return candidates.front();
}

void SbpSplitStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (schedule != "gpipe" && schedule != "1f1b") {
    module.emitError() << "sbp-split-stages: schedule=" << schedule
                       << ": expected gpipe or 1f1b";
    return signalPassFailure();
  }
  if (microBatches < 1 || stages < 0) {
    module.emitError() << "sbp-split-stages: "
                       << (microBatches < 1 ? "micro-batches" : "stages")
                       << " must be positive";
    return signalPassFailure();
  }
  if (module->hasAttr(SbpDialect::getPipelineAttrName())) {
    module.emitError() << "sbp-split-stages: the module is already a pipeline";
    return signalPassFailure();
  }
  func::FuncOp func = findFunction();
  if (!func)
    return signalPassFailure();
  if (!func.getBody().hasOneBlock()) {
    emitError(func.getLoc()) << "sbp-split-stages: @" << func.getSymName()
                             << " has more than one block";
    return signalPassFailure();
  }

  bool annotated = false;
  func.walk([&](Operation *op) {
    annotated |= op->hasAttr(SbpDialect::getStageAttrName());
  });
  if (stages && annotated) {
    emitError(func.getLoc())
        << "sbp-split-stages: stages=" << static_cast<int64_t>(stages)
        << " and the sbp.stage attributes of @" << func.getSymName()
        << " both give the stages; use one";
    return signalPassFailure();
  }
  if (!stages && !annotated) {
    emitError(func.getLoc())
        << "sbp-split-stages: no stages for @" << func.getSymName()
        << ": give stages=K or sbp.stage on its ops";
    return signalPassFailure();
  }

  // A training step is pipelined as its loss function, whose stages then
  // get their backward and update functions.
  auto trainStep =
      func->getAttrOfType<DictionaryAttr>(SbpDialect::getTrainStepAttrName());
  OptimizerSpec optimizer = getOptimizerSpec(func);
  SmallVector<int64_t> batch(batchArgs.begin(), batchArgs.end());
  if (batchArgs.empty())
    batch = trainStep ? getTrainBatchArgs(func) : getDefaultBatchArgs(func);
  for (int64_t arg : batch)
    if (arg < 0 || arg >= func.getNumArguments()) {
      emitError(func.getLoc())
          << "sbp-split-stages: batch-args: @" << func.getSymName()
          << " has no argument #" << arg;
      return signalPassFailure();
    }
  if (trainStep)
    reduceToLoss(func);
  MicroBatching batching;
  if (failed(microBatch(func, microBatches, batch, batching)))
    return signalPassFailure();

  if (stages) {
    splitLayerLoops(func, stages);
    int64_t ops = getPlaceableOps(func).size();
    if (ops < stages) {
      emitError(func.getLoc())
          << "sbp-split-stages: stages=" << static_cast<int64_t>(stages)
          << ": @" << func.getSymName() << " has only " << ops
          << " ops to place";
      return signalPassFailure();
    }
    assignBalancedStages(func, stages);
  }
  SmallVector<PipelineOutput> outputs;
  FailureOr<SmallVector<func::FuncOp>> stageFuncs =
      outlineStages(func, batching, outputs);
  if (failed(stageFuncs))
    return signalPassFailure();
  SmallVector<int64_t> shape = {static_cast<int64_t>(stageFuncs->size())};
  if (!mesh.empty()) {
    std::optional<SmallVector<int64_t>> parsed = parseMeshShape(mesh);
    if (!parsed || (*parsed)[0] != shape[0]) {
      emitError(func.getLoc())
          << "sbp-split-stages: mesh=" << mesh
          << (parsed ? ": its first axis numbers the stages, so it must be "
                     : ": expected sizes separated by 'x' whose first is ")
          << shape[0];
      for (func::FuncOp stage : *stageFuncs)
        stage.erase();
      return signalPassFailure();
    }
    shape = *parsed;
  }
  SmallVector<func::FuncOp> backward, update;
  if (trainStep) {
    SmallVector<PipelineOutput> stepOutputs;
    if (failed(buildTrainingStages(
            func, optimizer,
            cast<IntegerAttr>(trainStep.get("params")).getInt(),
            cast<IntegerAttr>(trainStep.get("state")).getInt(), *stageFuncs,
            outputs.front(), backward, update, stepOutputs)))
      return signalPassFailure();
    outputs = std::move(stepOutputs);
  }
  recordPipeline(module, func.getSymName(), *stageFuncs,
                 createPipelineMesh(module, shape), microBatches, schedule,
                 outputs, backward, update);
  func.erase();
}

} // namespace
