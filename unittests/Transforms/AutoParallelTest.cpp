//===- AutoParallelTest.cpp - The search against brute force on IR --------===//
//
// Random programs of up to 10 ops (matmuls accumulating into earlier
// values, additions, tanh, transposes) over arguments the search places
// too, on meshes [2], [4] and [2, 2]: the search's plan must cost exactly
// what the best of all plans costs. Enumeration is pruned by a bound and
// capped; the rare program it cannot finish is replaced by another.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "sbp/InitSbp.h"
#include "sbp/Transforms/SearchProblem.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"
#include <random>

using namespace mlir;
using namespace mlir::sbp;

namespace {

std::string makeRandomProgram(std::mt19937 &rng, StringRef mesh,
                              unsigned numOps) {
  const char *type = "tensor<8x8xf32>";
  std::string body;
  unsigned values = 3;
  auto pick = [&]() {
    return std::uniform_int_distribution<unsigned>(0, values - 1)(rng);
  };
  for (unsigned i = 0; i < numOps; ++i) {
    unsigned a = pick(), b = pick(), c = pick();
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      body += llvm::formatv("  %v{0} = linalg.matmul ins(%v{1}, %v{2} : {4}, "
                            "{4}) outs(%v{3} : {4}) -> {4}\n",
                            values, a, b, c, type);
      break;
    case 1:
      body += llvm::formatv("  %v{0} = arith.addf %v{1}, %v{2} : {3}\n", values,
                            a, b, type);
      break;
    case 2:
      body +=
          llvm::formatv("  %v{0} = math.tanh %v{1} : {2}\n", values, a, type);
      break;
    default:
      body += llvm::formatv("  %e{0} = tensor.empty() : {1}\n  %v{0} = "
                            "linalg.transpose ins(%v{2} : {1}) outs(%e{0} : "
                            "{1}) permutation = [1, 0]\n",
                            values, type, a);
    }
    ++values;
  }
  return llvm::formatv("sbp.mesh @m shape = [{0}]\nfunc.func @f(%v0: {1}, "
                       "%v1: {1}, %v2: {1}) -> {1} {{\n{2}  return %v{3} : "
                       "{1}\n}\n",
                       mesh, type, body, values - 1)
      .str();
}

TEST(AutoParallel, SearchMatchesBruteForceOnRandomPrograms) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerSbpDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto cluster = getClusterPreset("dgx-a100-8");
  ASSERT_TRUE(bool(cluster));
  // A host cluster takes any mesh; the A100's figures make compute and
  // communication comparable.
  cluster->hostCores = 1024;
  std::mt19937 rng(11);
  const char *meshes[] = {"2", "4", "2, 2"};
  unsigned withCore = 0, compared = 0, skipped = 0;
  for (int trial = 0; compared < 200; ++trial) {
    StringRef mesh = meshes[trial % 3];
    unsigned numOps = 1 + (trial / 3) % 10;
    std::string text = makeRandomProgram(rng, mesh, numOps);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << text;
    auto meshOp = *module->getOps<MeshOp>().begin();
    auto func = *module->getOps<FunctionOpInterface>().begin();
    auto model = CostModel::get(*cluster, meshOp.getShape());
    ASSERT_TRUE(bool(model));
    FailureOr<SearchProblem> problem =
        SearchProblem::build(func, meshOp, *model);
    ASSERT_TRUE(succeeded(problem)) << text;
    std::vector<std::vector<unsigned>> states;
    CostGraph graph = problem->buildGraph(0, nullptr, states);
    Solution best = graph.solveByEnumeration(/*maxVisits=*/2000000);
    if (!best.optimal) {
      ++skipped;
      continue;
    }
    Solution found = graph.solve();
    ASSERT_TRUE(found.optimal);
    EXPECT_NEAR(found.cost, best.cost, 1e-9 * best.cost)
        << "trial " << trial << "\n"
        << text;
    // The graph's cost is the plan's predicted step time.
    std::vector<unsigned> plan;
    for (auto [node, state] : llvm::enumerate(found.states))
      plan.push_back(states[node][state]);
    EXPECT_NEAR(problem->evaluate(plan).stepTime(), found.cost,
                1e-9 * found.cost);
    withCore += found.stats.coreNodes > 0;
    ++compared;
  }
  EXPECT_GT(withCore, 0u);
  // Few programs are too large to enumerate.
  EXPECT_LT(skipped, 20u);
}

// A forward loop saving each layer's input in a stack and a backward loop
// reading it, on one device: the stack (1 KiB) lives from its
// `tensor.empty` to the end of the backward loop, inserts into it are in
// place, and a loop body's values live only from their definition to their
// last use in the body. The peak is in the backward body: the stack, then
// the saved slice and its tanh (256 B each), then that tanh and the
// product; plus the argument (256 B).
TEST(AutoParallel, PeakMemoryFollowsLoops) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerSbpDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const char *text = R"mlir(
    sbp.mesh @m shape = [1]
    func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %stack = tensor.empty() : tensor<4x64xf32>
      %fwd:2 = scf.for %i = %c0 to %c4 step %c1
          iter_args(%h = %x, %s = %stack) -> (tensor<64xf32>, tensor<4x64xf32>) {
        %s2 = tensor.insert_slice %h into %s[%i, 0] [1, 64] [1, 1]
            : tensor<64xf32> into tensor<4x64xf32>
        %h2 = math.tanh %h : tensor<64xf32>
        scf.yield %h2, %s2 : tensor<64xf32>, tensor<4x64xf32>
      }
      %bwd = scf.for %i = %c0 to %c4 step %c1
          iter_args(%g = %fwd#0) -> (tensor<64xf32>) {
        %saved = tensor.extract_slice %fwd#1[%i, 0] [1, 64] [1, 1]
            : tensor<4x64xf32> to tensor<64xf32>
        %t = math.tanh %saved : tensor<64xf32>
        %g2 = arith.mulf %g, %t : tensor<64xf32>
        scf.yield %g2 : tensor<64xf32>
      }
      return %bwd : tensor<64xf32>
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  auto meshOp = *module->getOps<MeshOp>().begin();
  auto func = *module->getOps<FunctionOpInterface>().begin();
  auto cluster = getClusterPreset("dgx-a100-8");
  ASSERT_TRUE(bool(cluster));
  cluster->hostCores = 1024;
  auto model = CostModel::get(*cluster, meshOp.getShape());
  ASSERT_TRUE(bool(model));
  FailureOr<SearchProblem> problem = SearchProblem::build(func, meshOp, *model);
  ASSERT_TRUE(succeeded(problem));
  // One device: each node's first state replicates.
  std::vector<unsigned> plan(problem->getNodes().size(), 0);
  PlanCost cost = problem->evaluate(plan);
  EXPECT_EQ(cost.parameterBytes, 256);
  EXPECT_EQ(cost.peakMemory, 256 + 1024 + 2 * 256);
}

} // namespace
