//===- AutoParallel.cpp - Choose signatures by searching a cost model -----===//
//
// Resolves the mesh and the cluster, turns every function into a cost graph
// (SearchProblem), solves it exactly (CostGraph), weighs memory in when the
// fastest plan does not fit, records the plan for boxing insertion and
// writes the report. docs/auto-parallel.md describes the search.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "sbp/Cost/CostModel.h"
#include "sbp/Transforms/AutoParallelReport.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/ProgressLine.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/Recomputation.h"
#include "sbp/Transforms/SearchProblem.h"
#include "sbp/Transforms/StagePlanner.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <cmath>
#include <numeric>

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPAUTOPARALLELPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// `[2, 4]`, as the report writes meshes.
std::string formatMesh(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, ", ");
  return text + "]";
}

using Clock = std::chrono::steady_clock;

/// The reference strategies of the report, each the best plan under its
/// constraint, priced by the same model: replicated (every value `B`), data
/// parallel (inputs split along dimension 0 on every axis, parameters `B`),
/// tensor parallel (parameters split on every axis, inputs `B`) and, on
/// meshes of several axes, data x tensor parallel (Megatron-LM's layout,
/// sequence parallelism among its activation layouts); FSDP (parameters
/// split on every axis, gathered for use, batch split) and, on meshes of
/// several axes, HSDP (FSDP within the other axes, data parallel across
/// the first).
SmallVector<std::pair<std::string, PlanCost>>
priceReferences(const SearchProblem &problem, double timeLimit) {
  auto isBroadcast = [](SbpEntry e) { return e.isBroadcast(); };
  auto isSplit = [](SbpEntry e) { return e.isSplit(); };
  auto isBatchSplit = [](SbpEntry e) { return e.isSplit() && !e.getDim(); };
  auto isB = [&](NdSbpAttr layout) {
    return !layout || llvm::all_of(layout.getEntries(), isBroadcast);
  };
  auto splitsEverywhere = [&](NdSbpAttr layout) {
    return llvm::all_of(layout.getEntries(), isSplit);
  };
  auto splitsBatch = [&](NdSbpAttr layout) {
    return llvm::all_of(layout.getEntries(), isBatchSplit);
  };
  using Kind = SearchProblem::NodeKind;
  Allow replicated = [&](const SearchProblem::Node &node, unsigned s) {
    if (node.kind != Kind::Op)
      return isB(node.layouts[s]);
    const NdSbpSignature &signature = node.signatures[s];
    return llvm::all_of(signature.operands, isB) &&
           llvm::all_of(signature.results, isB);
  };
  Allow dataParallel = [&](const SearchProblem::Node &node, unsigned s) {
    if (node.kind != Kind::Argument)
      return true;
    return node.isParameter ? isB(node.layouts[s])
                            : splitsBatch(node.layouts[s]);
  };
  Allow tensorParallel = [&](const SearchProblem::Node &node, unsigned s) {
    if (node.kind != Kind::Argument)
      return true;
    return node.isParameter ? splitsEverywhere(node.layouts[s])
                            : isB(node.layouts[s]);
  };
  SmallVector<std::pair<std::string, PlanCost>> references = {
      {"data parallel", solvePlan(problem, 0, dataParallel, timeLimit).cost},
      {"tensor parallel",
       solvePlan(problem, 0, tensorParallel, timeLimit).cost},
      {"replicated", solvePlan(problem, 0, replicated, timeLimit).cost}};
  SmallVector<AxisRole> sharded(problem.getMeshShape().size(),
                                AxisRole::Sharded);
  references.push_back(
      {"FSDP", solvePlan(problem, 0, getRecipe(problem, sharded), timeLimit)
                   .cost});
  if (problem.getMeshShape().size() > 1) {
    references.push_back(
        {"data x tensor parallel",
         solvePlan(problem, 0, getDataTensorParallel(problem), timeLimit)
             .cost});
    SmallVector<AxisRole> hybrid(sharded);
    hybrid.front() = AxisRole::Data;
    references.push_back(
        {"HSDP", solvePlan(problem, 0, getRecipe(problem, hybrid), timeLimit)
                     .cost});
  }
  return references;
}

