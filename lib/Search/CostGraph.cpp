//===- CostGraph.cpp - Exact minimization of pairwise costs ---------------===//

#include "sbp/Search/CostGraph.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cassert>
#include <cmath>
#include <coin/Cbc_C_Interface.h>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::sbp;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// A cost table: `rows x cols` values, row-major. A node's costs are one
/// column.
struct Table {
  unsigned rows = 0, cols = 0;
  std::vector<double> values;
  double at(unsigned i, unsigned j) const { return values[i * cols + j]; }
  bool operator==(const Table &other) const {
    return rows == other.rows && cols == other.cols && values == other.values;
  }
};

/// Subtracts the least entry: the solver only needs each table's argmins,
/// and tables that differ by a constant (the cost accumulated along a chain
/// of repeated layers) become one.
void normalize(Table &table) {
  double least = *std::min_element(table.values.begin(), table.values.end());
  if (std::isfinite(least) && least != 0)
    for (double &value : table.values)
      value -= least;
}

/// Hash-consed tables: equal contents get one id, so eliminations over
/// repeated layers can be recognized by their inputs' ids.
class TablePool {
public:
  unsigned intern(Table table) {
    normalize(table);
    const char *bytes = reinterpret_cast<const char *>(table.values.data());
    llvm::hash_code hash = llvm::hash_combine(
        table.rows, table.cols,
        llvm::hash_combine_range(bytes,
                                 bytes + table.values.size() * sizeof(double)));
    auto &bucket = byHash[hash];
    for (unsigned id : bucket)
      if (tables[id] == table)
        return id;
    bucket.push_back(tables.size());
    tables.push_back(std::move(table));
    transposes.push_back(~0u);
    return tables.size() - 1;
  }
  const Table &get(unsigned id) const { return tables[id]; }
  unsigned transpose(unsigned id) {
    if (transposes[id] != ~0u)
      return transposes[id];
    const Table &table = tables[id];
    Table result{table.cols, table.rows, {}};
    result.values.resize(table.values.size());
    for (unsigned i = 0; i < table.rows; ++i)
      for (unsigned j = 0; j < table.cols; ++j)
        result.values[j * table.rows + i] = table.at(i, j);
    unsigned resultId = intern(std::move(result));
    transposes[id] = resultId;
    transposes[resultId] = id;
    return resultId;
  }

private:
  std::vector<Table> tables;
  std::vector<unsigned> transposes;
  std::map<size_t, llvm::SmallVector<unsigned, 1>> byHash;
};

/// How an eliminated node's state follows from its neighbours' states.
struct Elimination {
  unsigned node;
  /// Neighbours at elimination time (~0u when absent).
  unsigned a = ~0u, b = ~0u;
  /// The best state per neighbour state (row-major over a's and b's).
  std::shared_ptr<const std::vector<unsigned>> choice;
};

class Solver {
public:
  unsigned numStates(unsigned node) const { return pool.get(costs[node]).rows; }
  Solver(const std::vector<std::vector<double>> &nodeCosts);
  void addEdge(unsigned u, unsigned v, const std::vector<double> &table) {
    addEdge(u, v, pool.intern(Table{numStates(u), numStates(v), table}));
  }
  void eliminate(SolveStats &stats);
  /// Solves the nodes left after elimination; returns whether the answer
  /// is proven optimal, and in `gap` how much more it may cost than the
  /// optimum (0 when optimal).
  bool solveCore(std::vector<unsigned> &states, double timeLimit,
                 SolveStats &stats, double &gap);
  void backSubstitute(std::vector<unsigned> &states) const;

private:
  void addEdge(unsigned u, unsigned v, unsigned table);
  void addToCosts(unsigned node, const std::vector<double> &extra);
  void removeEdge(unsigned u, unsigned v);
  /// Folds the edge into its nodes when its table is `f(i) + g(j)`.
  void foldIfSeparable(unsigned u, unsigned v);
  void eliminateLeaf(unsigned node, SolveStats &stats);
  void eliminateInner(unsigned node, SolveStats &stats);

