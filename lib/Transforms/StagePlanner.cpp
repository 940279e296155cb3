//===- StagePlanner.cpp - Choosing pipeline stages ------------------------===//
//
// Alpa's inter-operator search on sbp's own pieces. For each number of
// micro-batches the function is micro-batched once; its top-level ops are
// grouped into segments at the cuts where the fewest bytes are live (the
// boundaries between layers); each contiguous range of segments is
// outlined and priced by the intra-stage search on each candidate
// sub-mesh; and a dynamic program over the segments picks, for every
// bound on the slowest stage, the cuts that minimize the sum of the stage
// times, so that the step `sum + (m - 1) * max` is least. docs/pipeline.md
// gives the model.
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/StagePlanner.h"
#include "StageSearch.h"
#include "mlir/IR/Diagnostics.h"
#include "sbp/Transforms/Pipelining.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/SearchProblem.h"
#include "sbp/Transforms/TrainStep.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::detail;
using ::sbp::runtime::PipelineSchedule;
using ::sbp::runtime::StageTimes;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Segments at most for K stages, unless 2K is more: a dynamic program over
/// more ranges would price quadratically many stages (ranges of equal
/// layers are priced once, see planPipeline).
constexpr int64_t kMaxSegments = 12;
/// For a training step, whose every candidate stage is three searches (its
/// backward, forward and update).
constexpr int64_t kMaxTrainingSegments = 8;

double getBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

/// For each cut position p (before ops[p]), the bytes computed before it
/// and used at or after it: what a stage boundary there sends.
SmallVector<double> getCrossingBytes(func::FuncOp func,
                                     ArrayRef<Operation *> ops) {
  Block &body = func.front();
  DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  SmallVector<double> delta(ops.size() + 2, 0);
  for (auto [i, op] : llvm::enumerate(ops))
    for (Value result : op->getResults()) {
      size_t last = i;
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        last = std::max(last, top && position.count(top) ? position[top]
                                                         : ops.size());
      }
      if (last == i)
        continue;
      delta[i + 1] += getBytes(result.getType());
      delta[last + 1] -= getBytes(result.getType());
    }
  SmallVector<double> bytes(ops.size() + 1, 0);
  for (size_t p = 1; p <= ops.size(); ++p)
    bytes[p] = bytes[p - 1] + delta[p];
  return bytes;
}

/// The segment boundaries, 0 first and `work.size()` last, of units with
/// `work` each: min(units, maxSegments) segments of at most twice the
/// average work each (or the largest unit's), cut where the fewest bytes
/// cross in total, as Alpa clusters operators into layers.
SmallVector<int64_t> getSegments(ArrayRef<double> work,
                                 ArrayRef<double> crossing,
                                 int64_t maxSegments) {
  int64_t n = work.size();
  int64_t count = std::min<int64_t>(n, maxSegments);
  SmallVector<double> prefix = {0};
  double largest = 0;
  for (double each : work) {
    prefix.push_back(prefix.back() + each);
    largest = std::max(largest, each);
  }
  double cap = std::max(largest, 2 * prefix.back() / count);
  // least[l][p]: the least bytes crossing the cuts of ops [0, p) in l
  // segments.
  std::vector<std::vector<double>> least(count + 1,
                                         std::vector<double>(n + 1, kInfinity));
  std::vector<std::vector<int64_t>> from(count + 1,
                                         std::vector<int64_t>(n + 1, -1));
  least[0][0] = 0;
  for (int64_t l = 1; l <= count; ++l)
    for (int64_t p = l; p <= n; ++p)
      for (int64_t q = p - 1; q >= l - 1 && prefix[p] - prefix[q] <= cap; --q) {
        double bytes = least[l - 1][q] + (q > 0 ? crossing[q] : 0);
        if (bytes < least[l][p]) {
          least[l][p] = bytes;
          from[l][p] = q;
        }
      }
  SmallVector<int64_t> segments = {n};
  for (int64_t l = count, p = n; l > 0 && from[l][p] >= 0; --l)
    segments.push_back(p = from[l][p]);
  if (segments.back() != 0)
    return {0, n};
  std::reverse(segments.begin(), segments.end());
  return segments;
}