struct SbpAutoParallelPass
    : public mlir::sbp::impl::SbpAutoParallelPassBase<SbpAutoParallelPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  FailureOr<MeshOp> resolveMesh(const Cluster &cluster);
  /// Pipelines the module's function when a pipeline is asked for or beats
  /// the best plan without stages; whether it did.
  FailureOr<bool> tryPipeline(const Cluster &cluster, MeshOp mesh,
                              const CostModel &model, double limit,
                              AutoParallelReport &writer);
  /// The fastest plan within `limit`, or failure with the least memory a
  /// plan was found to need.
  FailureOr<Plan> search(const SearchProblem &problem, double limit,
                         StringRef funcName, double &leastMemory);
  void progress(StringRef funcName, const Twine &message);

  /// A function's search: its problem, its fastest plan within the limit
  /// (failure when none fits, with the least memory one needed), and how
  /// long it took.
  struct Searched {
    SearchProblem problem;
    FailureOr<Plan> plan;
    double leastMemory = 0;
    double seconds = 0;
  };
  FailureOr<Searched> searchFunction(FunctionOpInterface func, MeshOp mesh,
                                     const CostModel &model, double limit);
  /// A training step's search when no plan fits without recomputation:
  /// copies of `func` recomputing more and more forward segments until one
  /// fits; the copy that fits replaces `func` and its search `searched`,
  /// else `searched` only learns the least memory a copy needed.
  /// `recomputed` gets the number of segments and of the ops copied.
  LogicalResult searchRecomputing(func::FuncOp &func, MeshOp mesh,
                                  const CostModel &model, double limit,
                                  Searched &searched,
                                  std::pair<int64_t, int64_t> &recomputed);

  /// The search's status while it runs.
  std::optional<ProgressLine> line;
  /// Whether resolveMesh made the mesh (rather than finding it).
  bool createdMesh = false;
  /// The plan without stages that tryPipeline searched to compare with,
  /// for the function it kept unpipelined.
  std::optional<Searched> unpipelined;
  /// The pipeline's mesh, without stages, when tryPipeline found a plan
  /// there faster than its pipeline (and than the mesh asked for), with
  /// its cost model.
  std::optional<MeshOp> reshapedMesh;
  std::shared_ptr<CostModel> reshapedModelHolder;
  /// The mesh of the plan without stages that the pipeline beat, when it
  /// is not the one asked for (the report says so).
  SmallVector<int64_t> reshapedSingle;
};

void SbpAutoParallelPass::progress(StringRef funcName, const Twine &message) {
  if (line)
    line->update("@" + funcName + ": " + message);
}

FailureOr<MeshOp> SbpAutoParallelPass::resolveMesh(const Cluster &cluster) {
  ModuleOp module = getOperation();
  MeshOp annotated;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    FailureOr<MeshOp> mesh = findAnnotatedMesh(func);
    if (failed(mesh))
      return failure();
    if (*mesh && annotated && *mesh != annotated)
      return func.emitError()
             << "sbp-auto-parallel: functions are annotated on different "
                "meshes, @"
             << annotated.getSymName() << " and @" << mesh->getSymName();
    if (*mesh)
      annotated = *mesh;
  }
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  SmallVector<int64_t> shape(cluster.shape);
  if (!mesh.empty()) {
    std::optional<SmallVector<int64_t>> parsed = parseMeshShape(mesh);
    if (!parsed)
      return module.emitError()
             << "sbp-auto-parallel: mesh=" << mesh
             << ": expected positive sizes separated by 'x', e.g. 2x4";
    shape = *parsed;
    if (annotated && annotated.getShape() != ArrayRef<int64_t>(shape))
      return annotated.emitError()
             << "sbp-auto-parallel: mesh=" << mesh
             << " does not match the shape of mesh @" << annotated.getSymName()
             << " that the annotations use";
  } else if (annotated) {
    return annotated;
  } else if (meshes.size() == 1) {
    return meshes.front();
  } else if (cluster.hostCores) {
    shape = {cluster.getNumDevices()};
  }
  if (annotated)
    return annotated;
  for (MeshOp existing : meshes)
    if (existing.getShape() == ArrayRef<int64_t>(shape))
      return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  std::string name = "mesh";
  for (unsigned suffix = 0; module.lookupSymbol(name);)
    name = "mesh_" + std::to_string(suffix++);
  createdMesh = true;
  return MeshOp::create(builder, module.getLoc(), name, shape, ArrayAttr());
}

auto SbpAutoParallelPass::searchFunction(FunctionOpInterface func, MeshOp mesh,
                                         const CostModel &model, double limit)
    -> FailureOr<Searched> {
  Clock::time_point funcStart = Clock::now();
  cloneCheapValues(func);
  FailureOr<SearchProblem> problem = SearchProblem::build(func, mesh, model);
  if (failed(problem))
    return failure();
  progress(func.getName(),
           llvm::formatv("{0} nodes to place", problem->getNodes().size()));
  double leastMemory = 0;
  FailureOr<Plan> plan = search(*problem, limit, func.getName(), leastMemory);
  double seconds =
      std::chrono::duration<double>(Clock::now() - funcStart).count();
  return Searched{std::move(*problem), std::move(plan), leastMemory, seconds};
}

