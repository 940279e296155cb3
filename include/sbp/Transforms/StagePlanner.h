//===- StagePlanner.h - Choosing pipeline stages ----------------*- C++ -*-===//
//
// The inter-stage half of sbp-auto-parallel (Alpa's inter-operator pass):
// how many stages, where to cut the program, on which sub-mesh each stage
// runs and how many micro-batches, priced with the intra-stage search on
// every candidate stage.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_STAGEPLANNER_H
#define SBP_TRANSFORMS_STAGEPLANNER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "sbp/Cost/CostModel.h"
#include "sbp/Runtime/Schedule.h"
#include "sbp/Transforms/SearchProblem.h"
#include <optional>

namespace mlir {
namespace sbp {

struct PipelineSearchOptions {
  /// Stages: 1 is no pipeline, 0 lets the search choose.
  int64_t stages = 1;
  /// Micro-batches: 0 lets the search choose among 1, 2, 4, 8 and 16.
  int64_t microBatches = 0;
  ::sbp::runtime::PipelineSchedule schedule =
      ::sbp::runtime::PipelineSchedule::OneFOneB;
  double memoryLimit = 0;
  /// Seconds each integer program may take.
  double timeLimit = 60;
};

/// A pipeline the search chose.
struct PipelinePlan {
  int64_t stages = 1, microBatches = 1;
  ::sbp::runtime::PipelineSchedule schedule =
      ::sbp::runtime::PipelineSchedule::OneFOneB;
  /// The whole mesh: the stages along axis 0, each on the rest.
  SmallVector<int64_t> mesh;
  /// Where each stage after the first begins, as an index into the
  /// micro-batched function's top-level ops.
  SmallVector<int64_t> cuts;
  /// Whether the stages are a training step's, each with a backward and
  /// an update.
  bool training = false;
  /// Per stage, per micro-batch.
  std::vector<::sbp::runtime::StageTimes> times;
  /// Per stage: its update, once per step (training).
  SmallVector<double> updates;
  /// Per stage, per micro-batch: adding its gradients into the step's sums
  /// (training; part of its backward time).
  SmallVector<double> sums;
  /// Per stage: bytes per device with the activations the schedule keeps.
  SmallVector<double> memory;
  /// The predicted timeline of one step, its length and its bubble.
  std::vector<::sbp::runtime::TimedTask> timeline;
  double stepTime = 0, bubble = 0;
  /// Stage plans priced to find it.
  unsigned candidates = 0;
};

/// Searches for the fastest pipeline of `func` on the cluster, whose
/// `mesh` is cut along its first axis into stages. Returns nothing when
/// the options allow no pipeline or none is faster than `singleStepTime`
/// (the best plan without stages; +inf when none fits); fails with an
/// error when the options ask for a pipeline that cannot be built.
FailureOr<std::optional<PipelinePlan>>
planPipeline(func::FuncOp func, const Cluster &cluster, ArrayRef<int64_t> mesh,
             const PipelineSearchOptions &options, double singleStepTime,
             function_ref<void(const Twine &)> progress);

/// Prices Megatron-LM's pipeline of `like`'s stages, micro-batches,
/// schedule and mesh, the report's "data x tensor parallel" reference: the
/// layers of the loops over layers dealt evenly to the stages (what comes
/// before them to the first, what follows them to the last; units of
/// equal work without such a loop), each stage in Megatron-LM's layouts
/// (getDataTensorParallel on the axes after the stages') and, as the
/// other references, without a memory limit. Fails quietly when there is
/// no such pipeline (a stage mesh of one axis, fewer units than stages).
FailureOr<PipelinePlan>
priceReferencePipeline(func::FuncOp func, const Cluster &cluster,
                       const PipelinePlan &like,
                       const PipelineSearchOptions &options);

/// Turns `func` into the pipeline `plan` describes (sbp-split-stages'
/// form) and records each stage's layouts, searched on its sub-mesh with
/// the layouts of the values it receives fixed by their senders.
/// `onStage` hears of each stage's search.
LogicalResult
applyPipelinePlan(func::FuncOp func, const PipelinePlan &plan,
                  const Cluster &cluster, const PipelineSearchOptions &options,
                  function_ref<void(func::FuncOp, const SearchProblem &,
                                    const Plan &, const CostModel &, MeshOp)>
                      onStage);

/// Writes the predicted timeline as an SVG: a row per stage, a box per
/// task.
LogicalResult writeTimelineSvg(StringRef path, const PipelinePlan &plan);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_STAGEPLANNER_H
