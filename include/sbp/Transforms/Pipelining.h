//===- Pipelining.h - Micro-batches and pipeline stages ---------*- C++ -*-===//
//
// What sbp-split-stages and the stage search of sbp-auto-parallel share:
// cutting a logical function into micro-batches (an SBP partition along a
// virtual axis on which nothing may be communicated), assigning its ops to
// stages, outlining each stage into a function of its own, and the
// `sbp.pipeline` description the runtime executes.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_PIPELINING_H
#define SBP_TRANSFORMS_PIPELINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"

namespace mlir {
namespace sbp {

struct OptimizerSpec;

/// How the micro-batches' results of one function result make the whole.
struct MicroBatchResult {
  enum Kind {
    /// Concatenated along `dim`.
    Concat,
    /// Summed element-wise (a partial sum over the batch).
    Sum,
    /// Equal in every micro-batch (does not depend on the batch).
    Same,
  } kind = Same;
  int64_t dim = 0;
};

/// How a function was cut into micro-batches.
struct MicroBatching {
  int64_t count = 1;
  /// Per argument: the dimension it is cut along, or -1 when every
  /// micro-batch takes it whole (parameters).
  SmallVector<int64_t> argDims;
  SmallVector<MicroBatchResult> results;
};

/// The arguments that are cut into micro-batches when the user names none:
/// those whose dimension 0 is a parallel loop of every linalg op that reads
/// them and has the size of the first such integer argument's (else of the
/// first such argument's).
SmallVector<int64_t> getDefaultBatchArgs(func::FuncOp func);

/// Rewrites `func` in place into the program of one of `count`
/// micro-batches: the arguments `batchArgs` are split along dimension 0,
/// the others taken whole, and every op takes the signature that needs no
/// communication between micro-batches. Fails with an error at the op that
/// needs all micro-batches at once (a normalization over the batch), and at
/// arguments whose dimension 0 does not divide.
LogicalResult microBatch(func::FuncOp func, int64_t count,
                         ArrayRef<int64_t> batchArgs, MicroBatching &info);

/// Whether the op's result is cheaper to compute again in a later stage
/// than to send there: constants, empty tensors, fills of them, and rows
/// of an argument (see getArgumentRows), which a stage takes from the
/// input.
bool isCheapToRecompute(Operation *op);

/// The argument `value` is rows of, when it is a static
/// `tensor.extract_slice` of a function argument along dimension 0 only;
/// its first row in `offset`.
BlockArgument getArgumentRows(Value value, int64_t &offset);

/// Splits each top-level `scf.for` of `func` over layers into at most
/// `pieces` consecutive loops (for 0 to L step 1 that reads some
/// arguments of L rows only as `tensor.extract_slice`s of row `iv`, the
/// stacked weights of its layers): each reads its own rows of those
/// arguments, so that a loop's layers can go to several stages, each
/// stage taking only its layers' weights. Returns how many loops it split.
int64_t splitLayerLoops(func::FuncOp func, int64_t pieces);

/// Per placeable op of `func` (getPlaceableOps), the layers it holds: the
/// trip count of a loop over layers that splitLayerLoops cuts, 1 for any
/// other op. A stage boundary can fall before any of these units.
SmallVector<int64_t> getLayerUnits(func::FuncOp func);

/// Assigns `sbp.stage` to the placeable ops of `func`: the stage of unit u
/// (getLayerUnits, numbered across ops) is the number of `cuts` (sorted)
/// at or before u. A loop over layers that cuts fall inside is split there
/// first, so that each stage runs its layers as one loop.
void assignStagesAtUnits(func::FuncOp func, ArrayRef<int64_t> cuts);

/// The top-level ops of `func` that a stage owns (not cheap to recompute),
/// in order.
SmallVector<Operation *> getPlaceableOps(func::FuncOp func);

/// Iteration points of the linalg ops in `op` (dynamic ranges count 1):
/// the work stages are balanced by.
double getIterationWork(Operation *op);

/// Assigns the top-level ops of `func` to `stages` stages in program order
/// with balanced iteration-space work (`sbp.stage` on each op).
void assignBalancedStages(func::FuncOp func, int64_t stages);

/// One function result of a pipelined program.
struct PipelineOutput {
  int64_t stage = 0, result = 0;
  MicroBatchResult combine;
  /// A result of the stage's update function (a training step's updated
  /// parameter or optimizer state), computed once per step.
  bool update = false;
  /// An update output whose rows several stages own: each (stage, result)
  /// in order along dimension 0 (`stage` and `result` are the first).
  SmallVector<std::pair<int64_t, int64_t>> rows;
};

/// Outlines the ops of `func`, assigned to stages by `sbp.stage` (ops
/// without one join the earliest stage that uses them; constants and
/// other cheap producers are recomputed where used), into functions
/// `<func>_stage<k>` placed after it, whose arguments say where their
/// values come from (`sbp.source`): a stage that uses rows of an argument
/// not cut into micro-batches takes just those rows (`offset`). `func`
/// itself is left unchanged. Fails with an error when a stage uses a value
/// of a later stage.
FailureOr<SmallVector<func::FuncOp>>
outlineStages(func::FuncOp func, const MicroBatching &batching,
              SmallVectorImpl<PipelineOutput> &outputs);

/// The integer field `name` of the `sbp.source` of argument `index` of a
/// stage function, or -1 when it has none.
int64_t getSourceField(func::FuncOp func, unsigned index, StringRef name);

/// A new mesh `@pipeline` (or `@pipeline_N`) of `shape`, whose first axis
/// numbers the stages.
MeshOp createPipelineMesh(ModuleOp module, ArrayRef<int64_t> shape);

/// Writes the module's `sbp.pipeline` attribute; a training pipeline also
/// names each stage's backward and update functions.
void recordPipeline(ModuleOp module, StringRef function,
                    ArrayRef<func::FuncOp> stages, MeshOp mesh,
                    int64_t microBatches, StringRef schedule,
                    ArrayRef<PipelineOutput> outputs,
                    ArrayRef<func::FuncOp> backward = {},
                    ArrayRef<func::FuncOp> update = {});

/// Rewrites the training step `step` (with `sbp.train_step`) in place into
/// the function of its loss: the same arguments, the loss its only result,
/// the backward pass and the update gone. `buildTrainingStages` rebuilds
/// them per stage once the loss function is cut.
void reduceToLoss(func::FuncOp step);

/// The arguments of a training step that are its batch: those after the
/// parameters and state whose dimension 0 has the size of the first one's.
SmallVector<int64_t> getTrainBatchArgs(func::FuncOp step);

/// The backward and update functions of the training pipeline whose
/// forward stages `forward` were outlined from a training step's loss
/// function (see reduceToLoss), and the step's outputs: for stage k,
/// `<stage>_backward` takes the forward's arguments (those received from
/// other stages as saved by the forward, `sbp.source = {stage, result}`)
/// and the gradients of the forward's results from the stages that use
/// them (`{backward = T, result = R}`), recomputes the forward and returns
/// the gradients of its received arguments (sent back), then those of its
/// parameters (`params` leading arguments of the step, then `state`);
/// `<stage>_update` takes its parameters and their optimizer state (`{input =
/// N}`) and the gradients summed over the micro-batches
/// (`{gradient = J}`: the J-th parameter gradient of the backward) and
/// returns them updated, in argument order; a stage that takes rows of a
/// parameter updates those rows and their state. Fails with an error when
/// stages share a parameter other than by disjoint rows that cover it.
/// With `only`, builds the
/// functions of that stage alone (null for the others; the outputs are
/// then meaningless): what pricing one stage needs.
LogicalResult buildTrainingStages(func::FuncOp lossFunction,
                                  const OptimizerSpec &spec, int64_t params,
                                  int64_t state, ArrayRef<func::FuncOp> forward,
                                  const PipelineOutput &loss,
                                  SmallVectorImpl<func::FuncOp> &backward,
                                  SmallVectorImpl<func::FuncOp> &update,
                                  SmallVectorImpl<PipelineOutput> &outputs,
                                  int64_t only = -1);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINING_H
