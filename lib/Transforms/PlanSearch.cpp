//===- PlanSearch.cpp - The fastest plan within a memory limit ------------===//
//
// What sbp-auto-parallel solves for each function, and its stage search for
// each candidate stage: the fastest plan, and when that does not fit, the
// plan of the cheapest byte price that does (a Lagrangian weight on
// memory, found by bisection in log space).
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/SearchProblem.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace mlir;
using namespace mlir::sbp;

std::string sbp::formatBytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024;
  if (bytes >= 1024 * kMiB)
    return llvm::formatv("{0:F2} GiB", bytes / (1024 * kMiB)).str();
  return llvm::formatv("{0:F2} MiB", bytes / kMiB).str();
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
  return plan;
}

FailureOr<Plan>
sbp::searchWithinMemory(const SearchProblem &problem, double limit,
                        double timeLimit, double &leastMemory,
                        function_ref<void(const Twine &)> progress,
                        const Allow &allow) {
  Plan fastest = solvePlan(problem, 0, allow, timeLimit);
  leastMemory = fastest.cost.peakMemory;
  progress(llvm::formatv("fastest plan: {0:F3} ms per step, {1}",
                         fastest.cost.stepTime() * 1e3,
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
  return std::move(*fit);
}