LogicalResult SbpAutoParallelPass::searchRecomputing(
    func::FuncOp &func, MeshOp mesh, const CostModel &model, double limit,
    Searched &searched, std::pair<int64_t, int64_t> &recomputed) {
  ForwardSegments segments = getForwardSegments(func, recomputeSegments);
  // The segments keeping the most bytes for the backward pass go first.
  SmallVector<int64_t> order(segments.segments.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return segments.savedBytes[a] > segments.savedBytes[b];
  });
  for (size_t count = 1; count <= order.size(); ++count) {
    if (segments.savedBytes[order[count - 1]] == 0)
      break;
    progress(func.getName(),
             llvm::formatv("recomputing {0} of {1} forward segments", count,
                           order.size()));
    OpBuilder builder(func);
    builder.setInsertionPointAfter(func);
    auto copy = cast<func::FuncOp>(builder.clone(*func));
    copy.setName((func.getName() + "_recomputing").str());
    ForwardSegments copySegments = getForwardSegments(copy, recomputeSegments);
    DenseSet<Operation *> copies;
    int64_t copied = 0;
    for (size_t k = 0; k < count; ++k)
      copied += recomputeSegment(copy, copySegments, order[k], copies);
    FailureOr<Searched> attempt = searchFunction(copy, mesh, model, limit);
    if (failed(attempt)) {
      copy.erase();
      return failure();
    }
    if (succeeded(attempt->plan)) {
      StringAttr name = func.getSymNameAttr();
      func.erase();
      copy.setName(name);
      func = copy;
      recomputed = {int64_t(count), copied};
      searched = std::move(*attempt);
      return success();
    }
    searched.leastMemory = std::min(searched.leastMemory, attempt->leastMemory);
    copy.erase();
  }
  return success();
}