  TablePool pool;
  std::vector<unsigned> costs;
  /// Per node: neighbour -> table (rows: this node's states).
  std::vector<llvm::SmallDenseMap<unsigned, unsigned, 4>> adjacent;
  std::vector<bool> alive;
  std::vector<Elimination> eliminations;
  std::map<std::pair<unsigned, unsigned>,
           std::pair<std::vector<double>,
                     std::shared_ptr<const std::vector<unsigned>>>>
      leafCache;
  std::map<std::tuple<unsigned, unsigned, unsigned>,
           std::pair<unsigned, std::shared_ptr<const std::vector<unsigned>>>>
      innerCache;
};

Solver::Solver(const std::vector<std::vector<double>> &nodeCosts)
    : adjacent(nodeCosts.size()), alive(nodeCosts.size(), true) {
  for (const std::vector<double> &c : nodeCosts)
    costs.push_back(pool.intern(Table{unsigned(c.size()), 1, c}));
}

void Solver::addToCosts(unsigned node, const std::vector<double> &extra) {
  Table table = pool.get(costs[node]);
  for (unsigned i = 0; i < table.rows; ++i)
    table.values[i] += extra[i];
  costs[node] = pool.intern(std::move(table));
}

void Solver::addEdge(unsigned u, unsigned v, unsigned table) {
  if (auto it = adjacent[u].find(v); it != adjacent[u].end()) {
    Table sum = pool.get(it->second);
    const Table &more = pool.get(table);
    for (size_t k = 0; k < sum.values.size(); ++k)
      sum.values[k] += more.values[k];
    table = pool.intern(std::move(sum));
  }
  adjacent[u][v] = table;
  adjacent[v][u] = pool.transpose(table);
  foldIfSeparable(u, v);
}

void Solver::removeEdge(unsigned u, unsigned v) {
  adjacent[u].erase(v);
  adjacent[v].erase(u);
}

void Solver::foldIfSeparable(unsigned u, unsigned v) {
  const Table &table = pool.get(adjacent[u][v]);
  double corner = table.at(0, 0);
  for (unsigned i = 0; i < table.rows; ++i)
    for (unsigned j = 0; j < table.cols; ++j) {
      double expected = table.at(i, 0) + table.at(0, j) - corner;
      if (std::abs(table.at(i, j) - expected) >
          1e-12 * std::max(1.0, std::abs(expected)))
        return;
    }
  std::vector<double> rowPart(table.rows), colPart(table.cols);
  for (unsigned i = 0; i < table.rows; ++i)
    rowPart[i] = table.at(i, 0);
  for (unsigned j = 0; j < table.cols; ++j)
    colPart[j] = table.at(0, j) - corner;
  removeEdge(u, v);
  addToCosts(u, rowPart);
  addToCosts(v, colPart);
}

void Solver::eliminateLeaf(unsigned node, SolveStats &stats) {
  auto [neighbor, edge] = *adjacent[node].begin();
  // The edge table's rows are `node`'s states; read it from the
  // neighbour's side.
  unsigned table = pool.transpose(edge);
  auto key = std::make_pair(table, costs[node]);
  auto cached = leafCache.find(key);
  if (cached == leafCache.end()) {
    const Table &m = pool.get(table);
    const Table &c = pool.get(costs[node]);
    std::vector<double> best(m.rows, kInfinity);
    auto choice = std::make_shared<std::vector<unsigned>>(m.rows, 0);
    for (unsigned i = 0; i < m.rows; ++i)
      for (unsigned j = 0; j < m.cols; ++j) {
        double total = m.at(i, j) + c.values[j];
        if (total < best[i]) {
          best[i] = total;
          (*choice)[i] = j;
        }
      }
    cached =
        leafCache.try_emplace(key, std::move(best), std::move(choice)).first;
  } else {
    ++stats.reused;
  }
  eliminations.push_back({node, neighbor, ~0u, cached->second.second});
  removeEdge(node, neighbor);
  addToCosts(neighbor, cached->second.first);
}

