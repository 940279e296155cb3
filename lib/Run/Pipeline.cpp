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
#include <functional>
#include <map>

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

/// Rows [offset, offset + rows) of `array` (row-major: one contiguous
/// range of bytes).
NpyArray getRows(const NpyArray &array, int64_t offset, int64_t rows) {
  NpyArray part;
  part.dtype = array.dtype;
  part.shape = array.shape;
  part.shape[0] = rows;
  size_t rowBytes = array.shape[0] ? array.data.size() / array.shape[0] : 0;
  part.data.assign(array.data.begin() + offset * rowBytes,
                   array.data.begin() + (offset + rows) * rowBytes);
  return part;
}

/// This device's shard of argument `a` of `program`, which comes from an
/// input taken whole or by rows.
NpyArray getHeldShard(const StageProgram &program, size_t a,
                      const std::vector<NpyArray> &inputs,
                      const std::vector<int64_t> &coords) {
  const StageSource &source = program.sources[a];
  const NpyArray &input = inputs[source.input];
  if (source.offset < 0)
    return sbp::runtime::extractShard(input, program.args[a].layout, coords);
  return sbp::runtime::extractShard(getRows(input, source.offset, source.rows),
                                    program.args[a].layout, coords);
}

/// This device's shards of each argument of `program` that comes from an
/// input (except those `held` elsewhere): whole (or its rows), or one per
/// micro-batch.
std::vector<std::vector<NpyArray>>
getInputShards(const StageProgram &program, const std::vector<NpyArray> &inputs,
               const std::vector<int64_t> &coords, int64_t microBatches,
               const std::function<bool(const StageSource &)> &held = nullptr) {
  std::vector<std::vector<NpyArray>> shards(program.args.size());
  for (size_t a = 0; a < program.args.size(); ++a) {
    const StageSource &source = program.sources[a];
    if (source.kind != StageSource::Input || (held && held(source)))
      continue;
    const NpyArray &input = inputs[source.input];
    if (source.microBatchDim < 0) {
      shards[a].push_back(getHeldShard(program, a, inputs, coords));
      continue;
    }
    sbp::runtime::Layout cut = microBatchLayout(
        microBatches, LayoutEntry::Split, source.microBatchDim);
    for (int64_t mb = 0; mb < microBatches; ++mb)
      shards[a].push_back(sbp::runtime::extractShard(
          sbp::runtime::extractShard(input, cut, {mb}), program.args[a].layout,
          coords));
  }
  return shards;
}

/// `sum += value`, element-wise, for the float types gradients come in.
bool accumulate(NpyArray &sum, const NpyArray &value) {
  if (sum.data.empty()) {
    sum = value;
    return true;
  }
  if (sum.dtype != value.dtype || sum.data.size() != value.data.size())
    return false;
  int64_t n = sum.numElements();
  if (sum.dtype == SBP_F64) {
    auto *out = reinterpret_cast<double *>(sum.data.data());
    auto *in = reinterpret_cast<const double *>(value.data.data());
    for (int64_t i = 0; i < n; ++i)
      out[i] += in[i];
    return true;
  }
  if (sum.dtype != SBP_F32)
    return false;
  auto *out = reinterpret_cast<float *>(sum.data.data());
  auto *in = reinterpret_cast<const float *>(value.data.data());
  for (int64_t i = 0; i < n; ++i)
    out[i] += in[i];
  return true;
}

double readScalar(const NpyArray &array) {
  if (array.data.empty())
    return 0;
  return array.dtype == SBP_F64
             ? *reinterpret_cast<const double *>(array.data.data())
             : *reinterpret_cast<const float *>(array.data.data());
}

} // namespace

void Execution::setPlaceholders(std::vector<NpyArray> &rankResults) const {
  // The program's outputs a stage computes; ranks of other stages hold
  // empty tensors of the output's rank (one zero of a scalar), so that
  // every rank has the same results to gather.
  int64_t microBatches = pipeline->microBatches;
  rankResults.assign(results.size() * microBatches, NpyArray());
  for (size_t o = 0; o < results.size(); ++o)
    for (int64_t mb = 0; mb < microBatches; ++mb) {
      NpyArray &empty = rankResults[o * microBatches + mb];
      empty.dtype = results[o].dtype;
      empty.shape.assign(results[o].localShape.size(), 0);
      if (empty.shape.empty())
        empty.data.assign(sbp_dtype_size(empty.dtype), 0);
    }
}

