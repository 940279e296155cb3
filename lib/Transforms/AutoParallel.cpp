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
#include "sbp/Cost/CostModel.h"
#include "sbp/Transforms/AutoParallelReport.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/SearchProblem.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <cmath>

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPAUTOPARALLELPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

using Clock = std::chrono::steady_clock;

/// Parses `2x4`.
std::optional<SmallVector<int64_t>> parseMeshShape(StringRef text) {
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  SmallVector<int64_t> shape;
  for (StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size <= 0)
      return std::nullopt;
    shape.push_back(size);
  }
  return shape;
}

/// Producers whose result is the same whatever its layout and costs
/// nothing to make again: an uninitialized tensor, a splat constant and a
/// fill of one with a constant. CSE shares one between unrelated ops (every
/// matmul's zero accumulator); each use gets its own copy so that the
/// layouts of unrelated ops stay independent (CSE merges copies whose
/// layouts agree again after partitioning).
bool isFreeToRepeat(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResultTypes()[0]))
    return false;
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      return dense.isSplat();
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() &&
           fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  return false;
}

void duplicateFreeProducers(FunctionOpInterface func) {
  SmallVector<Operation *> producers;
  func.walk([&](Operation *op) {
    if (isFreeToRepeat(op))
      producers.push_back(op);
  });
  // Users first, so that a copied fill's empty tensor is copied too.
  for (Operation *op : llvm::reverse(producers)) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    for (OpOperand *use : llvm::drop_begin(uses))
      use->set(builder.clone(*op)->getResult(0));
  }
}

/// A plan: states per node, and what it costs.
struct Plan {
  std::vector<unsigned> states;
  PlanCost cost;
  Solution solution;
  /// Solves the search needed to find it (one per byte price tried).
  unsigned solves = 1;
};

using Allow = std::function<bool(const SearchProblem::Node &, unsigned)>;

Plan solve(const SearchProblem &problem, double memoryWeight,
           const Allow &allow, double timeLimit) {
  std::vector<std::vector<unsigned>> states;
  CostGraph graph = problem.buildGraph(memoryWeight, allow, states);
  Plan plan;
  plan.solution = graph.solve(timeLimit);
  for (auto [node, state] : llvm::enumerate(plan.solution.states))
    plan.states.push_back(states[node][state]);
  plan.cost = problem.evaluate(plan.states);
  return plan;
}

/// The reference strategies of the report, each the best plan under its
/// constraint, priced by the same model: replicated (every value `B`), data
/// parallel (inputs split along dimension 0 on every axis, parameters `B`)
/// and tensor parallel (parameters split on every axis, inputs `B`).
SmallVector<std::pair<std::string, PlanCost>>
priceReferences(const SearchProblem &problem, double timeLimit) {
  auto isB = [](NdSbpAttr layout) {
    return !layout || llvm::all_of(layout.getEntries(),
                                   [](SbpEntry e) { return e.isBroadcast(); });
  };
  auto splitsEverywhere = [](NdSbpAttr layout) {
    return llvm::all_of(layout.getEntries(),
                        [](SbpEntry e) { return e.isSplit(); });
  };
  auto splitsBatch = [](NdSbpAttr layout) {
    return llvm::all_of(layout.getEntries(), [](SbpEntry e) {
      return e.isSplit() && e.getDim() == 0;
    });
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
  return {
      {"data parallel", solve(problem, 0, dataParallel, timeLimit).cost},
      {"tensor parallel", solve(problem, 0, tensorParallel, timeLimit).cost},
      {"replicated", solve(problem, 0, replicated, timeLimit).cost}};
}

std::string formatBytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024;
  if (bytes >= 1024 * kMiB)
    return llvm::formatv("{0:F2} GiB", bytes / (1024 * kMiB)).str();
  return llvm::formatv("{0:F2} MiB", bytes / kMiB).str();
}

struct SbpAutoParallelPass
    : public sbp::impl::SbpAutoParallelPassBase<SbpAutoParallelPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  FailureOr<MeshOp> resolveMesh(const Cluster &cluster);
  /// The fastest plan within `limit`, or failure with the least memory a
  /// plan was found to need.
  FailureOr<Plan> search(const SearchProblem &problem, double limit,
                         StringRef funcName, double &leastMemory);
  void progress(StringRef funcName, const Twine &message);

  Clock::time_point start;
};