void Solver::eliminateInner(unsigned node, SolveStats &stats) {
  auto it = adjacent[node].begin();
  auto [a, toA] = *it++;
  auto [b, toB] = *it;
  unsigned fromA = pool.transpose(toA);
  auto key = std::make_tuple(fromA, costs[node], toB);
  auto cached = innerCache.find(key);
  if (cached == innerCache.end()) {
    const Table &ma = pool.get(fromA);
    const Table &c = pool.get(costs[node]);
    const Table &mb = pool.get(toB);
    Table result{ma.rows, mb.cols, {}};
    result.values.assign(size_t(ma.rows) * mb.cols, kInfinity);
    auto choice =
        std::make_shared<std::vector<unsigned>>(result.values.size(), 0);
    for (unsigned i = 0; i < ma.rows; ++i)
      for (unsigned k = 0; k < ma.cols; ++k) {
        double head = ma.at(i, k) + c.values[k];
        double *row = &result.values[size_t(i) * mb.cols];
        const double *tail = &mb.values[size_t(k) * mb.cols];
        unsigned *rowChoice = &(*choice)[size_t(i) * mb.cols];
        for (unsigned j = 0; j < mb.cols; ++j)
          if (head + tail[j] < row[j]) {
            row[j] = head + tail[j];
            rowChoice[j] = k;
          }
      }
    cached =
        innerCache
            .try_emplace(key, pool.intern(std::move(result)), std::move(choice))
            .first;
  } else {
    ++stats.reused;
  }
  eliminations.push_back({node, a, b, cached->second.second});
  removeEdge(node, a);
  removeEdge(node, b);
  addEdge(a, b, cached->second.first);
}

void Solver::eliminate(SolveStats &stats) {
  // In rounds, each in program order: the first round removes what every
  // copy of a repeated layer has inside (weights, chains, diamonds) with
  // the same tables, before the rounds that follow join the copies.
  std::vector<unsigned> round;
  for (unsigned node = 0; node < costs.size(); ++node)
    round.push_back(node);
  while (!round.empty()) {
    std::vector<unsigned> next;
    for (unsigned node : round) {
      if (!alive[node] || adjacent[node].size() > 2)
        continue;
      llvm::SmallVector<unsigned, 2> neighbors;
      for (auto &entry : adjacent[node])
        neighbors.push_back(entry.first);
      if (neighbors.empty()) {
        const Table &c = pool.get(costs[node]);
        auto best = std::min_element(c.values.begin(), c.values.end());
        auto choice = std::make_shared<std::vector<unsigned>>(
            1, unsigned(best - c.values.begin()));
        eliminations.push_back({node, ~0u, ~0u, choice});
      } else if (neighbors.size() == 1) {
        eliminateLeaf(node, stats);
      } else {
        eliminateInner(node, stats);
      }
      alive[node] = false;
      ++stats.eliminated;
      for (unsigned neighbor : neighbors)
        if (alive[neighbor] && adjacent[neighbor].size() <= 2)
          next.push_back(neighbor);
    }
    llvm::sort(next);
    next.erase(std::unique(next.begin(), next.end()), next.end());
    round = std::move(next);
  }
}

/// An integer program as loaded into the solver, and its time limit.
struct Program {
  std::vector<double> objective, rowBound, value;
  std::vector<CoinBigIndex> start;
  std::vector<int> index;
  int numBinary;
  double timeLimit;
  bool operator<(const Program &other) const {
    return std::tie(numBinary, timeLimit, objective, rowBound, start, index,
                    value) < std::tie(other.numBinary, other.timeLimit,
                                      other.objective, other.rowBound,
                                      other.start, other.index, other.value);
  }
};

