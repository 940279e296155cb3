//===- CostGraph.h - Exact minimization of pairwise costs -------*- C++ -*-===//
//
// The auto-parallel search as a discrete problem: every node (an op, a
// function argument) chooses one of its states (signatures, layouts); a
// state costs something on its own (compute time) and together with the
// state of each neighbour (boxing time on the edge between them). The
// solver finds the assignment of least total cost, exactly:
//
// * nodes of degree 0, 1 and 2 are eliminated (dynamic programming over
//   chains and trees; OneFlow's node and edge elimination), parallel edges
//   merged, and edges whose cost splits into a part per end folded into the
//   nodes;
// * tables are hash-consed, so eliminating a node whose tables were seen
//   before is a lookup: a model of 96 identical layers costs about one
//   layer's elimination plus a chain of small matrix products;
// * states another state of their node never costs less than are dropped
//   (Goldstein's dead-end elimination), which fixes some nodes and lets
//   elimination go on;
// * what remains (every node of degree 3 or more) is bounded by message
//   passing (TRW-S), whose bound is the LP relaxation's when it converges;
//   an assignment at the bound is optimal, and one is looked for among the
//   states of zero reduced cost, where elimination often solves the rest;
// * otherwise the states whose reduced cost exceeds the gap are dropped
//   and the rest is an integer program solved by CBC, which also proves a
//   lower bound when its time limit cuts it short; back-substitution then
//   fixes the eliminated nodes.
//
// The library knows nothing of MLIR; see AutoParallel.cpp for the graphs it
// is given.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_SEARCH_COSTGRAPH_H
#define SBP_SEARCH_COSTGRAPH_H

#include <cstdint>
#include <vector>

namespace mlir {
namespace sbp {

/// What a solve did, for reports and tests.
struct SolveStats {
  unsigned eliminated = 0;
  /// Eliminations answered from the table cache.
  unsigned reused = 0;
  /// States dropped as dominated by another state of their node.
  unsigned pruned = 0;
  /// Nodes and edges elimination left (for message passing).
  unsigned coreNodes = 0;
  unsigned coreEdges = 0;
  /// Nodes left for the integer program: 0 when message passing proved its
  /// assignment optimal.
  unsigned programNodes = 0;
  /// Whether the integer program was answered from the programs this
  /// process solved before.
  bool cached = false;
};

struct Solution {
  /// The state of every node.
  std::vector<unsigned> states;
  double cost = 0;
  /// False when the integer program stopped at its time limit with a
  /// feasible but unproven assignment.
  bool optimal = true;
  /// A proven lower bound on the cost of every assignment: `cost` when
  /// optimal, else the integer program's best bound (its LP relaxation
  /// tightened by the cuts and branches explored) plus what elimination
  /// solved exactly.
  double lowerBound = 0;
  SolveStats stats;
};

class CostGraph {
public:
  /// Adds a node whose states cost `costs` each; returns its index.
  unsigned addNode(std::vector<double> costs);
  /// Adds `costs` to the costs of `node`'s states.
  void addNodeCosts(unsigned node, const std::vector<double> &costs);
  /// Adds the edge `u`-`v` with `costs[i * numStates(v) + j]` the cost of
  /// `u` in state `i` and `v` in state `j`. Parallel edges add up.
  void addEdge(unsigned u, unsigned v, std::vector<double> costs);

  unsigned getNumNodes() const { return nodeCosts.size(); }
  unsigned getNumStates(unsigned node) const { return nodeCosts[node].size(); }

  /// The total cost of `states`.
  double evaluate(const std::vector<unsigned> &states) const;

  /// The least-cost assignment. Message passing gets a quarter of
  /// `timeLimitSeconds`, the integer program for what it leaves at most all
  /// of it; a program this process solved before, with the same limit, is
  /// answered as it was then.
  Solution solve(double timeLimitSeconds = 60) const;

  /// The least-cost assignment by enumerating assignments, pruned only by
  /// a bound that is valid as costs are non-negative: for testing `solve`.
  /// Gives up (`optimal` false) after `maxVisits` partial assignments.
  Solution solveByEnumeration(uint64_t maxVisits = UINT64_MAX) const;

private:
  struct Edge {
    unsigned u, v;
    std::vector<double> costs;
  };
  std::vector<std::vector<double>> nodeCosts;
  std::vector<Edge> edges;
};

} // namespace sbp
} // namespace mlir

#endif // SBP_SEARCH_COSTGRAPH_H
