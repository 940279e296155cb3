//===- MessagePassing.cpp - Lower bounds for pairwise costs ---------------===//
//
// TRW-S (V. Kolmogorov, "Convergent tree-reweighted message passing for
// energy minimization", PAMI 2006): nodes are visited in order, forward
// then backward; visiting a node sums its costs and incoming messages and
// sends a weighted share of that sum on to its neighbours further in the
// direction of the pass. The bound is read from the reparametrized problem
// as it stands, so it holds whatever the messages are: every edge table
// minus its two messages is non-negative once its row minima are moved
// into its first node, which leaves the least node costs summed as a
// bound on every assignment.
//
//===----------------------------------------------------------------------===//

#include "MessagePassing.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::sbp;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// An edge as seen from one of its nodes.
struct Incidence {
  unsigned edge;
  unsigned other;
  /// Whether the node is the edge's `u` (its states index the rows).
  bool isRow;
};

class Trws {
public:
  explicit Trws(const PairwiseProblem &problem);
  /// One pass forward (or backward); in the forward pass, also decodes an
  /// assignment into `decoded`.
  void pass(bool forward, std::vector<unsigned> *decoded);
  /// The bound of the current messages, and each state's share above it.
  double bound(std::vector<std::vector<double>> *reduced) const;
  double evaluate(const std::vector<unsigned> &states) const;
  /// Moves nodes to their best state given their neighbours' until none
  /// moves (iterated conditional modes).
  void improve(std::vector<unsigned> &states) const;

private:
  size_t width(unsigned node) const { return p.costs[node].size(); }
  /// Node costs plus every message into the node.
  void gather(unsigned node, std::vector<double> &sum) const;
  /// Adds to `local` (indexed by `node`'s states) the costs of the edge
  /// `at` with its other end in state `s`.
  void addEdgeAt(unsigned node, const Incidence &at, unsigned s,
                 std::vector<double> &local) const;
  /// The message that leaves `node` along `at`, and the one that arrives.
  std::vector<double> &into(const Incidence &at) {
    return at.isRow ? toColumn[at.edge] : toRow[at.edge];
  }
  const std::vector<double> &from(const Incidence &at) const {
    return at.isRow ? toRow[at.edge] : toColumn[at.edge];
  }

  const PairwiseProblem &p;
  std::vector<std::vector<Incidence>> incident;
  /// Messages to each edge's `v` (indexed by its states) and to its `u`.
  std::vector<std::vector<double>> toColumn, toRow;
  /// The share of a node's sum that each message carries.
  std::vector<double> weight;
};

Trws::Trws(const PairwiseProblem &problem)
    : p(problem), incident(problem.costs.size()),
      weight(problem.costs.size(), 1) {
  for (unsigned e = 0; e < p.edges.size(); ++e) {
    const PairwiseProblem::Edge &edge = p.edges[e];
    incident[edge.u].push_back({e, edge.v, true});
    incident[edge.v].push_back({e, edge.u, false});
    toColumn.emplace_back(width(edge.v), 0);
    toRow.emplace_back(width(edge.u), 0);
  }
  // Each node lies on as many monotonic chains as it has neighbours on its
  // busier side; each chain gets an equal share of it.
  for (unsigned node = 0; node < p.costs.size(); ++node) {
    unsigned before = 0, after = 0;
    for (const Incidence &at : incident[node])
      (at.other < node ? before : after) += 1;
    weight[node] = 1.0 / std::max(1u, std::max(before, after));
  }
}

void Trws::gather(unsigned node, std::vector<double> &sum) const {
  sum = p.costs[node];
  for (const Incidence &at : incident[node]) {
    const std::vector<double> &message = from(at);
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += message[i];
  }
}

void Trws::addEdgeAt(unsigned node, const Incidence &at, unsigned s,
                     std::vector<double> &local) const {
  const double *table = p.edges[at.edge].table;
  size_t cols = width(at.isRow ? at.other : node);
  for (size_t i = 0; i < local.size(); ++i)
    local[i] += at.isRow ? table[i * cols + s] : table[s * cols + i];
}

