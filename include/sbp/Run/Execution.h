//===- Execution.h - Running a compiled program on every rank ---*- C++ -*-===//

#ifndef SBP_RUN_EXECUTION_H
#define SBP_RUN_EXECUTION_H

#include "sbp/Run/Entry.h"
#include "sbp/Runtime/Schedule.h"
#include <functional>
#include <string>

namespace sbp::run {

/// Where a stage argument comes from: an input of the program (its
/// number, and the dimension it is cut into micro-batches along, -1:
/// whole; or its `rows` rows from `offset` on); in a training pipeline
/// also the `index`-th value the stage's forward saved for its backward,
/// or the `index`-th gradient of its backward summed over the
/// micro-batches (for its update).
struct StageSource {
  enum Kind { Input, Saved, Gradient } kind = Input;
  int64_t input = 0, microBatchDim = -1, index = 0;
  int64_t offset = -1, rows = 0;
};

/// A program partitioned on the whole mesh, `B` along its first axis, that
/// receives and sends what passes between stages itself.
struct StageProgram {
  const EntryPoint *entry = nullptr;
  std::vector<TensorSpec> args, results;
  std::vector<StageSource> sources;
};

/// One stage of a pipeline: its forward program; in a training pipeline
/// also its backward (which returns the gradients of its parameters) and
/// its update (which returns its parameters and optimizer state updated,
/// in the order of its first arguments).
struct PipelineStage : StageProgram {
  StageProgram backward, update;
};

/// How an output of the program is made from a stage's results (or, with
/// `update`, from its update's).
struct PipelineOutput {
  int64_t stage = 0, result = 0;
  enum Combine { Concat, Sum, Same } combine = Same;
  int64_t dim = 0;
  bool update = false;
  /// An update output whose rows several stages own: each (stage, result)
  /// in order along dimension 0; empty otherwise.
  std::vector<std::pair<int64_t, int64_t>> rows;
};

/// A pipeline: stage k runs on the devices whose coordinate along the
/// mesh's first axis is k, the micro-batches in the order of `schedule`.
struct Pipeline {
  std::vector<PipelineStage> stages;
  int64_t microBatches = 1;
  runtime::PipelineSchedule schedule = runtime::PipelineSchedule::OneFOneB;
  std::vector<PipelineOutput> outputs;
  /// A training pipeline: each stage has a backward and an update.
  bool training = false;
};

struct ExecutionOptions {
  std::vector<int64_t> mesh;
  double timeoutSeconds = 300;
  /// Timed iterations after one warm-up; 0 runs once.
  int64_t benchIterations = 0;
  /// Record spans for a Chrome trace.
  bool trace = false;
  /// One process per rank under mpirun instead of one thread per rank.
  bool useMpi = false;
  /// Collectives through NCCL (CUDA programs only).
  bool useNccl = false;
  /// Training: runs the program `trainSteps` times, each step taking its
  /// first `carried` arguments from the previous step's first results
  /// (same layouts; the shards stay on their ranks) and recording its last
  /// result, the loss. Timed steps (benchIterations > 0) are all but the
  /// first.
  int64_t trainSteps = 0;
  int64_t carried = 0;
};

/// The global shape of a tensor laid out as `layout` from every device's
/// shard: along each dimension, the sum of the pieces of the devices that
/// differ only on the axes that split it.
std::vector<int64_t>
inferGlobalShape(const std::vector<runtime::NpyArray> &shards,
                 const runtime::Layout &layout);

/// Whether this process was started by an MPI launcher (MPICH's or Open
/// MPI's), as one process of several.
bool isUnderMpiLauncher();

/// How many processes the MPI launcher started, as its environment says;
/// 0 when this process was not started by one.
int64_t getMpiLauncherSize();

/// Runs a program on every rank of a mesh: gives each rank its shard of
/// the global inputs and rebuilds the global results.
class Execution {
public:
  Execution(const EntryPoint &program, std::vector<TensorSpec> args,
            std::vector<TensorSpec> results, ExecutionOptions options);
  /// Runs `pipeline` (which must outlive this) on `options.mesh`, whose
  /// first axis numbers its stages; `results` are the program's outputs.
  Execution(const Pipeline &pipeline, std::vector<TensorSpec> results,
            ExecutionOptions options);