/// The chosen state of each core node, whether it was proven optimal, and
/// its proven gap.
struct Answer {
  std::vector<unsigned> states;
  bool optimal;
  double gap;
};

/// The programs solved in this process, each answered once: the equal
/// stages of a deep pipeline (64 in the Megatron table's row 10) pose the
/// same program when each is placed, and its solve takes seconds. Bounded,
/// as the programs are large.
class ProgramCache {
public:
  std::optional<Answer> lookup(const Program &program) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = answers.find(program);
    if (it == answers.end())
      return std::nullopt;
    return it->second;
  }
  void insert(Program program, Answer answer) {
    std::lock_guard<std::mutex> lock(mutex);
    if (answers.size() >= kCapacity)
      answers.clear();
    answers.emplace(std::move(program), std::move(answer));
  }

private:
  static constexpr size_t kCapacity = 16;
  std::mutex mutex;
  std::map<Program, Answer> answers;
};

bool Solver::solveCore(std::vector<unsigned> &states, double timeLimit,
                       SolveStats &stats, double &gap) {
  gap = 0;
  std::vector<unsigned> core;
  for (unsigned node = 0; node < costs.size(); ++node)
    if (alive[node])
      core.push_back(node);
  if (core.empty())
    return true;
  stats.coreNodes = core.size();
  // Scale costs to a range the solver's tolerances suit.
  double largest = 0;
  auto note = [&](const Table &t) {
    for (double v : t.values)
      largest = std::max(largest, std::abs(v));
  };
  for (unsigned node : core) {
    note(pool.get(costs[node]));
    for (auto &[neighbor, table] : adjacent[node])
      note(pool.get(table));
  }
  double scale = largest > 0 ? 1e6 / largest : 1;

  // The problem is built whole and loaded at once: adding rows one by one
  // copies the matrix each time, which dominated large searches.
  std::vector<double> objective;
  // Per column, its (row, coefficient) entries.
  std::vector<std::vector<std::pair<int, double>>> entries;
  std::vector<double> rowBound;
  std::vector<int> firstColumn(costs.size(), -1);
  auto addColumn = [&](double cost) {
    objective.push_back(cost * scale);
    entries.emplace_back();
    return int(objective.size()) - 1;
  };
  auto addRow = [&](const std::vector<int> &cols,
                    const std::vector<double> &coefs, double rhs) {
    int row = rowBound.size();
    rowBound.push_back(rhs);
    for (auto [col, coef] : llvm::zip(cols, coefs))
      entries[col].push_back({row, coef});
  };
  // x[node][state]: binary, one per node.
  for (unsigned node : core) {
    firstColumn[node] = objective.size();
    for (double value : pool.get(costs[node]).values)
      addColumn(value);
  }
  int numBinary = objective.size();
  for (unsigned node : core) {
    std::vector<int> cols;
    for (unsigned s = 0; s < numStates(node); ++s)
      cols.push_back(firstColumn[node] + s);
    std::vector<double> ones(cols.size(), 1);
    addRow(cols, ones, 1);
  }
  // y[edge][i][j] in [0, 1] with the marginals of x: integral x force y to
  // their product.
  for (unsigned u : core)
    for (auto &[v, tableId] : adjacent[u]) {
      if (v < u)
        continue;
      ++stats.coreEdges;
      const Table &table = pool.get(tableId);
      int first = objective.size();
      for (double value : table.values)
        addColumn(value);
      // sum_j y[i][j] = x[u][i] and sum_i y[i][j] = x[v][j].
      auto marginal = [&](int start, unsigned count, unsigned stride,
                          int xColumn) {
        std::vector<int> cols;
        std::vector<double> coefs(count, 1);
        for (unsigned k = 0; k < count; ++k)
          cols.push_back(start + k * stride);
        cols.push_back(xColumn);
        coefs.push_back(-1);
        addRow(cols, coefs, 0);
      };
      for (unsigned i = 0; i < table.rows; ++i)
        marginal(first + i * table.cols, table.cols, 1, firstColumn[u] + i);
      for (unsigned j = 0; j < table.cols; ++j)
        marginal(first + j, table.rows, table.cols, firstColumn[v] + j);
    }
  Program program;
  program.start = {0};
  for (const auto &column : entries) {
    for (auto [row, coef] : column) {
      program.index.push_back(row);
      program.value.push_back(coef);
    }
    program.start.push_back(program.index.size());
  }
  program.objective = std::move(objective);
  program.rowBound = std::move(rowBound);
  program.numBinary = numBinary;
  program.timeLimit = timeLimit;
  static ProgramCache cache;
  if (std::optional<Answer> answer = cache.lookup(program)) {
    for (auto [node, state] : llvm::zip(core, answer->states))
      states[node] = state;
    stats.cached = true;
    gap = answer->gap;
    return answer->optimal;
  }
  const std::vector<double> &columns = program.objective,
                            &rows = program.rowBound;
  std::vector<double> lower(columns.size(), 0), upper(columns.size(), 1);
  Cbc_Model *model = Cbc_newModel();
  Cbc_setLogLevel(model, 0);
  Cbc_loadProblem(model, columns.size(), rows.size(), program.start.data(),
                  program.index.data(), program.value.data(), lower.data(),
                  upper.data(), columns.data(), rows.data(), rows.data());
  for (int col = 0; col < numBinary; ++col)
    Cbc_setInteger(model, col);
  Cbc_setMaximumSeconds(model, timeLimit);
  // Presolve finds little to remove in these rows (each edge's marginals)
  // and cost 6-9x the rest of the solve on the Megatron-LM steps' searches
  // (docs/auto-parallel.md), which reach the same optimum without it.
  Cbc_setParameter(model, "presolve", "off");
  Cbc_solve(model);
  bool optimal = Cbc_isProvenOptimal(model);
  const double *solution = Cbc_getColSolution(model);
  for (unsigned node : core) {
    unsigned best = 0;
    for (unsigned s = 1; s < numStates(node); ++s)
      if (solution &&
          solution[firstColumn[node] + s] > solution[firstColumn[node] + best])
        best = s;
    states[node] = best;
  }
  // Stopped short, CBC may not even have an integer solution (the states
  // are then its relaxation's, rounded): the gap is what these states cost
  // above the best bound it proved, which is never below zero as the
  // tables are normalized.
  if (!optimal) {
    double chosen = 0;
    for (unsigned u : core) {
      chosen += pool.get(costs[u]).values[states[u]];
      for (auto &[v, tableId] : adjacent[u])
        if (v > u)
          chosen += pool.get(tableId).at(states[u], states[v]);
    }
    double bound = std::max(0.0, Cbc_getBestPossibleObjValue(model) / scale);
    gap = std::max(0.0, chosen - bound);
  }
  Cbc_deleteModel(model);
  Answer answer{{}, optimal, gap};
  for (unsigned node : core)
    answer.states.push_back(states[node]);
  cache.insert(std::move(program), std::move(answer));
  return optimal;
}