/// Micro-batches the schedule keeps activations of in stage `stage`: all
/// of them in GPipe, those not yet back from the later stages in 1F1B.
int64_t getInFlight(PipelineSchedule schedule, int64_t stage, int64_t stages,
                    int64_t microBatches) {
  return schedule == PipelineSchedule::GPipe
             ? microBatches
             : std::min(microBatches, stages - stage);
}

/// The candidate pipeline meshes of `mesh`: one stage of all of it
/// (gradient accumulation, or a batch run in parts), then its first axis,
/// or all its devices, cut into K stages.
SmallVector<SmallVector<int64_t>> getPipelineMeshes(ArrayRef<int64_t> mesh) {
  SmallVector<SmallVector<int64_t>> meshes;
  SmallVector<int64_t> whole = {1};
  whole.append(mesh.begin() + (mesh[0] == 1), mesh.end());
  meshes.push_back(whole);
  int64_t devices = 1;
  for (int64_t size : mesh)
    devices *= size;
  for (int64_t k = 2; k <= mesh[0]; ++k) {
    if (mesh[0] % k)
      continue;
    SmallVector<int64_t> shape = {k};
    if (mesh[0] / k > 1)
      shape.push_back(mesh[0] / k);
    shape.append(mesh.begin() + 1, mesh.end());
    meshes.push_back(shape);
  }
  for (int64_t k = mesh[0] + 1; mesh.size() > 1 && k <= devices; ++k)
    if (devices % k == 0) {
      SmallVector<int64_t> shape = {k};
      if (devices / k > 1)
        shape.push_back(devices / k);
      meshes.push_back(shape);
    }
  return meshes;
}

/// The layer units of a micro-batched function (getLayerUnits): the op
/// each belongs to, its work, and the bytes crossing a cut before each
/// (and after the last).
struct Units {
  SmallVector<int64_t> owner;
  SmallVector<double> work, crossing;
};

/// Stages are cut between layer units: ops, or the layers of a loop over
/// layers, whose per-layer copy gives the bytes crossing each cut.
Units getUnits(func::FuncOp func) {
  Units units;
  for (auto [i, layers] : llvm::enumerate(getLayerUnits(func)))
    units.owner.append(layers, i);
  auto perLayer = cast<func::FuncOp>(func->clone());
  func->getBlock()->push_back(perLayer);
  assignStagesAtUnits(perLayer,
                      llvm::to_vector(llvm::seq<int64_t>(
                          1, static_cast<int64_t>(units.owner.size()))));
  SmallVector<Operation *> ops = getPlaceableOps(perLayer);
  units.crossing = getCrossingBytes(perLayer, ops);
  for (Operation *op : ops)
    units.work.push_back(getIterationWork(op));
  perLayer.erase();
  return units;
}

/// Ranges of units [begin, end) of the same ops and as many layers of the
/// same loops, with as many bytes crossing their ends, are one stage
/// function but for the rows of the stacked weights it takes: one key.
std::vector<double> getRangeKey(const Units &units, int64_t begin,
                                int64_t end) {
  int64_t n = units.owner.size();
  std::vector<double> key = {double(begin == 0), double(end == n),
                             units.crossing[begin], units.crossing[end]};
  key.insert(key.end(), units.owner.begin() + begin, units.owner.begin() + end);
  return key;
}

/// Fills in `plan`'s per-stage figures from what its stages cost and send
/// and simulates its schedule.
void finishPlan(PipelinePlan &plan, ArrayRef<RangeCost> ranges,
                ArrayRef<double> sends) {
  int64_t k = plan.stages;
  for (auto [s, range] : llvm::enumerate(ranges)) {
    StageTimes times;
    times.forward = range.time;
    times.backward = range.backward;
    times.send = sends[s];
    plan.times.push_back(times);
    plan.updates.push_back(range.update);
    plan.sums.push_back(range.summing);
    plan.memory.push_back(range.parameters +
                          getInFlight(plan.schedule, s, k, plan.microBatches) *
                              range.activations);
  }
  plan.timeline = ::sbp::runtime::simulateSchedule(
      plan.schedule, plan.times, plan.microBatches, plan.training);
  // The stages update their parameters at once after the last backward.
  plan.stepTime = ::sbp::runtime::getMakespan(plan.timeline) +
                  *llvm::max_element(plan.updates);
  plan.bubble = ::sbp::runtime::getBubbleFraction(plan.timeline, k);
}