void SbpAutoParallelPass::progress(StringRef funcName, const Twine &message) {
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (elapsed > 1)
    llvm::errs() << llvm::formatv("sbp-auto-parallel: @{0}: ", funcName)
                 << message << llvm::formatv(" ({0:F1} s)\n", elapsed);
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
  return MeshOp::create(builder, module.getLoc(), name, shape, ArrayAttr());
}

FailureOr<Plan> SbpAutoParallelPass::search(const SearchProblem &problem,
                                            double limit, StringRef funcName,
                                            double &leastMemory) {
  Plan fastest = solve(problem, 0, nullptr, timeLimit);
  leastMemory = fastest.cost.peakMemory;
  progress(funcName, llvm::formatv("fastest plan: {0:F3} ms per step, {1}",
                                   fastest.cost.stepTime() * 1e3,
                                   formatBytes(fastest.cost.peakMemory)));
  if (fastest.cost.peakMemory <= limit)
    return fastest;
  progress(funcName, "the fastest plan needs " +
                         formatBytes(fastest.cost.peakMemory) +
                         ", weighing memory in");
  // Raise the price of a byte until a plan fits, then bisect (in log
  // space) for the cheapest price that still fits.
  double time = std::max(fastest.cost.stepTime(), 1e-12);
  double low = 0, high = time / fastest.cost.peakMemory * 1e-3;
  std::optional<Plan> fit;
  unsigned solves = 1;
  for (int round = 0; round < 40 && !fit; ++round) {
    Plan plan = solve(problem, high, nullptr, timeLimit);
    ++solves;
    leastMemory = std::min(leastMemory, plan.cost.peakMemory);
    if (plan.cost.peakMemory <= limit) {
      fit = std::move(plan);
      break;
    }
    low = high;
    high *= 10;
  }
  if (!fit)
    return failure();
  for (int round = 0; round < 8 && low > 0; ++round) {
    double middle = std::sqrt(low * high);
    Plan plan = solve(problem, middle, nullptr, timeLimit);
    ++solves;
    progress(funcName, llvm::formatv("byte price {0:e}: {1}", middle,
                                     formatBytes(plan.cost.peakMemory)));
    if (plan.cost.peakMemory <= limit) {
      high = middle;
      if (plan.cost.stepTime() < fit->cost.stepTime())
        fit = std::move(plan);
    } else {
      low = middle;
    }
  }
  fit->solves = solves;
  return std::move(*fit);
}

void SbpAutoParallelPass::runOnOperation() {
  start = Clock::now();
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

  AutoParallelReport writer(*model, *meshOp, limit);
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal())
      continue;
    Clock::time_point funcStart = Clock::now();
    duplicateFreeProducers(func);
    FailureOr<SearchProblem> problem =
        SearchProblem::build(func, *meshOp, *model);
    if (failed(problem))
      return signalPassFailure();
    progress(func.getName(),
             llvm::formatv("{0} nodes to place", problem->getNodes().size()));
    double leastMemory = 0;
    FailureOr<Plan> plan = search(*problem, limit, func.getName(), leastMemory);
    if (failed(plan)) {
      std::string what = memoryLimit.empty()
                             ? "the memory of a " + cluster->name +
                                   " device (" + formatBytes(limit) + ")"
                             : "memory-limit=" + memoryLimit;
      func.emitError() << "sbp-auto-parallel: " << what
                       << " cannot be met: the plan needing the least memory "
                          "that the search found needs "
                       << formatBytes(leastMemory) << " per device";
      return signalPassFailure();
    }
    double seconds =
        std::chrono::duration<double>(Clock::now() - funcStart).count();
    if (!report.empty()) {
      progress(func.getName(), "pricing the reference strategies");
      writer.addFunction(func, *problem, plan->states, plan->cost,
                         plan->solution, plan->solves, seconds,
                         priceReferences(*problem, timeLimit));
    }
    problem->record(plan->states);
    if (failed(propagateLayouts(func, *meshOp, /*maxSweeps=*/8)))
      return signalPassFailure();
  }
  if (!report.empty() && failed(writer.write(report))) {
    module.emitError() << "sbp-auto-parallel: cannot write report=" << report;
    return signalPassFailure();
  }
}

} // namespace
