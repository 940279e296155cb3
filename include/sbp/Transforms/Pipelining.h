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
/// them and has the size of the first such argument's.
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
/// than to send there: constants, empty tensors, fills of them.
bool isCheapToRecompute(Operation *op);

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
};

/// Outlines the ops of `func`, assigned to stages by `sbp.stage` (ops
/// without one join the earliest stage that uses them; constants and
/// other cheap producers are recomputed where used), into functions
/// `<func>_stage<k>` placed after it, whose arguments say where their
/// values come from (`sbp.source`). `func` itself is left unchanged. Fails
/// with an error when a stage uses a value of a later stage.
FailureOr<SmallVector<func::FuncOp>>
outlineStages(func::FuncOp func, const MicroBatching &batching,
              SmallVectorImpl<PipelineOutput> &outputs);

/// A new mesh `@pipeline` (or `@pipeline_N`) of `shape`, whose first axis
/// numbers the stages.
MeshOp createPipelineMesh(ModuleOp module, ArrayRef<int64_t> shape);

/// Writes the module's `sbp.pipeline` attribute.
void recordPipeline(ModuleOp module, StringRef function,
                    ArrayRef<func::FuncOp> stages, MeshOp mesh,
                    int64_t microBatches, StringRef schedule,
                    ArrayRef<PipelineOutput> outputs);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINING_H