void Execution::runPipelineRank(int64_t rank, sbp_comm *comm,
                                const std::vector<NpyArray> &inputs,
                                std::vector<NpyArray> &rankResults) {
  if (pipeline->training)
    return runTrainingPipelineRank(rank, comm, inputs, rankResults);
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  int64_t numStages = pipeline->stages.size(), stage = coords[0];
  int64_t microBatches = pipeline->microBatches;
  const PipelineStage &mine = pipeline->stages[stage];

  // This device's shard of each input, per micro-batch when it is cut:
  // micro-batches are an SBP split of the batch along a virtual axis.
  size_t numArgs = mine.args.size();
  std::vector<std::vector<NpyArray>> shards =
      getInputShards(mine, inputs, coords, microBatches);
  size_t numOutputs = pipeline->outputs.size();
  setPlaceholders(rankResults);

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

void Execution::runTrainingPipelineRank(int64_t rank, sbp_comm *comm,
                                        const std::vector<NpyArray> &inputs,
                                        std::vector<NpyArray> &rankResults) {
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  int64_t numStages = pipeline->stages.size(), stage = coords[0];
  int64_t microBatches = pipeline->microBatches;
  const PipelineStage &mine = pipeline->stages[stage];
  const StageProgram &back = mine.backward, &update = mine.update;

  // The parameters and optimizer state live in the stage between steps:
  // one shard per input, in the layout all three programs take it in
  // (checked when the pipeline was read); the batch, per micro-batch.
  // Keyed by input and first row (-1: whole).
  std::map<std::pair<int64_t, int64_t>, NpyArray> carried;
  auto key = [](const StageSource &source) {
    return std::make_pair(source.input, source.offset);
  };
  for (size_t a = 0; a < update.args.size(); ++a)
    if (update.sources[a].kind == StageSource::Input)
      carried[key(update.sources[a])] = getHeldShard(update, a, inputs, coords);
  auto isCarried = [&](const StageSource &source) {
    return source.microBatchDim < 0 && carried.count(key(source));
  };
  std::vector<std::vector<NpyArray>> forwardShards =
      getInputShards(mine, inputs, coords, microBatches, isCarried);
  std::vector<std::vector<NpyArray>> backwardShards =
      getInputShards(back, inputs, coords, microBatches, isCarried);
  auto bind = [&](const StageProgram &program,
                  std::vector<std::vector<NpyArray>> &shards, int64_t mb,
                  std::vector<NpyArray> *saved, std::vector<NpyArray> *sums) {
    std::vector<NpyArray *> args(program.args.size());
    for (size_t a = 0; a < args.size(); ++a) {
      const StageSource &source = program.sources[a];
      if (source.kind == StageSource::Saved)
        args[a] = &(*saved)[source.index];
      else if (source.kind == StageSource::Gradient)
        args[a] = &(*sums)[source.index];
      else if (isCarried(source))
        args[a] = &carried[key(source)];
      else
        args[a] = &shards[a][shards[a].size() == 1 ? 0 : mb];
    }
    return args;
  };

  size_t numOutputs = pipeline->outputs.size();
  setPlaceholders(rankResults);
  int64_t numSaved = 0;
  for (const StageSource &source : back.sources)
    numSaved += source.kind == StageSource::Saved;
  size_t keptResults = mine.results.size() - numSaved;

  std::vector<sbp::runtime::PipelineTask> tasks = sbp::runtime::getStageTasks(
      pipeline->schedule, stage, numStages, microBatches, /*backward=*/true);
  bool timed = options.benchIterations > 0 || options.trace;
  std::vector<double> stepLosses;
  sbp_program_set_comm(comm);
  for (int64_t step = 0; step < options.trainSteps; ++step) {
    bool recorded = timed && (options.benchIterations == 0 || step > 0);
    std::vector<sbp_span> taskSpans;
    synchronize();
    sbp_program_trace(recorded);
    double begin = sbp_program_now_us();
    std::vector<std::vector<NpyArray>> saved(microBatches);
    std::vector<NpyArray> sums;
    double loss = 0;
    for (const sbp::runtime::PipelineTask &task : tasks) {
      int64_t mb = task.microBatch;
      double start = sbp_program_now_us();
      std::vector<NpyArray> outs;
      if (!task.backward) {
        mine.entry->call(bind(mine, forwardShards, mb, nullptr, nullptr),
                         mine.results, outs);
        for (size_t o = 0; o < numOutputs; ++o) {
          const PipelineOutput &output = pipeline->outputs[o];
          if (output.stage != stage || output.update)
            continue;
          loss += readScalar(outs[output.result]);
          rankResults[o * microBatches + mb] = outs[output.result];
        }
        saved[mb].assign(std::make_move_iterator(outs.begin() + keptResults),
                         std::make_move_iterator(outs.end()));
      } else {
        back.entry->call(bind(back, backwardShards, mb, &saved[mb], nullptr),
                         back.results, outs);
        saved[mb].clear();
        sums.resize(outs.size());
        for (size_t g = 0; g < outs.size(); ++g)
          if (!accumulate(sums[g], outs[g]))
            sbp_comm_abort(comm, "pipelined training: the gradients must be "
                                 "f32 or f64 to be summed over micro-batches");
      }
      if (recorded)
        taskSpans.push_back(
            {taskNames[(task.backward ? microBatches : 0) + mb].c_str(), start,
             sbp_program_now_us()});
    }
    std::vector<NpyArray> outs;
    update.entry->call(bind(update, forwardShards, 0, nullptr, &sums),
                       update.results, outs);
    for (size_t r = 0; r < outs.size(); ++r)
      carried[key(update.sources[r])] = outs[r];
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    if (recorded)
      record(rank, begin, end, std::move(taskSpans));
    stepLosses.push_back(loss);
    if (step + 1 == options.trainSteps)
      for (size_t o = 0; o < numOutputs; ++o) {
        const PipelineOutput &output = pipeline->outputs[o];
        if (!output.update)
          continue;
        // This stage's piece of it, if any.
        std::vector<std::pair<int64_t, int64_t>> pieces = output.rows;
        if (pieces.empty())
          pieces.emplace_back(output.stage, output.result);
        for (auto [from, result] : pieces)
          if (from == stage)
            rankResults[o * microBatches] = std::move(outs[result]);
      }
  }

  // The losses are the last stage's: its devices send them to those of
  // stage 0, whose rank 0 reports them.
  int64_t axis = 0, steps = stepLosses.size();
  sbp_tensor curve{stepLosses.data(), 1, &steps, SBP_F64};
  if (numStages > 1 && stage == numStages - 1)
    sbp_send(comm, &axis, 1, &curve, 0);
  if (numStages > 1 && stage == 0)
    sbp_recv(comm, &axis, 1, &curve, numStages - 1);
  if (rank == 0)
    losses = stepLosses;
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
    // A stage's result per micro-batch; an update's result once per step,
    // from each stage that owns rows of it.
    std::vector<std::pair<int64_t, int64_t>> sources = output.rows;
    if (sources.empty())
      sources.emplace_back(output.stage, output.result);
    int64_t pieceCount = output.update ? sources.size() : microBatches;
    std::vector<NpyArray> pieces;
    for (int64_t i = 0; i < pieceCount; ++i) {
      auto [from, result] = sources[output.update ? i : 0];
      int64_t mb = output.update ? 0 : i;
      const PipelineStage &stage = pipeline->stages[from];
      const TensorSpec &spec =
          output.update ? stage.update.results[result] : stage.results[result];
      // The stage's devices in order hold the micro-batch's shards.
      std::vector<NpyArray> shards;
      for (int64_t r = 0; r < stageSize; ++r)
        shards.push_back(std::move(
            rankResults[from * stageSize + r][o * microBatches + mb]));
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
    if (output.update) {
      outputs[o] = std::move(pieces.front());
      for (size_t i = 1; i < pieces.size(); ++i) {
        outputs[o].shape[0] += pieces[i].shape[0];
        outputs[o].data.insert(outputs[o].data.end(), pieces[i].data.begin(),
                               pieces[i].data.end());
      }
      continue;
    }
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
