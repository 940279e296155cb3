//===- AutoParallelReport.cpp - What the search chose and gained ----------===//

#include "sbp/Transforms/AutoParallelReport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::sbp;
using json = nlohmann::json;

namespace {

template <typename T> std::string print(const T &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

std::string printSignatureText(const NdSbpSignature &signature) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printSignature(os, signature);
  return text;
}

json totals(const PlanCost &cost, double limit) {
  return {{"step_time_s", cost.stepTime()},
          {"compute_s", cost.compute},
          {"communication_s", cost.communication},
          {"bytes_moved", cost.bytesMoved},
          {"parameter_bytes", cost.parameterBytes},
          {"peak_memory_bytes", cost.peakMemory},
          {"fits", cost.peakMemory <= limit}};
}

std::string ms(double seconds) {
  return llvm::formatv("{0:F3}", seconds * 1e3).str();
}
std::string mib(double bytes) {
  return llvm::formatv("{0:F1}", bytes / (1024.0 * 1024)).str();
}

} // namespace

struct AutoParallelReport::Impl {
  json root;
  double limit;
};

AutoParallelReport::AutoParallelReport(const CostModel &model, MeshOp mesh,
                                       double memoryLimit)
    : impl(std::make_unique<Impl>()) {
  impl->limit = memoryLimit;
  json &root = impl->root;
  root["cluster"] = model.getCluster().name;
  root["mesh"] = {{"name", mesh.getSymName().str()},
                  {"shape", std::vector<int64_t>(mesh.getShape().begin(),
                                                 mesh.getShape().end())}};
  json links = json::array();
  for (const Link &link : model.getLinks())
    links.push_back({{"bandwidth", link.bandwidth}, {"latency", link.latency}});
  root["mesh"]["links"] = links;
  root["memory_limit_bytes"] = memoryLimit;
  root["functions"] = json::array();
}

AutoParallelReport::~AutoParallelReport() = default;

void AutoParallelReport::addFunction(
    FunctionOpInterface func, const SearchProblem &problem,
    ArrayRef<unsigned> states, const PlanCost &cost, const Solution &solution,
    unsigned solves, double seconds,
    ArrayRef<std::pair<std::string, PlanCost>> references) {
  json entry;
  entry["name"] = func.getName().str();
  entry["search"] = {{"seconds", seconds},
                     {"solves", solves},
                     {"nodes", problem.getNodes().size()},
                     {"eliminated", solution.stats.eliminated},
                     {"eliminations_reused", solution.stats.reused},
                     {"core_nodes", solution.stats.coreNodes},
                     {"core_edges", solution.stats.coreEdges},
                     {"proven_optimal", solution.optimal}};
  entry["plan"] = totals(cost, impl->limit);
  json refs = json::object();
  for (const auto &[name, reference] : references)
    refs[name] = totals(reference, impl->limit);
  entry["references"] = refs;

  json arguments = json::array();
  using Kind = SearchProblem::NodeKind;
  for (auto [index, node] : llvm::enumerate(problem.getNodes()))
    if (node.kind != Kind::Op)
      arguments.push_back(
          {{node.kind == Kind::Argument ? "argument" : "result", node.index},
           {"layout", print(node.layouts[states[index]])},
           {"parameter", node.isParameter}});
  entry["arguments"] = arguments;

  SmallVector<OpCost> perOp;
  problem.evaluate(states, &perOp);
  json ops = json::array();
  for (const OpCost &op : perOp)
    ops.push_back({{"op", op.op->getName().getStringRef().str()},
                   {"loc", print(op.op->getLoc())},
                   {"signature", printSignatureText(op.signature)},
                   {"compute_s", op.compute},
                   {"communication_s", op.communication},
                   {"bytes_moved", op.bytesMoved},
                   {"memory_bytes", op.memory}});
  entry["ops"] = ops;
  impl->root["functions"].push_back(entry);
}

LogicalResult AutoParallelReport::write(StringRef path) const {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return failure();
  const json &root = impl->root;
  if (!path.ends_with(".md")) {
    os << root.dump(2) << "\n";
    return success();
  }
  os << "# Auto-parallel plan\n\n"
     << "Cluster `" << root["cluster"].get<std::string>() << "`, mesh @"
     << root["mesh"]["name"].get<std::string>() << " "
     << root["mesh"]["shape"].dump() << ", memory limit "
     << mib(root["memory_limit_bytes"].get<double>()) << " MiB per device.\n";
  for (const json &func : root["functions"]) {
    const json &search = func["search"];
    os << "\n## @" << func["name"].get<std::string>() << "\n\n"
       << llvm::formatv("Searched {0} nodes in {1:F3} s, {6} solve(s) ({2} "
                        "eliminated, {3} of them reused; integer program on "
                        "{4} nodes; {5}).\n",
                        search["nodes"].get<int64_t>(),
                        search["seconds"].get<double>(),
                        search["eliminated"].get<int64_t>(),
                        search["eliminations_reused"].get<int64_t>(),
                        search["core_nodes"].get<int64_t>(),
                        search["proven_optimal"].get<bool>()
                            ? "optimal"
                            : "stopped at the time limit",
                        search["solves"].get<int64_t>())
       << "\n| strategy | step ms | compute ms | communication ms | bytes "
          "moved (MiB) | peak memory (MiB) | fits |\n"
       << "|---|---:|---:|---:|---:|---:|---|\n";
    auto row = [&](const std::string &name, const json &t) {
      os << "| " << name << " | " << ms(t["step_time_s"].get<double>()) << " | "
         << ms(t["compute_s"].get<double>()) << " | "
         << ms(t["communication_s"].get<double>()) << " | "
         << mib(t["bytes_moved"].get<double>()) << " | "
         << mib(t["peak_memory_bytes"].get<double>()) << " | "
         << (t["fits"].get<bool>() ? "yes" : "no") << " |\n";
    };
    row("**chosen**", func["plan"]);
    for (auto &[name, t] : func["references"].items())
      row(name, t);
    os << "\n| op | location | signature | compute ms | communication ms | "
          "memory MiB |\n|---|---|---|---:|---:|---:|\n";
    for (const json &op : func["ops"])
      os << "| `" << op["op"].get<std::string>() << "` | "
         << op["loc"].get<std::string>() << " | `"
         << op["signature"].get<std::string>() << "` | "
         << ms(op["compute_s"].get<double>()) << " | "
         << ms(op["communication_s"].get<double>()) << " | "
         << mib(op["memory_bytes"].get<double>()) << " |\n";
  }
  return success();
}