FailureOr<bool> SbpAutoParallelPass::tryPipeline(const Cluster &cluster,
                                                 MeshOp mesh,
                                                 const CostModel &model,
                                                 double limit,
                                                 AutoParallelReport &writer) {
  ModuleOp module = getOperation();
  auto scheduleKind = ::sbp::runtime::parseSchedule(schedule);
  if (pipelineStages < 0 || microBatches < 0 || !scheduleKind)
    return module.emitError()
           << "sbp-auto-parallel: "
           << (!scheduleKind
                   ? "schedule=" + schedule + ": expected 1f1b or gpipe"
               : pipelineStages < 0 ? std::string("pipeline-stages must not "
                                                  "be negative")
                                    : std::string("micro-batches must not be "
                                                  "negative"));
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  if (funcs.size() != 1 || module->hasAttr(SbpDialect::getPipelineAttrName())) {
    // Stages or micro-batches asked for (this runs with one stage only for
    // micro-batches) cannot be had; a search free to choose takes none.
    if (pipelineStages != 0)
      return module.emitError()
             << "sbp-auto-parallel: "
             << (pipelineStages > 1
                     ? "pipeline-stages=" + std::to_string(pipelineStages)
                     : "micro-batches=" + std::to_string(microBatches))
             << " needs a module of one function";
    return false;
  }
  func::FuncOp func = funcs.front();
  // The user's layout constraints hold on the whole mesh: no stages then,
  // unless asked for (and refused by micro-batching).
  FailureOr<MeshOp> annotated = findAnnotatedMesh(func);
  if (failed(annotated))
    return failure();
  if (*annotated && pipelineStages == 0)
    return false;

  double single = std::numeric_limits<double>::infinity();
  if (pipelineStages == 0) {
    FailureOr<Searched> searched = searchFunction(func, mesh, model, limit);
    if (failed(searched))
      return failure();
    if (succeeded(searched->plan))
      single = searched->plan->cost.stepTime();
    // A pipeline does the same work on the same devices, at best without
    // communication but with a bubble: with m micro-batches and at least 2
    // stages its step is at least compute * (m + 1) / m. Below that there
    // is nothing to search for.
    double most = microBatches ? double(microBatches) : 16;
    bool hopeless = succeeded(searched->plan) &&
                    single <= searched->plan->cost.compute * (most + 1) / most;
    unpipelined = std::move(*searched);
    if (hopeless)
      return false;
  }
  PipelineSearchOptions options;
  options.stages = pipelineStages;
  options.microBatches = microBatches;
  options.schedule = *scheduleKind;
  options.memoryLimit = limit;
  options.timeLimit = timeLimit;
  FailureOr<std::optional<PipelinePlan>> planned = planPipeline(
      func, cluster, mesh.getShape(), options, single,
      [&](const Twine &message) { progress(func.getName(), message); });
  if (failed(planned))
    return failure();
  if (!*planned)
    return false;
  const PipelinePlan &plan = **planned;
  line->note(llvm::formatv("@{0}: {1} stage{2}, {3} micro-batches: {4:F3} "
                           "ms per step",
                           func.getName(), plan.stages,
                           plan.stages == 1 ? "" : "s", plan.microBatches,
                           plan.stepTime * 1e3));
  // The pipeline's mesh without stages is the same devices: a plan there
  // may keep its first axis whole, which costs what the stages cost one
  // after the other, without their transfers. So a pipeline that nothing
  // overlaps (one micro-batch) never beats it, and a search free to choose
  // compares with it: when it wins, the mesh is reshaped instead.
  if (pipelineStages == 0 && plan.mesh.size() > mesh.getShape().size()) {
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    std::string name = "mesh";
    for (unsigned suffix = 0; module.lookupSymbol(name);)
      name = "mesh_" + std::to_string(suffix++);
    auto reshaped =
        MeshOp::create(builder, module.getLoc(), name, plan.mesh, ArrayAttr());
    // The search's problem refers to its cost model: held by the pass.
    auto reshapedModel = CostModel::get(cluster, plan.mesh);
    if (reshapedModel)
      reshapedModelHolder = std::make_shared<CostModel>(*reshapedModel);
    else
      llvm::consumeError(reshapedModel.takeError());
    FailureOr<Searched> flat =
        reshapedModelHolder
            ? searchFunction(func, reshaped, *reshapedModelHolder, limit)
            : FailureOr<Searched>(failure());
    if (succeeded(flat) && succeeded(flat->plan)) {
      double cost = flat->plan->cost.stepTime();
      progress(func.getName(),
               llvm::formatv("without stages on mesh {0}: {1:F3} ms per step",
                             formatMesh(plan.mesh), cost * 1e3));
      if (cost <= plan.stepTime) {
        unpipelined = std::move(*flat);
        reshapedMesh = reshaped;
        return false;
      }
      single = std::min(single, cost);
      reshapedSingle = plan.mesh;
    }
    reshaped.erase();
  }
  // Megatron-LM's pipeline, priced before the stages replace the step.
  FailureOr<PipelinePlan> reference = failure();
  if (!report.empty()) {
    progress(func.getName(), "pricing the reference pipeline");
    reference = priceReferencePipeline(func, cluster, plan, options);
  }
  if (failed(applyPipelinePlan(
          func, plan, cluster, options,
          [&](func::FuncOp stage, const SearchProblem &problem,
              const Plan &stagePlan, const CostModel &, MeshOp) {
            if (!report.empty())
              writer.addFunction(stage, problem, stagePlan, 0, {});
          })))
    return failure();
  // The stages run on their sub-mesh; a whole mesh made for them goes.
  if (createdMesh && SymbolTable::symbolKnownUseEmpty(mesh, module))
    mesh.erase();
  // Why: asked for, or faster than every plan without stages priced.
  std::string why;
  if (pipelineStages != 0)
    why = "asked for (pipeline-stages=" + std::to_string(pipelineStages) +
          ")";
  else if (!std::isfinite(single))
    why = "no plan without stages fits the memory limit";
  else
    why = llvm::formatv(
        "{0:F3} ms per step against {1:F3} ms for the best plan without "
        "stages{2}: the stages overlap {3} micro-batches",
        plan.stepTime * 1e3, single * 1e3,
        reshapedSingle.empty()
            ? std::string(" on mesh ") + formatMesh(mesh.getShape())
            : " on mesh " + formatMesh(mesh.getShape()) + " or " +
                  formatMesh(reshapedSingle),
        plan.microBatches);
  writer.setPipeline(plan, single,
                     succeeded(reference) ? &*reference : nullptr, why);
  if (!timeline.empty() && failed(writeTimelineSvg(timeline, plan)))
    return module.emitError()
           << "sbp-auto-parallel: cannot write timeline=" << timeline;
  return true;
}

FailureOr<Plan> SbpAutoParallelPass::search(const SearchProblem &problem,
                                            double limit, StringRef funcName,
                                            double &leastMemory) {
  return searchWithinMemory(
      problem, limit, timeLimit, leastMemory,
      [&](const Twine &message) { progress(funcName, message); });
}

