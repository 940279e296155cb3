//===- CostGraph.cpp - Exact minimization of pairwise costs ---------------===//

#include "sbp/Search/CostGraph.h"
#include "MessagePassing.h"
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

/// Message passing's answer on the core: which nodes and states it saw.
struct CoreDual {
  std::vector<unsigned> nodes;
  /// Per core node, its states that were not pruned.
  std::vector<std::vector<unsigned>> live;
  unsigned numEdges = 0;
  DualSolution solution;
  double getGap() const {
    return std::max(0.0, solution.cost - solution.lowerBound);
  }
};

class Solver {
public:
  unsigned numStates(unsigned node) const { return pool.get(costs[node]).rows; }
  Solver(const std::vector<std::vector<double>> &nodeCosts);
  void addEdge(unsigned u, unsigned v, const std::vector<double> &table) {
    addEdge(u, v, pool.intern(Table{numStates(u), numStates(v), table}));
  }
  void eliminate(SolveStats &stats);
  /// Drops the states of core nodes that another state of theirs never
  /// costs less than, and folds nodes left with one state into their
  /// neighbours; returns whether any node was fixed (so elimination may go
  /// on).
  bool pruneDominated(SolveStats &stats);
  /// Solves the nodes left after elimination; returns whether the answer
  /// is proven optimal, and in `gap` how much more it may cost than the
  /// optimum (0 when optimal).
  bool solveCore(std::vector<unsigned> &states, double timeLimit,
                 SolveStats &stats, double &gap);
  /// Bounds the core by message passing, and decodes an assignment of it;
  /// nullopt when no core is left.
  std::optional<CoreDual> solveDual(double timeLimit) const;
  /// Sets the states of the core nodes to those `dual` decoded.
  void assign(const CoreDual &dual, std::vector<unsigned> &states) const;
  /// Drops the states whose reduced cost in `dual` exceeds `slack`;
  /// returns whether it dropped any.
  bool dropStates(const CoreDual &dual, double slack);
  /// Fixes the eliminated nodes given the states of those left.
  void backSubstitute(std::vector<unsigned> &states) const;

private:
  void addEdge(unsigned u, unsigned v, unsigned table);
  void addToCosts(unsigned node, const std::vector<double> &extra);
  void removeEdge(unsigned u, unsigned v);
  /// Folds the edge into its nodes when its table is `f(i) + g(j)`.
  void foldIfSeparable(unsigned u, unsigned v);
  void eliminateLeaf(unsigned node, SolveStats &stats);
  /// Whether `node`'s state `s` may be dropped for `t` (Goldstein's
  /// criterion).
  bool dominates(unsigned node, unsigned t, unsigned s) const;
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

bool Solver::dominates(unsigned node, unsigned t, unsigned s) const {
  const Table &c = pool.get(costs[node]);
  double margin = c.values[s] - c.values[t];
  double magnitude = std::abs(c.values[s]) + std::abs(c.values[t]);
  for (auto &[neighbor, tableId] : adjacent[node]) {
    const Table &table = pool.get(tableId);
    const Table &other = pool.get(costs[neighbor]);
    double least = kInfinity;
    for (unsigned j = 0; j < table.cols; ++j)
      if (std::isfinite(other.values[j]))
        least = std::min(least, table.at(s, j) - table.at(t, j));
    margin += least;
    magnitude += std::abs(least);
  }
  // Ties go to the state kept (any optimum with `s` has an equal one with
  // `t`); the tolerance only absorbs rounding in the sums.
  return margin >= -1e-12 * magnitude;
}

bool Solver::pruneDominated(SolveStats &stats) {
  bool fixed = false;
  for (unsigned node = 0; node < costs.size(); ++node) {
    if (!alive[node])
      continue;
    std::vector<double> extra(numStates(node), 0);
    llvm::SmallVector<unsigned> live;
    for (unsigned s = 0; s < numStates(node); ++s)
      if (std::isfinite(pool.get(costs[node]).values[s]))
        live.push_back(s);
    // Cheapest first: they are the likeliest to dominate the rest.
    llvm::stable_sort(live, [&](unsigned a, unsigned b) {
      return pool.get(costs[node]).values[a] < pool.get(costs[node]).values[b];
    });
    llvm::SmallVector<unsigned> kept;
    for (unsigned s : live) {
      bool dropped = llvm::any_of(
          kept, [&](unsigned t) { return dominates(node, t, s); });
      if (dropped) {
        extra[s] = kInfinity;
        ++stats.pruned;
      } else {
        kept.push_back(s);
      }
    }
    // A state kept early may be dominated by one kept later.
    for (unsigned k = 0; k < kept.size();) {
      unsigned s = kept[k];
      bool dropped = false;
      for (unsigned t : kept)
        if (t != s && dominates(node, t, s)) {
          dropped = true;
          break;
        }
      if (dropped) {
        extra[s] = kInfinity;
        ++stats.pruned;
        kept.erase(kept.begin() + k);
      } else {
        ++k;
      }
    }
    addToCosts(node, extra);
    if (kept.size() != 1)
      continue;
    // One state left: its edges are costs of the neighbours.
    unsigned only = kept.front();
    auto neighbors = adjacent[node];
    for (auto &[neighbor, tableId] : neighbors) {
      const Table &table = pool.get(tableId);
      std::vector<double> column(table.cols);
      for (unsigned j = 0; j < table.cols; ++j)
        column[j] = table.at(only, j);
      removeEdge(node, neighbor);
      addToCosts(neighbor, column);
    }
    fixed = true;
  }
  return fixed;
}

std::optional<CoreDual> Solver::solveDual(double timeLimit) const {
  CoreDual dual;
  std::vector<unsigned> index(costs.size(), ~0u);
  PairwiseProblem problem;
  for (unsigned node = 0; node < costs.size(); ++node) {
    if (!alive[node])
      continue;
    index[node] = dual.nodes.size();
    dual.nodes.push_back(node);
    dual.live.emplace_back();
    problem.costs.emplace_back();
    const Table &c = pool.get(costs[node]);
    for (unsigned s = 0; s < c.rows; ++s)
      if (std::isfinite(c.values[s])) {
        dual.live.back().push_back(s);
        problem.costs.back().push_back(c.values[s]);
      }
  }
  if (dual.nodes.empty())
    return std::nullopt;
  std::vector<std::vector<double>> tables;
  tables.reserve(dual.nodes.size() * 4);
  for (unsigned u : dual.nodes)
    for (auto &[v, tableId] : adjacent[u]) {
      if (v < u)
        continue;
      const Table &table = pool.get(tableId);
      std::vector<double> &kept = tables.emplace_back();
      for (unsigned i : dual.live[index[u]])
        for (unsigned j : dual.live[index[v]])
          kept.push_back(table.at(i, j));
      problem.edges.push_back({index[u], index[v], kept.data()});
    }
  dual.numEdges = problem.edges.size();
  dual.solution = mlir::sbp::solveDual(problem, 1000, timeLimit);
  return dual;
}

void Solver::assign(const CoreDual &dual, std::vector<unsigned> &states) const {
  for (auto [k, node] : llvm::enumerate(dual.nodes))
    states[node] = dual.live[k][dual.solution.states[k]];
}

bool Solver::dropStates(const CoreDual &dual, double slack) {
  bool dropped = false;
  for (auto [k, node] : llvm::enumerate(dual.nodes)) {
    std::vector<double> extra(numStates(node), 0);
    bool any = false;
    for (auto [s, reduced] : llvm::enumerate(dual.solution.reducedCosts[k]))
      if (reduced > slack) {
        extra[dual.live[k][s]] = kInfinity;
        any = true;
      }
    if (any)
      addToCosts(node, extra);
    dropped |= any;
  }
  return dropped;
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
  stats.programNodes = core.size();
  // Scale costs to a range the solver's tolerances suit.
  double largest = 0;
  auto note = [&](const Table &t) {
    for (double v : t.values)
      if (std::isfinite(v))
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
  auto addColumn = [&](double cost) {
    objective.push_back(cost * scale);
    entries.emplace_back();
    return int(objective.size()) - 1;
  };
  auto addRow = [&](const std::vector<int> &cols, double rhs) {
    int row = rowBound.size();
    rowBound.push_back(rhs);
    for (int col : cols)
      entries[std::abs(col) - 1].push_back({row, col > 0 ? 1.0 : -1.0});
  };
  // x[node][state]: binary, one per state not pruned (column -1 for those
  // pruned), one state per node.
  std::vector<std::vector<int>> columns(costs.size());
  for (unsigned node : core) {
    std::vector<int> cols;
    for (double value : pool.get(costs[node]).values) {
      columns[node].push_back(std::isfinite(value) ? addColumn(value) : -1);
      if (columns[node].back() >= 0)
        cols.push_back(columns[node].back() + 1);
    }
    addRow(cols, 1);
  }
  int numBinary = objective.size();
  // y[edge][i][j] in [0, 1] with the marginals of x: integral x force y to
  // their product. Rows are built as signed, one-based column lists.
  for (unsigned u : core)
    for (auto &[v, tableId] : adjacent[u]) {
      if (v < u)
        continue;
      const Table &table = pool.get(tableId);
      // sum_j y[i][j] = x[u][i] and sum_i y[i][j] = x[v][j].
      std::vector<std::vector<int>> rowsOfU(table.rows), colsOfV(table.cols);
      for (unsigned i = 0; i < table.rows; ++i)
        for (unsigned j = 0; j < table.cols; ++j) {
          if (columns[u][i] < 0 || columns[v][j] < 0)
            continue;
          int y = addColumn(table.at(i, j)) + 1;
          rowsOfU[i].push_back(y);
          colsOfV[j].push_back(y);
        }
      for (unsigned i = 0; i < table.rows; ++i)
        if (columns[u][i] >= 0) {
          rowsOfU[i].push_back(-(columns[u][i] + 1));
          addRow(rowsOfU[i], 0);
        }
      for (unsigned j = 0; j < table.cols; ++j)
        if (columns[v][j] >= 0) {
          colsOfV[j].push_back(-(columns[v][j] + 1));
          addRow(colsOfV[j], 0);
        }
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
  const std::vector<double> &objectives = program.objective,
                            &rows = program.rowBound;
  std::vector<double> lower(objectives.size(), 0), upper(objectives.size(), 1);
  Cbc_Model *model = Cbc_newModel();
  Cbc_setLogLevel(model, 0);
  Cbc_loadProblem(model, objectives.size(), rows.size(), program.start.data(),
                  program.index.data(), program.value.data(), lower.data(),
                  upper.data(), objectives.data(), rows.data(), rows.data());
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
    // The live state of the largest value (the first without a solution).
    int best = -1;
    for (unsigned s = 0; s < numStates(node); ++s) {
      int col = columns[node][s];
      if (col < 0)
        continue;
      bool larger = solution && best >= 0 &&
                    solution[col] > solution[columns[node][best]];
      if (best < 0 || larger)
        best = s;
    }
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
  auto reduce = [](Solver &solver, SolveStats &stats) {
    solver.eliminate(stats);
    while (solver.pruneDominated(stats))
      solver.eliminate(stats);
  };
  reduce(solver, solution.stats);
  // Elimination is exact: a gap on the core is the whole gap.
  std::optional<CoreDual> dual = solver.solveDual(timeLimitSeconds / 4);
  if (dual) {
    solution.stats.coreNodes = dual->nodes.size();
    solution.stats.coreEdges = dual->numEdges;
    solver.assign(*dual, solution.states);
  }
  solver.backSubstitute(solution.states);
  solution.cost = evaluate(solution.states);
  if (!dual || dual->getGap() <= 1e-9 * std::abs(solution.cost)) {
    solution.lowerBound = solution.cost;
    return solution;
  }
  solution.lowerBound = solution.cost - dual->getGap();
  auto tolerance = [&] { return 1e-9 * std::abs(solution.cost); };
  auto consider = [&](std::vector<unsigned> &states) {
    double cost = evaluate(states);
    if (cost < solution.cost) {
      solution.cost = cost;
      solution.states = std::move(states);
    }
    solution.optimal = solution.cost - solution.lowerBound <= tolerance();
    if (solution.optimal)
      solution.lowerBound = solution.cost;
    return solution.optimal;
  };
  solution.optimal = false;
  // When the bound is the optimum (the relaxation is tight), an optimal
  // assignment chooses only states whose reduced cost is zero: search
  // those, which elimination often solves outright, for a better one. The
  // reduced costs of an optimum's states sum to at most its gap to the
  // bound, which is small but not known: thresholds from tight to loose.
  for (double fraction : {1e-7, 1e-5, 1e-3}) {
    Solver trial = solver;
    SolveStats scratch;
    std::vector<unsigned> states = solution.states;
    double zero = fraction * std::abs(solution.lowerBound);
    std::optional<CoreDual> restricted = dual;
    for (unsigned round = 0; round < 4 && restricted; ++round) {
      if (!trial.dropStates(*restricted, zero))
        break;
      reduce(trial, scratch);
      restricted = trial.solveDual(timeLimitSeconds / 16);
      if (!restricted)
        break;
      trial.assign(*restricted, states);
      if (restricted->getGap() <= zero)
        break;
    }
    trial.backSubstitute(states);
    if (consider(states))
      return solution;
  }
  // Exact from here: a state whose reduced cost exceeds the gap left is in
  // no assignment cheaper than the best found, so the integer program
  // solves the rest.
  solver.dropStates(*dual, solution.cost - solution.lowerBound + tolerance());
  reduce(solver, solution.stats);
  std::vector<unsigned> states = solution.states;
  double gap = 0;
  bool optimal =
      solver.solveCore(states, timeLimitSeconds, solution.stats, gap);
  solver.backSubstitute(states);
  double cost = evaluate(states);
  solution.lowerBound =
      std::max(solution.lowerBound,
               std::min(solution.cost, optimal ? cost : cost - gap));
  consider(states);
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
