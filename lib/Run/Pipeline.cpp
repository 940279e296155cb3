//===- Pipeline.cpp - Running the stages of a pipeline --------------------===//
//
// Each rank runs its stage's tasks in the order of the schedule. A task
// receives the arguments that earlier stages send (from the device at the
// same position of their sub-mesh: a group along the mesh's first axis),
// calls the stage's program on the stage's own communicator, and sends
// each result to the later stages that take it. Sends are eager (the
// runtime copies the tensor and returns), so a stage never waits for its
// consumer and its next task overlaps the transfer; a stage waits only
// for inputs that are not yet computed, the pipeline's bubble.
//
//===----------------------------------------------------------------------===//

#include "sbp/Run/Execution.h"
#include "sbp/Runtime/sbp_program.h"
#include <algorithm>
#include <numeric>

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

sbp_tensor view(NpyArray &array) {
  return {array.data.data(), static_cast<int64_t>(array.shape.size()),
          array.shape.data(), array.dtype};
}

} // namespace

void Execution::runPipelineRank(int64_t rank, sbp_comm *comm,
                                const std::vector<NpyArray> &inputs,
                                std::vector<NpyArray> &rankResults) {
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  int64_t numStages = pipeline->stages.size(), stage = coords[0];
  int64_t microBatches = pipeline->microBatches;
  const PipelineStage &mine = pipeline->stages[stage];
  sbp_comm *stageComm = sbp_stage_comm_create(comm, 1);
  std::vector<int64_t> stageCoords(coords.begin() + 1, coords.end());
  if (stageCoords.empty())
    stageCoords = {0};

  // This device's shard of each input, per micro-batch when it is cut.
  size_t numArgs = mine.args.size();
  std::vector<std::vector<NpyArray>> shards(numArgs);
  for (size_t a = 0; a < numArgs; ++a) {
    const StageSource &source = mine.sources[a];
    if (source.input < 0)
      continue;
    const NpyArray &input = inputs[source.input];
    if (source.microBatchDim < 0) {
      shards[a].push_back(
          sbp::runtime::extractShard(input, mine.args[a].layout, stageCoords));
      continue;
    }
    // Micro-batches are an SBP split of the batch along a virtual axis.
    sbp::runtime::Layout cut = microBatchLayout(
        microBatches, LayoutEntry::Split, source.microBatchDim);
    for (int64_t mb = 0; mb < microBatches; ++mb)
      shards[a].push_back(sbp::runtime::extractShard(
          sbp::runtime::extractShard(input, cut, {mb}), mine.args[a].layout,
          stageCoords));
  }
  // Receives in the order each sender sends: by stage, then result.
  std::vector<size_t> receives;
  for (size_t a = 0; a < numArgs; ++a)
    if (mine.sources[a].input < 0)
      receives.push_back(a);
  std::sort(receives.begin(), receives.end(), [&](size_t x, size_t y) {
    const StageSource &a = mine.sources[x], &b = mine.sources[y];
    return std::tie(a.stage, a.result) < std::tie(b.stage, b.result);
  });
  // The later stages that take each result.
  std::vector<std::vector<int64_t>> consumers(mine.results.size());
  for (int64_t later = stage + 1; later < numStages; ++later)
    for (const StageSource &source : pipeline->stages[later].sources)
      if (source.stage == stage)
        consumers[source.result].push_back(later);
  // The program's outputs this stage computes.
  size_t numOutputs = pipeline->outputs.size();
  rankResults.assign(numOutputs * microBatches, NpyArray());
  for (size_t o = 0; o < numOutputs; ++o)
    for (int64_t mb = 0; mb < microBatches; ++mb) {
      // Ranks of other stages hold nothing, of the output's rank.
      NpyArray &empty = rankResults[o * microBatches + mb];
      empty.dtype = results[o].dtype;
      empty.shape.assign(results[o].localShape.size(), 0);
    }

  std::vector<sbp::runtime::PipelineTask> tasks = sbp::runtime::getStageTasks(
      pipeline->schedule, stage, numStages, microBatches, /*backward=*/false);
  const int64_t pipelineAxis[] = {0};
  bool timed = options.benchIterations > 0 || options.trace;
  int64_t iterations =
      options.benchIterations > 0 ? options.benchIterations + 1 : 1;
  for (int64_t it = 0; it < iterations; ++it) {
    bool recorded = timed && (options.benchIterations == 0 || it > 0);
    std::vector<sbp_span> taskSpans, transfers;
    synchronize();
    sbp_program_set_comm(stageComm);
    sbp_program_trace(recorded);
    double begin = sbp_program_now_us();
    for (const sbp::runtime::PipelineTask &task : tasks) {
      int64_t mb = task.microBatch;
      std::vector<NpyArray> received(numArgs);
      for (size_t a : receives) {
        double start = sbp_program_now_us();
        NpyArray &buffer = received[a];
        buffer.dtype = mine.args[a].dtype;
        buffer.shape = mine.args[a].localShape;
        buffer.data.resize(buffer.numElements() * sbp_dtype_size(buffer.dtype));
        sbp_tensor out = view(buffer);
        sbp_recv(comm, pipelineAxis, 1, &out, mine.sources[a].stage);
        if (recorded)
          transfers.push_back({"recv", start, sbp_program_now_us()});
      }
      std::vector<NpyArray *> args(numArgs);
      for (size_t a = 0; a < numArgs; ++a)
        args[a] = mine.sources[a].input < 0 ? &received[a]
                  : shards[a].size() == 1   ? &shards[a][0]
                                            : &shards[a][mb];
      double start = sbp_program_now_us();
      std::vector<NpyArray> outs;
      mine.entry->call(args, mine.results, outs);
      if (recorded)
        taskSpans.push_back(
            {taskNames[mb].c_str(), start, sbp_program_now_us()});
      for (size_t r = 0; r < outs.size(); ++r)
        for (int64_t later : consumers[r]) {
          double sent = sbp_program_now_us();
          sbp_tensor in = view(outs[r]);
          sbp_send(comm, pipelineAxis, 1, &in, later);
          if (recorded)
            transfers.push_back({"send", sent, sbp_program_now_us()});
        }
      for (size_t o = 0; o < numOutputs; ++o)
        if (pipeline->outputs[o].stage == stage)
          rankResults[o * microBatches + mb] =
              std::move(outs[pipeline->outputs[o].result]);
    }
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    sbp_program_set_comm(nullptr);
    if (recorded)
      record(rank, begin, end, std::move(taskSpans), std::move(transfers));
  }
  sbp_stage_comm_destroy(stageComm);
}

bool Execution::assemblePipelineOutputs(
    std::vector<std::vector<NpyArray>> &rankResults,
    std::vector<NpyArray> &outputs, std::string &error) {
  int64_t microBatches = pipeline->microBatches;
  int64_t stageSize = 1;
  for (size_t a = 1; a < options.mesh.size(); ++a)
    stageSize *= options.mesh[a];
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
      std::vector<int64_t> shape = inferGlobalShape(shards, spec.layout);
      if (!sbp::runtime::assembleShards(shards, spec.layout, shape, piece,
                                        error)) {
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
