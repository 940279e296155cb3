//===- MessagePassing.h - Lower bounds for pairwise costs -------*- C++ -*-===//
//
// Sequential tree-reweighted message passing (Kolmogorov's TRW-S) over the
// nodes the elimination leaves: it maximizes the bound of the LP relaxation
// the integer program would solve, in milliseconds where the simplex takes
// seconds, and decodes an assignment on the way. When the assignment's
// cost meets the bound it is optimal; otherwise the bound still prices each
// state, and states that cannot beat the assignment are dropped before the
// integer program.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_SEARCH_MESSAGEPASSING_H
#define SBP_LIB_SEARCH_MESSAGEPASSING_H

#include <vector>

namespace mlir {
namespace sbp {

/// A pairwise problem: node costs and edge tables, every entry finite.
struct PairwiseProblem {
  struct Edge {
    unsigned u, v;
    /// `table[i * numStates(v) + j]`: `u` in state `i`, `v` in state `j`.
    const double *table;
  };
  std::vector<std::vector<double>> costs;
  std::vector<Edge> edges;
};

struct DualSolution {
  /// The best assignment decoded, and its cost.
  std::vector<unsigned> states;
  double cost = 0;
  /// A proven lower bound on the cost of every assignment.
  double lowerBound = 0;
  /// Per node and state, a lower bound on what every assignment choosing
  /// that state costs above `lowerBound`.
  std::vector<std::vector<double>> reducedCosts;
};

/// Runs TRW-S for at most `maxIterations` forward and backward passes or
/// `timeLimit` seconds, stopping early once the bound meets the cost or
/// stops rising.
DualSolution solveDual(const PairwiseProblem &problem, unsigned maxIterations,
                       double timeLimit);

} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_SEARCH_MESSAGEPASSING_H
