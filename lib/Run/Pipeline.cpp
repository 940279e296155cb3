//===- Pipeline.cpp - Running the stages of a pipeline --------------------===//
//
// Each rank runs its stage's tasks in the order of the schedule: a task
// calls the stage's program on the rank's shard of its micro-batch. The
// program itself receives what earlier stages send and sends what later
// ones take (sbp-insert-transfers). Sends are eager (the runtime copies the
// tensor and returns), so a stage never waits for its consumer and its next
// task overlaps the transfer; a stage waits only for inputs that are not
// yet computed, the pipeline's bubble.
//
//===----------------------------------------------------------------------===//

#include "sbp/Run/Execution.h"
#include "sbp/Runtime/sbp_program.h"

using namespace sbp::run;
using sbp::runtime::LayoutEntry;
using sbp::runtime::NpyArray;

namespace {

/// The layout of the micro-batches over a virtual mesh axis, one position
/// per micro-batch: split along `dim`, partial sums, or the same in each.
sbp::runtime::Layout microBatchLayout(int64_t count, LayoutEntry::Kind kind,
                                      int64_t dim = 0) {
  sbp::runtime::Layout layout;
  layout.meshShape = {count};
  layout.entries.resize(1);
  layout.entries[0].kind = kind;
  layout.entries[0].dim = dim;
  return layout;
}

} // namespace

void Execution::runPipelineRank(int64_t rank, sbp_comm *comm,
                                const std::vector<NpyArray> &inputs,
                                std::vector<NpyArray> &rankResults) {
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  int64_t numStages = pipeline->stages.size(), stage = coords[0];
  int64_t microBatches = pipeline->microBatches;
  const PipelineStage &mine = pipeline->stages[stage];

  // This device's shard of each input, per micro-batch when it is cut:
  // micro-batches are an SBP split of the batch along a virtual axis.
  size_t numArgs = mine.args.size();
  std::vector<std::vector<NpyArray>> shards(numArgs);
  for (size_t a = 0; a < numArgs; ++a) {
    const StageSource &source = mine.sources[a];
    const NpyArray &input = inputs[source.input];
    if (source.microBatchDim < 0) {
      shards[a].push_back(
          sbp::runtime::extractShard(input, mine.args[a].layout, coords));
      continue;
    }
    sbp::runtime::Layout cut = microBatchLayout(
        microBatches, LayoutEntry::Split, source.microBatchDim);
    for (int64_t mb = 0; mb < microBatches; ++mb)
      shards[a].push_back(sbp::runtime::extractShard(
          sbp::runtime::extractShard(input, cut, {mb}), mine.args[a].layout,
          coords));
  }
  // The program's outputs this stage computes; ranks of other stages hold
  // empty tensors of the output's rank.
  size_t numOutputs = pipeline->outputs.size();
  rankResults.assign(numOutputs * microBatches, NpyArray());
  for (size_t o = 0; o < numOutputs; ++o)
    for (int64_t mb = 0; mb < microBatches; ++mb) {
      NpyArray &empty = rankResults[o * microBatches + mb];
      empty.dtype = results[o].dtype;
      empty.shape.assign(results[o].localShape.size(), 0);
    }

  std::vector<sbp::runtime::PipelineTask> tasks = sbp::runtime::getStageTasks(
      pipeline->schedule, stage, numStages, microBatches, /*backward=*/false);
  bool timed = options.benchIterations > 0 || options.trace;
  int64_t iterations =
      options.benchIterations > 0 ? options.benchIterations + 1 : 1;
  sbp_program_set_comm(comm);
  for (int64_t it = 0; it < iterations; ++it) {
    bool recorded = timed && (options.benchIterations == 0 || it > 0);
    std::vector<sbp_span> taskSpans;
    synchronize();
    sbp_program_trace(recorded);
    double begin = sbp_program_now_us();
    for (const sbp::runtime::PipelineTask &task : tasks) {
      int64_t mb = task.microBatch;
      std::vector<NpyArray *> args(numArgs);
      for (size_t a = 0; a < numArgs; ++a)
        args[a] = &shards[a][shards[a].size() == 1 ? 0 : mb];
      // The stage's receives, compute and sends, in its program.
      double start = sbp_program_now_us();
      std::vector<NpyArray> outs;
      mine.entry->call(args, mine.results, outs);
      if (recorded)
        taskSpans.push_back(
            {taskNames[mb].c_str(), start, sbp_program_now_us()});
      for (size_t o = 0; o < numOutputs; ++o)
        if (pipeline->outputs[o].stage == stage)
          rankResults[o * microBatches + mb] =
              std::move(outs[pipeline->outputs[o].result]);
    }
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    if (recorded)
      record(rank, begin, end, std::move(taskSpans));
  }
  sbp_program_set_comm(nullptr);
}

bool Execution::assemblePipelineOutputs(
    std::vector<std::vector<NpyArray>> &rankResults,
    std::vector<NpyArray> &outputs, std::string &error) {
  int64_t microBatches = pipeline->microBatches;
  int64_t stageSize = 1;
  for (size_t a = 1; a < options.mesh.size(); ++a)
    stageSize *= options.mesh[a];
  // A stage's devices hold its results laid out over the mesh past the
  // stage axis (along which every layout is B).
  auto overStage = [&](sbp::runtime::Layout layout) {
    layout.meshShape.erase(layout.meshShape.begin());
    layout.entries.erase(layout.entries.begin());
    if (layout.meshShape.empty()) {
      layout.meshShape = {1};
      layout.entries.resize(1);
    }
    return layout;
  };
  outputs.assign(pipeline->outputs.size(), NpyArray());
  for (size_t o = 0; o < pipeline->outputs.size(); ++o) {
    const PipelineOutput &output = pipeline->outputs[o];
    const TensorSpec &spec =
        pipeline->stages[output.stage].results[output.result];
    std::vector<NpyArray> pieces;
    for (int64_t mb = 0; mb < microBatches; ++mb) {
      // The stage's devices in order hold the micro-batch's shards.
      std::vector<NpyArray> shards;
      for (int64_t r = 0; r < stageSize; ++r)
        shards.push_back(std::move(
            rankResults[output.stage * stageSize + r][o * microBatches + mb]));
      NpyArray piece;
      sbp::runtime::Layout layout = overStage(spec.layout);
      std::vector<int64_t> shape = inferGlobalShape(shards, layout);
      if (!sbp::runtime::assembleShards(shards, layout, shape, piece, error)) {
        error = results[o].name + ": " + error;
        return false;
      }
      pieces.push_back(std::move(piece));
    }
    // The micro-batches' results are the shards of the whole along the
    // virtual micro-batch axis.
    sbp::runtime::Layout whole = microBatchLayout(
        microBatches,
        output.combine == PipelineOutput::Concat ? LayoutEntry::Split
        : output.combine == PipelineOutput::Sum  ? LayoutEntry::Partial
                                                 : LayoutEntry::Broadcast,
        output.dim);
    std::vector<int64_t> shape = inferGlobalShape(pieces, whole);
    if (!sbp::runtime::assembleShards(pieces, whole, shape, outputs[o],
                                      error)) {
      error = results[o].name + ": " + error;
      return false;
    }
  }
  return true;
}
