//===- CostGraphTest.cpp - Exact search against enumeration ---------------===//

#include "sbp/Search/CostGraph.h"
#include "gtest/gtest.h"
#include <random>

using namespace mlir::sbp;

namespace {

/// A random graph: `nodes` nodes of 1 to `maxStates` states, each pair
/// joined with probability `density`, costs in [0, 1).
CostGraph makeRandomGraph(std::mt19937 &rng, unsigned nodes, unsigned maxStates,
                          double density) {
  std::uniform_int_distribution<unsigned> states(1, maxStates);
  std::uniform_real_distribution<double> cost(0, 1);
  std::bernoulli_distribution edge(density);
  CostGraph graph;
  for (unsigned n = 0; n < nodes; ++n) {
    std::vector<double> costs(states(rng));
    for (double &c : costs)
      c = cost(rng);
    graph.addNode(costs);
  }
  for (unsigned u = 0; u < nodes; ++u)
    for (unsigned v = u + 1; v < nodes; ++v)
      if (edge(rng)) {
        std::vector<double> table(graph.getNumStates(u) *
                                  graph.getNumStates(v));
        for (double &c : table)
          c = cost(rng);
        graph.addEdge(u, v, table);
      }
  return graph;
}

TEST(CostGraph, MatchesEnumerationOnRandomGraphs) {
  std::mt19937 rng(7);
  unsigned withCore = 0, pruned = 0;
  for (int trial = 0; trial < 300; ++trial) {
    unsigned nodes = 1 + trial % 10;
    CostGraph graph =
        makeRandomGraph(rng, nodes, 5, 0.2 + 0.6 * (trial % 3) / 2);
    Solution exact = graph.solveByEnumeration();
    Solution found = graph.solve();
    ASSERT_TRUE(found.optimal);
    EXPECT_NEAR(found.cost, exact.cost, 1e-9 * std::max(1.0, exact.cost))
        << "trial " << trial;
    EXPECT_EQ(found.lowerBound, found.cost);
    EXPECT_DOUBLE_EQ(found.cost, graph.evaluate(found.states));
    withCore += found.stats.coreNodes > 0;
    pruned += found.stats.pruned;
  }
  // Dense graphs leave a core, and states are dropped as dominated.
  EXPECT_GT(withCore, 20u);
  EXPECT_GT(pruned, 0u);
}

TEST(CostGraph, MessagePassingSolvesTightCores) {
  // Grids of two-state nodes whose edges cost only when their ends differ
  // (submodular, so the LP relaxation is tight): no node has degree 2 or
  // less but the corners, and message passing proves the optimum without
  // the integer program.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> cost(0, 1);
  unsigned withCore = 0;
  for (int trial = 0; trial < 10; ++trial) {
    constexpr unsigned kSide = 4;
    CostGraph graph;
    for (unsigned n = 0; n < kSide * kSide; ++n)
      graph.addNode({cost(rng), cost(rng)});
    for (unsigned r = 0; r < kSide; ++r)
      for (unsigned c = 0; c < kSide; ++c) {
        double w = 0.2 + cost(rng);
        if (c + 1 < kSide)
          graph.addEdge(r * kSide + c, r * kSide + c + 1, {0, w, w, 0});
        if (r + 1 < kSide)
          graph.addEdge(r * kSide + c, (r + 1) * kSide + c, {0, w, w, 0});
      }
    Solution found = graph.solve();
    ASSERT_TRUE(found.optimal) << "trial " << trial;
    EXPECT_NEAR(found.cost, graph.solveByEnumeration().cost, 1e-9)
        << "trial " << trial;
    EXPECT_EQ(found.lowerBound, found.cost);
    EXPECT_EQ(found.stats.programNodes, 0u) << "trial " << trial;
    withCore += found.stats.coreNodes > 0;
  }
  // Dead-end elimination fixes some grids; most are left to the bound.
  EXPECT_GT(withCore, 5u);
}

TEST(CostGraph, TimeLimitedSolveProvesABound) {
  // Dense graphs whose integer programs take CBC a while: cut short, a
  // solve still proves a bound no higher than the optimum (found without
  // a limit), with the cost of its own answer no lower (its bound may
  // reach that cost: the relaxation is often tight).
  std::mt19937 rng(11);
  unsigned cut = 0;
  for (int trial = 0; trial < 2; ++trial) {
    CostGraph graph = makeRandomGraph(rng, 13, 6, 0.7);
    Solution full = graph.solve();
    ASSERT_TRUE(full.optimal);
    EXPECT_EQ(full.lowerBound, full.cost);
    Solution quick = graph.solve(/*timeLimitSeconds=*/0.005);
    EXPECT_LE(quick.lowerBound, full.cost + 1e-9) << "trial " << trial;
    EXPECT_GE(quick.cost, full.cost - 1e-9) << "trial " << trial;
    EXPECT_LE(quick.lowerBound, quick.cost) << "trial " << trial;
    if (quick.optimal)
      EXPECT_EQ(quick.lowerBound, quick.cost) << "trial " << trial;
    cut += !quick.optimal;
  }
  // The limit cut at least one solve short, or the test shows nothing.
  EXPECT_GT(cut, 0u);
}

TEST(CostGraph, ChainIsSolvedByElimination) {
  // A chain of 50 identical links: all eliminated, and all but the first
  // few eliminations are table-cache hits.
  CostGraph graph;
  std::vector<double> costs = {3, 1, 2};
  std::vector<double> link = {0, 5, 5, 5, 0, 5, 5, 5, 0};
  for (int n = 0; n < 50; ++n) {
    graph.addNode(costs);
    if (n)
      graph.addEdge(n - 1, n, link);
  }
  Solution solution = graph.solve();
  EXPECT_EQ(solution.stats.coreNodes, 0u);
  EXPECT_EQ(solution.stats.eliminated, 50u);
  EXPECT_DOUBLE_EQ(solution.cost, 50.0);
  for (unsigned state : solution.states)
    EXPECT_EQ(state, 1u);
}

TEST(CostGraph, RepeatedLayersReuseEliminations) {
  // 40 copies of a diamond (a -> b, a -> c, b -> d, c -> d) chained d -> a:
  // the series-parallel structure reduces completely, and copies after the
  // first reuse the first's tables.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> cost(0, 1);
  auto table = [&](unsigned size) {
    std::vector<double> t(size);
    for (double &c : t)
      c = cost(rng);
    return t;
  };
  std::vector<double> nodeCosts = table(4);
  std::vector<std::vector<double>> edges;
  for (int e = 0; e < 5; ++e)
    edges.push_back(table(16));
  CostGraph graph;
  int previous = -1;
  for (int layer = 0; layer < 40; ++layer) {
    unsigned a = graph.addNode(nodeCosts), b = graph.addNode(nodeCosts),
             c = graph.addNode(nodeCosts), d = graph.addNode(nodeCosts);
    graph.addEdge(a, b, edges[0]);
    graph.addEdge(a, c, edges[1]);
    graph.addEdge(b, d, edges[2]);
    graph.addEdge(c, d, edges[3]);
    if (previous >= 0)
      graph.addEdge(previous, a, edges[4]);
    previous = d;
  }
  Solution solution = graph.solve();
  EXPECT_EQ(solution.stats.coreNodes, 0u);
  EXPECT_GT(solution.stats.reused, 100u);
}

TEST(CostGraph, EqualProgramsAreSolvedOnce) {
  // A dense graph leaves a core; the same graph built again is answered
  // from the first solve, and one with other costs or another time limit
  // is not.
  auto build = [](double extra) {
    std::mt19937 rng(11);
    CostGraph graph = makeRandomGraph(rng, 9, 4, 0.9);
    for (unsigned node = 0; node < graph.getNumNodes(); ++node) {
      std::vector<double> costs(graph.getNumStates(node), 0);
      costs[0] = extra;
      graph.addNodeCosts(node, costs);
    }
    return graph;
  };
  Solution first = build(0).solve(30);
  ASSERT_GT(first.stats.coreNodes, 0u);
  EXPECT_FALSE(first.stats.cached);
  Solution again = build(0).solve(30);
  EXPECT_TRUE(again.stats.cached);
  EXPECT_EQ(again.states, first.states);
  EXPECT_EQ(again.optimal, first.optimal);
  EXPECT_FALSE(build(0).solve(31).stats.cached);
  CostGraph other = build(0.5);
  Solution changed = other.solve(30);
  EXPECT_FALSE(changed.stats.cached);
  EXPECT_NEAR(changed.cost, other.solveByEnumeration().cost, 1e-9);
}

} // namespace