/// The in-flight count a stage that keeps `inFlight` micro-batches is
/// repriced for: the next of about four a doubling (1, 2, 3, 4, 5, 6, 7, 8,
/// 10, 12, 14, 16, 20, 23, ...), so that one plan serves the stages up to it
/// and a deep pipeline prices a few plans a range, not one a stage.
int64_t roundUpInFlight(int64_t inFlight) {
  for (double q = 0;; ++q)
    if (int64_t n = std::ceil(std::exp2(q / 4) - 1e-9); n >= inFlight)
      return n;
}

} // namespace

FailureOr<std::optional<PipelinePlan>> mlir::sbp::planPipeline(
    func::FuncOp func, const Cluster &cluster, ArrayRef<int64_t> mesh,
    const PipelineSearchOptions &options, double singleStepTime,
    function_ref<void(const Twine &)> progress) {
  // One stage of one micro-batch is the step without stages.
  if (options.stages == 1 && options.microBatches <= 1)
    return std::optional<PipelinePlan>();
  SmallVector<SmallVector<int64_t>> meshes;
  for (SmallVector<int64_t> &shape : getPipelineMeshes(mesh))
    if (!options.stages || shape[0] == options.stages)
      meshes.push_back(shape);
  if (meshes.empty()) {
    if (!options.stages)
      return std::optional<PipelinePlan>();
    return emitError(func.getLoc())
           << "sbp-auto-parallel: pipeline-stages=" << options.stages
           << " does not divide the first axis of the mesh [" << mesh
           << "] into equal stages";
  }
  SmallVector<int64_t> counts = {options.microBatches};
  if (!options.microBatches)
    counts = {1, 2, 4, 8, 16};

  std::optional<PipelinePlan> best;
  double bestTime = singleStepTime;
  unsigned priced = 0;
  std::optional<Training> train = getTraining(func);
  for (int64_t count : counts) {
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
    auto copy = cast<func::FuncOp>(func->clone());
    scratch->push_back(copy);
    int64_t baseSegments = train ? kMaxTrainingSegments : kMaxSegments;
    MicroBatching batching;
    {
      // A count the search tries and the program does not allow is
      // skipped quietly; one the user asked for is an error.
      std::optional<ScopedDiagnosticHandler> quiet;
      if (!options.microBatches)
        quiet.emplace(func.getContext(),
                      [](Diagnostic &) { return success(); });
      if (failed(microBatchForPipeline(func, copy, count, batching))) {
        if (options.microBatches)
          return failure();
        continue;
      }
    }
    Units units = getUnits(copy);
    // The work before each unit.
    SmallVector<double> before = {0};
    for (double each : units.work)
      before.push_back(before.back() + each);
    OpBuilder builder = OpBuilder::atBlockBegin(scratch->getBody());
    for (ArrayRef<int64_t> shape : meshes) {
      int64_t k = shape[0];
      if (k == 1 && count == 1)
        continue;
      // One stage is the whole function, priced once.
      SmallVector<int64_t> segments =
          k == 1 ? SmallVector<int64_t>{0, int64_t(units.work.size())}
                 : getSegments(units.work, units.crossing,
                               std::max(baseSegments, 2 * k));
      int64_t numSegments = segments.size() - 1;
      if (k > numSegments)
        continue;
      auto full = CostModel::get(cluster, shape);
      if (!full) {
        llvm::consumeError(full.takeError());
        continue;
      }
      auto stageMesh = MeshOp::create(builder, func.getLoc(), "pipeline", shape,
                                      ArrayAttr());
      progress(llvm::formatv("pricing {0} micro-batches, {1} stages on [{2}]: "
                             "{3} segments",
                             count, k,
                             llvm::make_range(shape.begin() + 1, shape.end()),
                             numSegments));
      // A stage of several segments with more than twice the work of an
      // even cut is not a candidate.
      auto isCandidate = [&](int64_t i, int64_t j) {
        return j == i + 1 || before[segments[j]] - before[segments[i]] <=
                                 2 * before.back() / k;
      };
      // Every contiguous range of segments as a stage: priced within the
      // limit, and again within less where the activations the schedule
      // keeps would not fit (the stage search knows one micro-batch). The
      // ranges of one key share their plans, each with the limit it was
      // priced within.
      std::map<std::vector<double>, SmallVector<std::pair<double, RangeCost>>>
          known;
      auto price = [&](int64_t i, int64_t j, double limit) {
        auto &plans = known[getRangeKey(units, segments[i], segments[j])];
        for (const auto &[within, range] : plans)
          // Where a limit had no plan, a smaller one has none either.
          if (within == limit ||
              (!std::isfinite(range.time) && within >= limit))
            return range;
        RangeCost range = priceRange(
            copy, segments[i], segments[j], batching, stageMesh, *full, limit,
            options.timeLimit, train ? &*train : nullptr, /*reference=*/false);
        plans.emplace_back(limit, range);
        ++priced;
        progress(llvm::formatv("priced units [{0}, {1}) within {2}: {3:F3} s, "
                               "{4} + {5} a micro-batch in flight",
                               segments[i], segments[j], formatBytes(limit),
                               range.time + range.backward,
                               formatBytes(range.parameters),
                               formatBytes(range.activations)));
        return range;
      };
      // Sending what crosses the end of segment j to the next stage, each
      // device its shards: on a link of its own, which the stages' eager
      // sends keep busy.
      auto send = [&](const RangeCost &range, int64_t j) {
        return j < numSegments ? full->getTransferTime(0, range.sent) : 0.0;
      };
      using Table = std::vector<std::vector<RangeCost>>;
      Table base(numSegments + 1, std::vector<RangeCost>(numSegments + 1));
      for (int64_t i = 0; i < numSegments; ++i)
        for (int64_t j = i + 1; j <= numSegments && isCandidate(i, j); ++j)
          base[i][j] = price(i, j, options.memoryLimit);
      std::map<int64_t, Table> tables;
      std::vector<double> values;
      auto fits = [&](const RangeCost &range, int64_t inFlight) {
        return std::isfinite(range.time) &&
               range.parameters + inFlight * range.activations <=
                   options.memoryLimit;
      };
      // The last stage first: it keeps the fewest micro-batches in flight,
      // so that a plan priced for fewer is at hand for more.
      int64_t mostInFlight = getInFlight(options.schedule, 0, k, count);
      for (int64_t stage = k - 1; stage >= 0; --stage) {
        int64_t inFlight = getInFlight(options.schedule, stage, k, count);
        if (tables.count(inFlight))
          continue;
        int64_t target = std::min(roundUpInFlight(inFlight), mostInFlight);
        Table &table = tables[inFlight] = base;
        for (int64_t i = 0; i < numSegments; ++i)
          for (int64_t j = i + 1; j <= numSegments && isCandidate(i, j); ++j) {
            RangeCost &range = table[i][j];
            if (std::isfinite(range.time) && !fits(range, inFlight)) {
              // The fastest plan of the range priced so far that fits, or
              // one priced for `target` micro-batches.
              RangeCost tried = range;
              range = RangeCost();
              for (const auto &[within, plan] :
                   known[getRangeKey(units, segments[i], segments[j])])
                if (fits(plan, inFlight) &&
                    plan.time + plan.backward < range.time + range.backward)
                  range = plan;
              for (int attempt = 0; attempt < 3 && !std::isfinite(range.time) &&
                                    std::isfinite(tried.time);
                   ++attempt) {
                double limit =
                    options.memoryLimit - (target - 1) * tried.activations;
                tried = limit > 0 ? price(i, j, limit) : RangeCost();
                if (fits(tried, inFlight))
                  range = tried;
              }
            }
            if (!fits(range, inFlight))
              range = RangeCost();
            if (std::isfinite(range.time))
              values.push_back(
                  std::max(range.time + range.backward, send(range, j)));
          }
      }
      stageMesh.erase();
      llvm::sort(values);
      values.erase(llvm::unique(values), values.end());
      auto cost = [&](int64_t i, int64_t j, int64_t stage) -> RangeCost & {
        return tables[getInFlight(options.schedule, stage, k, count)][i][j];
      };
      // For each bound on the slowest stage, the cuts with the least sum.
      for (double bound : values) {
        std::vector<std::vector<double>> least(
            k + 1, std::vector<double>(numSegments + 1, kInfinity));
        std::vector<std::vector<int64_t>> from(
            k + 1, std::vector<int64_t>(numSegments + 1, -1));
        least[0][0] = 0;
        for (int64_t s = 1; s <= k; ++s)
          for (int64_t j = s; j <= numSegments; ++j)
            for (int64_t i = s - 1; i < j; ++i) {
              // A stage and its outgoing link each pass one micro-batch
              // per step of the steady state; both add to the latency.
              const RangeCost &range = cost(i, j, s - 1);
              double time = range.time + range.backward;
              if (!std::isfinite(least[s - 1][i]) ||
                  std::max(time, send(range, j)) > bound)
                continue;
              double sum = least[s - 1][i] + time + send(range, j);
              if (sum < least[s][j]) {
                least[s][j] = sum;
                from[s][j] = i;
              }
            }
        if (!std::isfinite(least[k][numSegments]))
          continue;
        double time = least[k][numSegments] + (count - 1) * bound;
        if (time >= bestTime)
          continue;
        PipelinePlan plan;
        plan.training = train.has_value();
        plan.stages = k;
        plan.microBatches = count;
        plan.schedule = options.schedule;
        plan.mesh.assign(shape.begin(), shape.end());
        SmallVector<int64_t> bounds = {numSegments};
        for (int64_t s = k, j = numSegments; s > 0; --s)
          bounds.push_back(j = from[s][j]);
        std::reverse(bounds.begin(), bounds.end());
        SmallVector<RangeCost> ranges;
        SmallVector<double> sends;
        for (int64_t s = 0; s < k; ++s) {
          ranges.push_back(cost(bounds[s], bounds[s + 1], s));
          sends.push_back(send(ranges.back(), bounds[s + 1]));
          if (s > 0)
            plan.cuts.push_back(segments[bounds[s]]);
        }
        finishPlan(plan, ranges, sends);
        if (plan.training && plan.stepTime >= bestTime)
          continue;
        bestTime = plan.training ? plan.stepTime : time;
        best = std::move(plan);
      }
    }
  }
  if (best)
    best->candidates = priced;
  else if (options.stages == 1)
    return emitError(func.getLoc())
           << "sbp-auto-parallel: no plan of " << options.microBatches
           << " micro-batches fits memory-limit";
  else if (options.stages)
    return emitError(func.getLoc())
           << "sbp-auto-parallel: no pipeline of " << options.stages
           << " stages fits memory-limit (or the program has fewer layers "
              "than stages)";
  return best;
}