void Solver::backSubstitute(std::vector<unsigned> &states) const {
  for (const Elimination &step : llvm::reverse(eliminations)) {
    size_t index = 0;
    if (step.a != ~0u)
      index = states[step.a];
    if (step.b != ~0u)
      index = index * numStates(step.b) + states[step.b];
    states[step.node] = (*step.choice)[index];
  }
}

} // namespace

unsigned CostGraph::addNode(std::vector<double> costs) {
  assert(!costs.empty() && "a node needs a state");
  nodeCosts.push_back(std::move(costs));
  return nodeCosts.size() - 1;
}

void CostGraph::addNodeCosts(unsigned node, const std::vector<double> &costs) {
  assert(costs.size() == nodeCosts[node].size() && "one cost per state");
  for (size_t s = 0; s < costs.size(); ++s)
    nodeCosts[node][s] += costs[s];
}

void CostGraph::addEdge(unsigned u, unsigned v, std::vector<double> costs) {
  assert(u != v && costs.size() == nodeCosts[u].size() * nodeCosts[v].size() &&
         "an edge table has one entry per pair of states");
  edges.push_back({u, v, std::move(costs)});
}

double CostGraph::evaluate(const std::vector<unsigned> &states) const {
  double total = 0;
  for (unsigned node = 0; node < nodeCosts.size(); ++node)
    total += nodeCosts[node][states[node]];
  for (const Edge &edge : edges)
    total +=
        edge.costs[states[edge.u] * nodeCosts[edge.v].size() + states[edge.v]];
  return total;
}