void SbpAutoParallelPass::runOnOperation() {
  line.emplace("sbp-auto-parallel: ", quiet);
  llvm::scope_exit clearLine([&] { line.reset(); });
  ModuleOp module = getOperation();
  auto cluster = loadCluster(this->cluster);
  if (!cluster) {
    module.emitError() << "sbp-auto-parallel: cluster=" << this->cluster << ": "
                       << llvm::toString(cluster.takeError());
    return signalPassFailure();
  }
  double limit = cluster->device.memoryCapacity;
  if (!memoryLimit.empty()) {
    std::optional<double> parsed = parseByteSize(memoryLimit);
    if (!parsed || *parsed <= 0) {
      module.emitError() << "sbp-auto-parallel: memory-limit=" << memoryLimit
                         << ": expected a positive byte count, e.g. 40GiB";
      return signalPassFailure();
    }
    limit = *parsed;
  }
  FailureOr<MeshOp> meshOp = resolveMesh(*cluster);
  if (failed(meshOp))
    return signalPassFailure();
  auto model = CostModel::get(*cluster, meshOp->getShape());
  if (!model) {
    meshOp->emitError() << "sbp-auto-parallel: "
                        << llvm::toString(model.takeError());
    return signalPassFailure();
  }

  std::optional<AutoParallelReport> writer;
  writer.emplace(*model, *meshOp, limit);
  const CostModel *costModel = &*model;
  if (pipelineStages != 1 || microBatches > 1) {
    FailureOr<bool> pipelined =
        tryPipeline(*cluster, *meshOp, *model, limit, *writer);
    if (failed(pipelined))
      return signalPassFailure();
    if (*pipelined) {
      if (!report.empty() && failed(writer->write(report))) {
        module.emitError() << "sbp-auto-parallel: cannot write report="
                           << report;
        return signalPassFailure();
      }
      return;
    }
    // The same devices reshaped as the pipeline's mesh, without stages.
    if (reshapedMesh) {
      // One mesh a module, as sbp-run runs it: the one asked for goes
      // unless something names it.
      if (SymbolTable::symbolKnownUseEmpty(*meshOp, module))
        meshOp->erase();
      meshOp = *reshapedMesh;
      costModel = reshapedModelHolder.get();
      writer.emplace(*costModel, *meshOp, limit);
    }
  }
  // Recomputation may replace a function: iterate over a list.
  for (auto func : llvm::to_vector(module.getOps<FunctionOpInterface>())) {
    if (func.isExternal())
      continue;
    // The search tryPipeline made for this function stands.
    std::optional<Searched> searched;
    if (unpipelined && unpipelined->problem.getFunction() == func) {
      searched = std::move(unpipelined);
    } else {
      FailureOr<Searched> fresh = searchFunction(func, *meshOp, *costModel, limit);
      if (failed(fresh))
        return signalPassFailure();
      searched = std::move(*fresh);
    }
    std::pair<int64_t, int64_t> recomputed = {0, 0};
    auto step = dyn_cast<func::FuncOp>(func.getOperation());
    if (failed(searched->plan) && step && recomputeSegments > 0 &&
        step->hasAttr(SbpDialect::getTrainStepAttrName())) {
      if (failed(searchRecomputing(step, *meshOp, *costModel, limit, *searched,
                                   recomputed)))
        return signalPassFailure();
      func = step;
    }
    SearchProblem *problem = &searched->problem;
    FailureOr<Plan> &plan = searched->plan;
    double leastMemory = searched->leastMemory;
    if (failed(plan)) {
      std::string what = memoryLimit.empty()
                             ? "the memory of a " + cluster->name +
                                   " device (" + formatBytes(limit) + ")"
                             : "memory-limit=" + memoryLimit;
      emitError(func.getLoc())
          << "sbp-auto-parallel: " << what
          << " cannot be met: the plan needing the least memory "
             "that the search found needs "
          << formatBytes(leastMemory) << " per device";
      return signalPassFailure();
    }
    double seconds = searched->seconds;
    if (!report.empty()) {
      progress(func.getName(), "pricing the reference strategies");
      writer->addFunction(func, *problem, *plan, seconds,
                          priceReferences(*problem, timeLimit));
      if (recomputed.first)
        writer->setRecomputation(recomputed.first, recomputeSegments,
                                recomputed.second);
    }
    problem->record(plan->states);
    if (failed(propagateLayouts(func, *meshOp, /*maxSweeps=*/8)))
      return signalPassFailure();
  }
  if (!report.empty() && failed(writer->write(report))) {
    module.emitError() << "sbp-auto-parallel: cannot write report=" << report;
    return signalPassFailure();
  }
}

} // namespace