FailureOr<PipelinePlan>
mlir::sbp::priceReferencePipeline(func::FuncOp func, const Cluster &cluster,
                                  const PipelinePlan &like,
                                  const PipelineSearchOptions &options) {
  int64_t k = like.stages;
  if (like.mesh.size() < 3)
    return failure();
  ScopedDiagnosticHandler quiet(func.getContext(),
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  auto copy = cast<func::FuncOp>(func->clone());
  scratch->push_back(copy);
  std::optional<Training> train = getTraining(func);
  MicroBatching batching;
  if (failed(microBatchForPipeline(func, copy, like.microBatches, batching)))
    return failure();
  Units units = getUnits(copy);
  int64_t n = units.owner.size();
  // Units that are layers of a loop over layers, or every unit weighted by
  // its work when there is no such loop.
  SmallVector<double> weight(n);
  for (int64_t u = 0; u < n; ++u)
    weight[u] = (u > 0 && units.owner[u - 1] == units.owner[u]) ||
                (u + 1 < n && units.owner[u + 1] == units.owner[u]);
  if (llvm::none_of(weight, [](double w) { return w > 0; }))
    weight.assign(units.work.begin(), units.work.end());
  // Stage s begins at the first unit with at least s/k of the weight
  // before it, so that what precedes the first layer goes to the first
  // stage and what follows the last to the last.
  SmallVector<double> before = {0};
  for (double w : weight)
    before.push_back(before.back() + w);
  SmallVector<int64_t> bounds = {0};
  for (int64_t s = 1; s < k; ++s) {
    int64_t u = bounds.back() + 1;
    while (u < n && before[u] * k < before.back() * s)
      ++u;
    bounds.push_back(u);
  }
  bounds.push_back(n);
  if (bounds[k - 1] >= n)
    return failure();

  auto model = CostModel::get(cluster, like.mesh);
  if (!model) {
    llvm::consumeError(model.takeError());
    return failure();
  }
  OpBuilder builder = OpBuilder::atBlockBegin(scratch->getBody());
  auto stageMesh = MeshOp::create(builder, func.getLoc(), "pipeline", like.mesh,
                                  ArrayAttr());
  PipelinePlan plan;
  plan.training = train.has_value();
  plan.stages = k;
  plan.microBatches = like.microBatches;
  plan.schedule = like.schedule;
  plan.mesh = like.mesh;
  std::map<std::vector<double>, RangeCost> known;
  SmallVector<RangeCost> ranges;
  SmallVector<double> sends;
  for (int64_t s = 0; s < k; ++s) {
    auto [it, inserted] =
        known.try_emplace(getRangeKey(units, bounds[s], bounds[s + 1]));
    if (inserted) {
      it->second = priceRange(copy, bounds[s], bounds[s + 1], batching,
                              stageMesh, *model, kInfinity, options.timeLimit,
                              train ? &*train : nullptr, /*reference=*/true);
      ++plan.candidates;
    }
    if (!std::isfinite(it->second.time))
      return failure();
    ranges.push_back(it->second);
    sends.push_back(s + 1 < k ? model->getTransferTime(0, it->second.sent)
                              : 0.0);
    if (s > 0)
      plan.cuts.push_back(bounds[s]);
  }
  finishPlan(plan, ranges, sends);
  return plan;
}

LogicalResult mlir::sbp::applyPipelinePlan(
    func::FuncOp func, const PipelinePlan &plan, const Cluster &cluster,
    const PipelineSearchOptions &options,
    function_ref<void(func::FuncOp, const SearchProblem &, const Plan &,
                      const CostModel &, MeshOp)>
        onStage) {
  ModuleOp module = func->getParentOfType<ModuleOp>();
  std::optional<Training> train = getTraining(func);
  MicroBatching batching;
  if (failed(microBatchForPipeline(func, func, plan.microBatches, batching)))
    return failure();
  // As planPipeline cut it.
  assignStagesAtUnits(func, plan.cuts);
  SmallVector<PipelineOutput> outputs;
  SmallVector<func::FuncOp> stages, backward, update;
  if (train) {
    if (failed(outlineTrainingStages(func, batching, *train, stages, backward,
                                     update, outputs)))
      return failure();
  } else {
    FailureOr<SmallVector<func::FuncOp>> outlined =
        outlineStages(func, batching, outputs);
    if (failed(outlined))
      return failure();
    stages.assign(outlined->begin(), outlined->end());
  }
  auto model = CostModel::get(cluster, plan.mesh);
  if (!model)
    return module.emitError() << llvm::toString(model.takeError());
  MeshOp mesh = createPipelineMesh(module, plan.mesh);
  recordPipeline(module, func.getSymName(), stages, mesh, plan.microBatches,
                 ::sbp::runtime::getScheduleName(options.schedule), outputs,
                 backward, update);
  func.erase();

  StringRef sharding = SbpDialect::getShardingAttrName();
  auto placed = [&](func::FuncOp stage, const SearchProblem &problem,
                    const Plan &stagePlan) {
    onStage(stage, problem, stagePlan, *model, mesh);
    return propagateLayouts(stage, mesh, /*maxSweeps=*/8);
  };
  for (auto [k, stage] : llvm::enumerate(stages)) {
    // A received value arrives in the layout its sender gives it.
    for (unsigned i = 0; i < stage.getNumArguments(); ++i) {
      int64_t from = getSourceField(stage, i, "stage");
      if (from < 0)
        continue;
      if (auto layout = stages[from].getResultAttrOfType<NdSbpAttr>(
              getSourceField(stage, i, "result"), sharding))
        stage.setArgAttr(i, sharding, layout);
    }
    double leastMemory = 0;
    if (train) {
      if (failed(searchTrainingStage(stages, backward, update, k, mesh, *model,
                                     options.memoryLimit, options.timeLimit,
                                     leastMemory, nullptr, placed)))
        return emitError(stage.getLoc())
               << "sbp-auto-parallel: no plan of this training stage fits "
                  "the memory limit; the least found needs "
               << formatBytes(leastMemory) << " per device";
      continue;
    }
    FailureOr<StageSearch> searched =
        searchStage(stage, mesh, *model, options.memoryLimit, options.timeLimit,
                    leastMemory, nullptr);
    if (failed(searched))
      return emitError(stage.getLoc())
             << "sbp-auto-parallel: no plan of this stage fits the memory "
                "limit; the least found needs "
             << formatBytes(leastMemory) << " per device";
    if (failed(placed(stage, searched->problem, searched->plan)))
      return failure();
  }
  return success();
}

LogicalResult mlir::sbp::writeTimelineSvg(StringRef path,
                                          const PipelinePlan &plan) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (error)
    return failure();
  const double width = 960, rowHeight = 36, left = 80, top = 40;
  double makespan = std::max(plan.stepTime, 1e-12);
  double scale = (width - left - 20) / makespan;
  double height = top + plan.stages * rowHeight + 40;
  out << llvm::formatv(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n",
      width, height);
  out << llvm::formatv(
      "<text x=\"{0}\" y=\"20\" font-size=\"13\">{1} stages on [{2}], {3} "
      "micro-batches, {4}: predicted step {5:F3} ms, bubble {6:F1}%</text>\n",
      left, plan.stages,
      plan.mesh.size() > 1
          ? llvm::join(llvm::map_range(
                           ArrayRef(plan.mesh).drop_front(),
                           [](int64_t size) { return std::to_string(size); }),
                       ", ")
          : std::string("1"),
      plan.microBatches, ::sbp::runtime::getScheduleName(plan.schedule),
      plan.stepTime * 1e3, plan.bubble * 100);
  for (int64_t s = 0; s < plan.stages; ++s)
    out << llvm::formatv("<text x=\"8\" y=\"{0}\">stage {1}</text>\n",
                         top + s * rowHeight + rowHeight / 2 + 4, s);
  for (const ::sbp::runtime::TimedTask &task : plan.timeline) {
    double x = left + task.begin * scale, y = top + task.stage * rowHeight;
    double w = std::max(1.0, (task.end - task.begin) * scale);
    out << llvm::formatv(
        "<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" height=\"{3:F1}\" "
        "fill=\"{4}\" stroke=\"white\"><title>{5}{6} stage {7}: {8:F3}-{9:F3} "
        "ms</title></rect>\n",
        x, y + 2, w, rowHeight - 4, task.task.backward ? "#59a14f" : "#4e79a7",
        task.task.backward ? "B" : "F", task.task.microBatch, task.stage,
        task.begin * 1e3, task.end * 1e3);
    if (w > 18)
      out << llvm::formatv("<text x=\"{0:F1}\" y=\"{1:F1}\" fill=\"white\">"
                           "{2}{3}</text>\n",
                           x + 3, y + rowHeight / 2 + 4,
                           task.task.backward ? "B" : "F",
                           task.task.microBatch);
  }
  double axisY = top + plan.stages * rowHeight + 16;
  out << llvm::formatv("<text x=\"{0}\" y=\"{1}\">0</text><text x=\"{2}\" "
                       "y=\"{1}\" text-anchor=\"end\">{3:F3} ms</text>\n",
                       left, axisY, width - 20, makespan * 1e3);
  out << "</svg>\n";
  return success();
}