Solution CostGraph::solve(double timeLimitSeconds) const {
  Solver solver(nodeCosts);
  for (const Edge &edge : edges)
    solver.addEdge(edge.u, edge.v, edge.costs);
  Solution solution;
  solution.states.assign(nodeCosts.size(), 0);
  solver.eliminate(solution.stats);
  double gap = 0;
  solution.optimal =
      solver.solveCore(solution.states, timeLimitSeconds, solution.stats, gap);
  solver.backSubstitute(solution.states);
  solution.cost = evaluate(solution.states);
  // Elimination is exact: the integer program's gap is the whole gap.
  solution.lowerBound = solution.optimal ? solution.cost : solution.cost - gap;
  return solution;
}

Solution CostGraph::solveByEnumeration(uint64_t maxVisits) const {
  unsigned n = nodeCosts.size();
  // The edges of each node to later nodes.
  std::vector<std::vector<const Edge *>> forward(n);
  for (const Edge &edge : edges)
    forward[std::min(edge.u, edge.v)].push_back(&edge);
  // reach[k][s]: what node k costs in state s given the states chosen so
  // far (its own cost plus its edges to chosen nodes). Every unchosen node
  // costs at least its least entry, which bounds a prefix's completions.
  std::vector<std::vector<double>> reach = nodeCosts;
  Solution best;
  best.cost = kInfinity;
  std::vector<unsigned> states(n, 0);
  auto update = [&](unsigned node, unsigned state, double sign) {
    for (const Edge *edge : forward[node]) {
      bool first = edge->u == node;
      unsigned other = first ? edge->v : edge->u;
      unsigned width = nodeCosts[edge->v].size();
      for (unsigned s = 0; s < reach[other].size(); ++s)
        reach[other][s] += sign * (first ? edge->costs[state * width + s]
                                         : edge->costs[s * width + state]);
    }
  };
  uint64_t visits = 0;
  std::function<void(unsigned, double)> visit = [&](unsigned node,
                                                    double partial) {
    if (++visits > maxVisits) {
      best.optimal = false;
      return;
    }
    double bound = partial;
    for (unsigned k = node; k < n; ++k)
      bound += *std::min_element(reach[k].begin(), reach[k].end());
    if (bound >= best.cost * (1 - 1e-12))
      return;
    if (node == n) {
      best.cost = partial;
      best.states = states;
      return;
    }
    // Cheapest states first, so that good plans bound the rest early.
    std::vector<unsigned> order(reach[node].size());
    for (unsigned s = 0; s < order.size(); ++s)
      order[s] = s;
    std::vector<double> own = reach[node];
    llvm::sort(order, [&](unsigned a, unsigned b) { return own[a] < own[b]; });
    for (unsigned s : order) {
      states[node] = s;
      update(node, s, +1);
      visit(node + 1, partial + own[s]);
      update(node, s, -1);
    }
  };
  visit(0, 0);
  if (best.states.empty())
    return best;
  // Recompute exactly: the incremental sums may have rounded.
  best.cost = evaluate(best.states);
  // Cut short, it proves nothing beyond costs being times, never negative.
  best.lowerBound = best.optimal ? best.cost : 0;
  return best;
}