void Trws::pass(bool forward, std::vector<unsigned> *decoded) {
  unsigned n = p.costs.size();
  std::vector<double> sum, share;
  for (unsigned k = 0; k < n; ++k) {
    unsigned node = forward ? k : n - 1 - k;
    gather(node, sum);
    if (decoded) {
      // The state best given the states already decoded before it and the
      // messages from after it.
      std::vector<double> local = p.costs[node];
      for (const Incidence &at : incident[node]) {
        if (at.other < node) {
          addEdgeAt(node, at, (*decoded)[at.other], local);
          continue;
        }
        const std::vector<double> &message = from(at);
        for (size_t i = 0; i < local.size(); ++i)
          local[i] += message[i];
      }
      (*decoded)[node] =
          std::min_element(local.begin(), local.end()) - local.begin();
    }
    for (const Incidence &at : incident[node]) {
      if (forward ? at.other < node : at.other > node)
        continue;
      // share = weight * sum - (the message this edge brought in).
      const std::vector<double> &back = from(at);
      share.resize(sum.size());
      for (size_t i = 0; i < sum.size(); ++i)
        share[i] = weight[node] * sum[i] - back[i];
      std::vector<double> &out = into(at);
      std::fill(out.begin(), out.end(), kInfinity);
      const double *table = p.edges[at.edge].table;
      if (at.isRow) {
        size_t cols = out.size();
        for (size_t i = 0; i < share.size(); ++i)
          for (size_t j = 0; j < cols; ++j)
            out[j] = std::min(out[j], share[i] + table[i * cols + j]);
      } else {
        size_t cols = share.size();
        for (size_t i = 0; i < out.size(); ++i)
          for (size_t j = 0; j < cols; ++j)
            out[i] = std::min(out[i], share[j] + table[i * cols + j]);
      }
      double least = *std::min_element(out.begin(), out.end());
      for (double &value : out)
        value -= least;
    }
  }
}

double Trws::bound(std::vector<std::vector<double>> *reduced) const {
  unsigned n = p.costs.size();
  std::vector<std::vector<double>> sums(n);
  for (unsigned node = 0; node < n; ++node)
    gather(node, sums[node]);
  // Each edge minus its messages, row minima moved into its `u`.
  for (unsigned e = 0; e < p.edges.size(); ++e) {
    const PairwiseProblem::Edge &edge = p.edges[e];
    size_t cols = width(edge.v);
    for (size_t i = 0; i < width(edge.u); ++i) {
      double least = kInfinity;
      for (size_t j = 0; j < cols; ++j)
        least = std::min(least, edge.table[i * cols + j] - toColumn[e][j] -
                                    toRow[e][i]);
      sums[edge.u][i] += least;
    }
  }
  double total = 0;
  for (unsigned node = 0; node < n; ++node) {
    double least = *std::min_element(sums[node].begin(), sums[node].end());
    total += least;
    if (reduced) {
      for (double &value : sums[node])
        value -= least;
    }
  }
  if (reduced)
    *reduced = std::move(sums);
  return total;
}

double Trws::evaluate(const std::vector<unsigned> &states) const {
  double total = 0;
  for (unsigned node = 0; node < p.costs.size(); ++node)
    total += p.costs[node][states[node]];
  for (const PairwiseProblem::Edge &edge : p.edges)
    total += edge.table[states[edge.u] * width(edge.v) + states[edge.v]];
  return total;
}

void Trws::improve(std::vector<unsigned> &states) const {
  std::vector<double> local;
  for (unsigned sweep = 0; sweep < 100; ++sweep) {
    bool moved = false;
    for (unsigned node = 0; node < p.costs.size(); ++node) {
      local = p.costs[node];
      for (const Incidence &at : incident[node])
        addEdgeAt(node, at, states[at.other], local);
      unsigned best =
          std::min_element(local.begin(), local.end()) - local.begin();
      if (local[best] < local[states[node]]) {
        states[node] = best;
        moved = true;
      }
    }
    if (!moved)
      return;
  }
}

} // namespace

DualSolution mlir::sbp::solveDual(const PairwiseProblem &problem,
                                  unsigned maxIterations, double timeLimit) {
  auto start = std::chrono::steady_clock::now();
  Trws trws(problem);
  DualSolution result;
  result.cost = kInfinity;
  result.lowerBound = -kInfinity;
  std::vector<unsigned> decoded(problem.costs.size(), 0);
  // The bound rises by less and less; stop once a stretch of passes adds
  // nothing worth another.
  constexpr unsigned kStretch = 16;
  double boundBefore = -kInfinity;
  for (unsigned iteration = 0; iteration < maxIterations; ++iteration) {
    trws.pass(/*forward=*/true, &decoded);
    trws.pass(/*forward=*/false, nullptr);
    trws.improve(decoded);
    double cost = trws.evaluate(decoded);
    if (cost < result.cost) {
      result.cost = cost;
      result.states = decoded;
    }
    result.lowerBound = std::max(result.lowerBound, trws.bound(nullptr));
    double scale = std::max(std::abs(result.cost), 1e-300);
    if (result.cost - result.lowerBound <= 1e-9 * scale)
      break;
    if ((iteration + 1) % kStretch == 0) {
      if (result.lowerBound - boundBefore <=
          1e-6 * std::abs(result.lowerBound))
        break;
      boundBefore = result.lowerBound;
    }
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    if (elapsed.count() > timeLimit)
      break;
  }
  // The reduced costs of the last messages (their bound may lie below the
  // best one seen, but holds as well).
  double last = trws.bound(&result.reducedCosts);
  for (std::vector<double> &costs : result.reducedCosts)
    for (double &value : costs)
      value += last - result.lowerBound;
  return result;
}
