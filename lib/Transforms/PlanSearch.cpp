//===- PlanSearch.cpp - The fastest plan within a memory limit ------------===//
//
// What sbp-auto-parallel solves for each function, and its stage search for
// each candidate stage: the fastest plan, and when that does not fit, the
// plan of the cheapest byte price that does (a Lagrangian weight on
// memory, found by bisection in log space).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "sbp/Dialect/Sbp/Utils/Casts.h"
#include "sbp/Transforms/SearchProblem.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <memory>

using namespace mlir;
using namespace mlir::sbp;

std::string sbp::formatBytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024;
  if (bytes >= 1024 * kMiB)
    return llvm::formatv("{0:F2} GiB", bytes / (1024 * kMiB)).str();
  return llvm::formatv("{0:F2} MiB", bytes / kMiB).str();
}

std::string sbp::formatGap(double gap) {
  if (gap == 0)
    return "optimal";
  return llvm::formatv("gap {0:F2}%", gap * 100).str();
}

Plan sbp::solvePlan(
    const SearchProblem &problem, double memoryWeight,
    const std::function<bool(const SearchProblem::Node &, unsigned)> &allow,
    double timeLimit) {
  std::vector<std::vector<unsigned>> states;
  CostGraph graph = problem.buildGraph(memoryWeight, allow, states);
  Plan plan;
  plan.solution = graph.solve(timeLimit);
  for (auto [node, state] : llvm::enumerate(plan.solution.states))
    plan.states.push_back(states[node][state]);
  plan.cost = problem.evaluate(plan.states);
  // Without a byte price the graph's cost is the step time; with one, its
  // bound says nothing of time alone.
  if (memoryWeight == 0)
    plan.lowerBound = plan.cost.stepTime() -
                      (plan.solution.cost - plan.solution.lowerBound);
  return plan;
}

double Plan::getGap() const {
  double time = cost.stepTime();
  if (time <= 0)
    return 0;
  double gap = (time - lowerBound) / time;
  // What rounding leaves of an exact solve's zero.
  return gap > 1e-9 ? gap : 0;
}