  /// Runs the program (once, or a warm-up and the benchmark iterations).
  /// Returns false with the first rank's error ("rank 1: all_reduce: ...")
  /// when any rank failed.
  bool run(const std::vector<runtime::NpyArray> &inputs,
           std::vector<runtime::NpyArray> &outputs, std::string &error);

  /// Whether this process prints results (every process of the threads
  /// backend; rank 0 under MPI).
  bool isReportingRank() const { return reporting; }
  /// Whether the failure of run() was a usage error (MPI's process count
  /// does not match the mesh) rather than a failure on a rank.
  bool isUsageError() const { return usageError; }

  /// The loss of every training step, as this process's rank 0 saw it.
  const std::vector<double> &getLosses() const { return losses; }

  /// The median over the timed iterations of the time from the first
  /// rank's start to the last rank's end, in milliseconds.
  double getMedianMilliseconds() const;

  /// `time_ms median=.. min=..` and each rank's split between compute and
  /// communication, one line each.
  std::string formatBench() const;

  /// Writes the recorded spans as a Chrome trace.
  bool writeTrace(const std::string &path, std::string &error) const;

private:
  /// One rank's recorded time of one iteration.
  struct Iteration {
    double begin = 0, end = 0, communication = 0;
    std::vector<sbp_span> spans;
    /// Pipeline tasks ("F3": the forward of micro-batch 3), and the time
    /// they spent receiving from other stages.
    std::vector<sbp_span> tasks;
    double receiving = 0;
  };

  /// Per timed iteration, milliseconds from the first rank's start to the
  /// last rank's end.
  std::vector<double> getIterationTimes() const;

  /// The body of rank `rank`'s thread.
  void runRank(int64_t rank, sbp_comm *comm,
               const std::vector<runtime::NpyArray> &inputs,
               std::vector<runtime::NpyArray> &results);
  /// The same for a CUDA program: the rank's GPU, device buffers, and a
  /// communicator on them over `comm`.
  void runCudaRank(int64_t rank, sbp_comm *comm,
                   const std::vector<runtime::NpyArray> &inputs,
                   std::vector<runtime::NpyArray> &results);
  /// One of the three below, as the program is.
  void runAnyRank(int64_t rank, sbp_comm *comm,
                  const std::vector<runtime::NpyArray> &inputs,
                  std::vector<runtime::NpyArray> &rankResults);
  /// The same for a stage of a pipeline: its micro-batches in the order
  /// of the schedule; `rankResults` gets each micro-batch's outputs
  /// (output-major).
  void runPipelineRank(int64_t rank, sbp_comm *comm,
                       const std::vector<runtime::NpyArray> &inputs,
                       std::vector<runtime::NpyArray> &rankResults);
  /// The same for a training pipeline: `options.trainSteps` steps, each
  /// the schedule's forwards and backwards, the gradients summed over the
  /// micro-batches, then the stage's update.
  void runTrainingPipelineRank(int64_t rank, sbp_comm *comm,
                               const std::vector<runtime::NpyArray> &inputs,
                               std::vector<runtime::NpyArray> &rankResults);
  /// A pipeline rank's results before its stage computes them.
  void setPlaceholders(std::vector<runtime::NpyArray> &rankResults) const;
  /// The outputs from every rank's results of runPipelineRank.
  bool assemblePipelineOutputs(
      std::vector<std::vector<runtime::NpyArray>> &rankResults,
      std::vector<runtime::NpyArray> &outputs, std::string &error);
  /// Records one timed iteration of `rank` from `begin` to `end`.
  /// A pipeline's ranks add their tasks.
  void record(int64_t rank, double begin, double end,
              std::vector<sbp_span> tasks = {});

  /// Under MPI: gives every process every rank's shards of the results.
  void gatherResults(sbp_comm *comm, int64_t rank,
                     std::vector<std::vector<runtime::NpyArray>> &rankResults);

  const EntryPoint *program = nullptr;
  const Pipeline *pipeline = nullptr;
  std::vector<TensorSpec> args, results;
  ExecutionOptions options;
  bool reporting = true;
  bool usageError = false;
  /// Per rank, per timed iteration.
  std::vector<std::vector<Iteration>> timeline;
  std::vector<double> losses;
  /// Names of the pipeline's tasks: the forwards by micro-batch ("F3"),
  /// then the backwards ("B3").
  std::vector<std::string> taskNames;
  /// Makes the ranks start each iteration together.
  struct Barrier;
  std::function<void()> synchronize;
};

} // namespace sbp::run

#endif // SBP_RUN_EXECUTION_H
