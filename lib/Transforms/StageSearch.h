//===- StageSearch.h - Searching one pipeline stage -------------*- C++ -*-===//
//
// The intra-stage half of the pipeline search (StagePlanner.cpp): a stage
// function searched on its sub-mesh, a training stage's forward, backward
// and update searched together, and a candidate range of layer units
// priced as a stage. Private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_TRANSFORMS_STAGESEARCH_H
#define SBP_LIB_TRANSFORMS_STAGESEARCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "sbp/Cost/CostModel.h"
#include "sbp/Transforms/Pipelining.h"
#include "sbp/Transforms/SearchProblem.h"
#include "sbp/Transforms/TrainStep.h"
#include <limits>
#include <optional>

namespace mlir {
namespace sbp {
namespace detail {

/// A stage function's search and the plan it chose.
struct StageSearch {
  SearchProblem problem;
  Plan plan;
};

/// Searches the stage function `func` on `mesh` within `limit` bytes per
/// device (its first `tied` arguments come back as its first results; those
/// from `partialFrom` on may be partial sums) and records the layouts; in
/// Megatron-LM's layouts when `reference` (the micro-batching) is given.
/// Fails quietly, with the least memory a plan needs in `leastMemory`.
FailureOr<StageSearch> searchStage(func::FuncOp func, MeshOp mesh,
                                   const CostModel &model, double limit,
                                   double timeLimit, double &leastMemory,
                                   const MicroBatching *reference,
                                   int64_t tied = 0,
                                   unsigned partialFrom = ~0u);

/// What one candidate stage costs on its sub-mesh.
struct RangeCost {
  /// Per micro-batch: the forward, and for a training stage its backward.
  double time = std::numeric_limits<double>::infinity();
  double backward = 0;
  /// Once per step: a training stage's update.
  double update = 0;
  /// Per micro-batch, within `backward`: adding its parameter gradients
  /// into the step's sums.
  double summing = 0;
  /// Bytes per device held throughout, and per micro-batch in flight.
  double parameters = 0, activations = 0;
  /// Bytes each device sends the next stage per micro-batch (its shards of
  /// what crosses the range's end; a training stage's gradients of them
  /// come back alike).
  double sent = 0;
};

/// What rebuilds a training step's backward and update per stage once its
/// loss function is cut.
struct Training {
  OptimizerSpec spec;
  int64_t params = 0, state = 0;
};

/// The training step `func`'s, or nothing for a forward program.
std::optional<Training> getTraining(func::FuncOp func);

/// Micro-batches `target`, `func` or a copy of it, into `count`: a
/// training step's loss function (Pipelining.h) along the step's batch
/// arguments, a forward program along the default ones.
LogicalResult microBatchForPipeline(func::FuncOp func, func::FuncOp target,
                                    int64_t count, MicroBatching &batching);

/// Outlines the stages of `func` (a training step's loss function when
/// `train`), assigned by `sbp.stage`, with their backward and update
/// functions (stage `only`'s alone when given); the step's outputs in
/// `outputs`.
LogicalResult outlineTrainingStages(func::FuncOp func,
                                    const MicroBatching &batching,
                                    const Training &train,
                                    SmallVectorImpl<func::FuncOp> &forward,
                                    SmallVectorImpl<func::FuncOp> &backward,
                                    SmallVectorImpl<func::FuncOp> &update,
                                    SmallVectorImpl<PipelineOutput> &outputs,
                                    int64_t only = -1);

/// Hears of each function a stage search placed, with its layouts recorded.
using OnSearched = function_ref<LogicalResult(
    func::FuncOp, const SearchProblem &, const Plan &)>;

/// Searches stage `k` of a training pipeline (`forward`, `backward` and
/// `update` per stage, as buildTrainingStages makes them) on `mesh`, and
/// records the layouts. The backward, which recomputes the stage's layers
/// and does twice their work again, is searched first, with what the stage
/// receives in the layouts its senders already have and the gradients it
/// sends back in those layouts too; the forward then takes its arguments
/// as the backward does and sends each result in the layout in which its
/// gradient comes back; the update keeps the parameters in the backward's
/// layouts (its optimizer state is free: ZeRO-style sharding) and takes
/// the summed gradients as the backward returns them: possibly partial
/// sums, which the runtime adds up over micro-batches so that the update
/// reduces them once per step. `reference` as for searchStage. Fails
/// quietly when no plan fits, with the least memory one needed in
/// `leastMemory`.
FailureOr<RangeCost> searchTrainingStage(
    ArrayRef<func::FuncOp> forward, ArrayRef<func::FuncOp> backward,
    ArrayRef<func::FuncOp> update, int64_t k, MeshOp mesh,
    const CostModel &model, double limit, double timeLimit, double &leastMemory,
    const MicroBatching *reference, OnSearched onSearched);

/// Prices layer units [begin, end) (getLayerUnits) of the micro-batched
/// `base` as a stage: a copy cut there, outlined and searched on `mesh`
/// under `model` (in Megatron-LM's layouts when `reference`). A training
/// step's loss function (`train`) is priced with the stage's backward and
/// update.
RangeCost priceRange(func::FuncOp base, int64_t begin, int64_t end,
                     const MicroBatching &batching, MeshOp mesh,
                     const CostModel &model, double limit, double timeLimit,
                     const Training *train, bool reference);

} // namespace detail
} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_TRANSFORMS_STAGESEARCH_H