Allow sbp::getRecipe(const SearchProblem &problem,
                     ArrayRef<AxisRole> roles,
                     std::function<std::optional<bool>(unsigned)> isParameter) {
  using Kind = SearchProblem::NodeKind;
  Block &entry = problem.getFunction().getFunctionBody().front();
  if (!isParameter) {
    auto kinds = std::make_shared<DenseMap<unsigned, bool>>();
    for (const SearchProblem::Node &node : problem.getNodes())
      if (node.kind == Kind::Argument)
        (*kinds)[node.index] = node.isParameter;
    isParameter = [kinds](unsigned i) -> std::optional<bool> {
      return kinds->lookup(i);
    };
  }
  // Views of a parameter, and its copies in another element type (mixed
  // precision's master weights cast to the compute type), are it.
  auto isView = [](Operation *op) {
    return isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
               tensor::ExpandShapeOp, tensor::CastOp>(op) ||
           isElementTypeCopy(op);
  };
  // Parameters read only as vectors (LayerNorm's gains and biases, the
  // projections' biases, or their slices per layer) are free over the
  // tensor axes: Megatron-LM splits a bias with its column-parallel
  // product's output and keeps the others whole on every device.
  auto isVector = [&](BlockArgument arg) {
    SmallVector<Value> work = {arg};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (isView(user) && user->getOperand(0) == value)
          work.push_back(user->getResult(0));
        else if (cast<ShapedType>(value.getType()).getRank() > 1)
          return false;
      }
    }
    return true;
  };
  // Each parameter, and whether it is a vector.
  auto parameters = std::make_shared<DenseMap<Value, bool>>();
  for (BlockArgument arg : entry.getArguments())
    if (isParameter(arg.getArgNumber()).value_or(false))
      (*parameters)[arg] = isa<ShapedType>(arg.getType()) && isVector(arg);
  // Whether `value` is a parameter, or its view, read as a matrix.
  auto readsMatrix = [parameters, isView](Value value) {
    while (Operation *op = value.getDefiningOp()) {
      if (!isView(op))
        return false;
      value = op->getOperand(0);
    }
    auto it = parameters->find(value);
    return it != parameters->end() && !it->second;
  };
  // Whether every entry of `layout` on an axis with a role is as `check`
  // says for that role; on an axis of one device `B` is every layout (the
  // search enumerates no other there).
  SmallVector<int64_t> shape(problem.getMeshShape());
  SmallVector<AxisRole> axes(roles);
  auto byAxis = [shape, axes](NdSbpAttr layout, auto check) {
    if (!layout || layout.getEntries().size() < axes.size())
      return false;
    for (auto [axis, entry] : llvm::enumerate(layout.getEntries()))
      if (axis < axes.size() && axes[axis] != AxisRole::Free &&
          !(shape[axis] == 1 && entry.isBroadcast()) &&
          !check(axes[axis], entry))
        return false;
    return true;
  };
  SmallVector<Value> args(entry.getArguments());
  return [=](const SearchProblem::Node &node, unsigned s) {
    if (node.kind == Kind::Argument) {
      std::optional<bool> parameter = isParameter(node.index);
      if (!parameter)
        return true;
      // Batch inputs: split along dimension 0 except on tensor axes.
      if (!*parameter)
        return byAxis(node.layouts[s], [](AxisRole role, SbpEntry e) {
          return role == AxisRole::Tensor ? e.isBroadcast()
                                          : e.isSplit() && !e.getDim();
        });
      // Parameters: whole on data axes, split on the others (vectors free
      // there).
      bool vector = parameters->lookup(args[node.index]);
      return byAxis(node.layouts[s], [vector](AxisRole role, SbpEntry e) {
        return role == AxisRole::Data ? e.isBroadcast()
                                      : vector || e.isSplit();
      });
    }
    if (node.kind != Kind::Op)
      return true;
    // Ops read parameter matrices split on tensor axes, whole elsewhere
    // (gathered first on sharded axes).
    for (auto [operand, layout] :
         llvm::zip(node.op->getOperands(), node.signatures[s].operands))
      if (readsMatrix(operand) &&
          !byAxis(layout, [](AxisRole role, SbpEntry e) {
            return role == AxisRole::Tensor ? e.isSplit() : e.isBroadcast();
          }))
        return false;
    return true;
  };
}

Allow sbp::getDataTensorParallel(
    const SearchProblem &problem, unsigned firstAxis,
    std::function<std::optional<bool>(unsigned)> isParameter) {
  SmallVector<AxisRole> roles(problem.getMeshShape().size(), AxisRole::Tensor);
  for (unsigned axis = 0; axis < firstAxis && axis < roles.size(); ++axis)
    roles[axis] = AxisRole::Free;
  if (firstAxis < roles.size())
    roles[firstAxis] = AxisRole::Data;
  return getRecipe(problem, roles, std::move(isParameter));
}

FailureOr<Plan>
sbp::searchWithinMemory(const SearchProblem &problem, double limit,
                        double timeLimit, double &leastMemory,
                        function_ref<void(const Twine &)> progress,
                        const Allow &allow) {
  Plan fastest = solvePlan(problem, 0, allow, timeLimit);
  leastMemory = fastest.cost.peakMemory;
  progress(llvm::formatv("fastest plan: {0:F3} ms per step ({1}), {2}",
                         fastest.cost.stepTime() * 1e3,
                         formatGap(fastest.getGap()),
                         formatBytes(fastest.cost.peakMemory)));
  if (fastest.cost.peakMemory <= limit)
    return fastest;
  progress("the fastest plan needs " + formatBytes(fastest.cost.peakMemory) +
           ", weighing memory in");
  // Raise the price of a byte until a plan fits, then bisect (in log
  // space) for the cheapest price that still fits.
  double time = std::max(fastest.cost.stepTime(), 1e-12);
  double low = 0, high = time / fastest.cost.peakMemory * 1e-3;
  std::optional<Plan> fit;
  unsigned solves = 1;
  for (int round = 0; round < 40 && !fit; ++round) {
    Plan plan = solvePlan(problem, high, allow, timeLimit);
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
    Plan plan = solvePlan(problem, middle, allow, timeLimit);
    ++solves;
    progress(llvm::formatv("byte price {0:e}: {1}", middle,
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
  fit->lowerBound = fastest.lowerBound;
  return std::move(*fit);
}
