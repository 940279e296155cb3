//===- AutoParallelReport.cpp - What the search chose and gained ----------===//

#include "sbp/Transforms/AutoParallelReport.h"
#include "sbp/Dialect/Sbp/Utils/ArgumentNames.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
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

/// How the `Searched` line ends: `optimal` only when the plan meets its
/// proven bound, else the gap to it, and whether a time limit cut the
/// search short.
std::string bound(const json &search, const json &plan) {
  double gap = plan["gap"].get<double>();
  std::string text = formatGap(gap);
  if (gap != 0 && search["time_limited"].get<bool>())
    text += ", stopped at the time limit";
  return text;
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
    FunctionOpInterface func, const SearchProblem &problem, const Plan &plan,
    double seconds, ArrayRef<std::pair<std::string, PlanCost>> references) {
  const Solution &solution = plan.solution;
  ArrayRef<unsigned> states = plan.states;
  json entry;
  entry["name"] = func.getName().str();
  entry["search"] = {{"seconds", seconds},
                     {"solves", plan.solves},
                     {"nodes", problem.getNodes().size()},
                     {"eliminated", solution.stats.eliminated},
                     {"eliminations_reused", solution.stats.reused},
                     {"core_nodes", solution.stats.coreNodes},
                     {"core_edges", solution.stats.coreEdges},
                     {"program_nodes", solution.stats.programNodes},
                     {"proven_optimal", plan.getGap() == 0},
                     {"time_limited", !solution.optimal}};
  entry["plan"] = totals(plan.cost, impl->limit);
  entry["plan"]["lower_bound_s"] = plan.lowerBound;
  entry["plan"]["gap"] = plan.getGap();
  json refs = json::object();
  for (const auto &[name, reference] : references)
    refs[name] = totals(reference, impl->limit);
  entry["references"] = refs;

  json arguments = json::array();
  using Kind = SearchProblem::NodeKind;
  // A training step says which arguments are parameters and optimizer
  // state: their layouts are its data parallelism or ZeRO stage.
  int64_t params = -1, state = 0;
  if (auto step = func->getAttrOfType<DictionaryAttr>(
          SbpDialect::getTrainStepAttrName())) {
    params = cast<IntegerAttr>(step.get("params")).getInt();
    state = cast<IntegerAttr>(step.get("state")).getInt();
  }
  for (auto [index, node] : llvm::enumerate(problem.getNodes())) {
    if (node.kind != Kind::Argument)
      continue;
    int64_t i = node.index;
    std::string name = getArgumentName(func, i), role;
    if (params < 0)
      role = node.isParameter ? "parameter" : "input";
    else
      role = i < params           ? "parameter"
             : i < params + state ? "optimizer state"
                                  : "data";
    arguments.push_back({{"argument", i},
                         {"name", name},
                         {"role", role},
                         {"layout", print(node.layouts[states[index]])},
                         {"parameter", node.isParameter}});
  }
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

void AutoParallelReport::setRecomputation(int64_t segments, int64_t of,
                                          int64_t ops) {
  impl->root["functions"].back()["recomputation"] = {
      {"segments", segments}, {"of", of}, {"ops_copied", ops}};
}

void AutoParallelReport::setPipeline(const PipelinePlan &plan,
                                     double singleStepTime,
                                     const PipelinePlan *reference,
                                     StringRef why) {
  json stages = json::array();
  // A training stage's functions come as forward, backward, update.
  size_t perStage = plan.training ? 3 : 1;
  for (int64_t s = 0; s < plan.stages; ++s) {
    size_t function = s * perStage;
    json stage = {{"function", impl->root["functions"].size() > function
                                   ? impl->root["functions"][function]["name"]
                                   : json()},
                  {"first_op", s ? plan.cuts[s - 1] : 0},
                  {"forward_s", plan.times[s].forward},
                  {"send_s", plan.times[s].send},
                  {"memory_bytes", plan.memory[s]}};
    if (plan.training) {
      stage["backward_s"] = plan.times[s].backward;
      stage["update_s"] = plan.updates[s];
      stage["gradient_sum_s"] = plan.sums[s];
    }
    stages.push_back(std::move(stage));
  }
  int64_t p = plan.stages, m = plan.microBatches;
  impl->root["pipeline"] = {
      {"stages", p},
      {"micro_batches", m},
      {"schedule", ::sbp::runtime::getScheduleName(plan.schedule)},
      {"mesh", std::vector<int64_t>(plan.mesh.begin(), plan.mesh.end())},
      {"stage_mesh",
       plan.mesh.size() > 1
           ? std::vector<int64_t>(plan.mesh.begin() + 1, plan.mesh.end())
           : std::vector<int64_t>{1}},
      {"step_time_s", plan.stepTime},
      {"bubble", plan.bubble},
      {"uniform_bubble", double(p - 1) / (m + p - 1)},
      {"best_without_stages_s",
       std::isfinite(singleStepTime) ? json(singleStepTime) : json()},
      {"stage_plans_priced", plan.candidates},
      {"why", why.str()},
      {"per_stage", stages}};
  if (!reference)
    return;
  json cuts = json::array({0}), times = json::array();
  for (int64_t cut : reference->cuts)
    cuts.push_back(cut);
  for (auto [s, stage] : llvm::enumerate(reference->times))
    times.push_back({{"forward_s", stage.forward},
                     {"backward_s", stage.backward},
                     {"update_s", reference->updates[s]},
                     {"send_s", stage.send}});
  impl->root["pipeline"]["references"]["data x tensor parallel"] = {
      {"step_time_s", reference->stepTime},
      {"bubble", reference->bubble},
      {"first_ops", cuts},
      {"stage_times_s", times},
      {"memory_bytes", std::vector<double>(reference->memory.begin(),
                                           reference->memory.end())}};
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
  if (root.contains("pipeline")) {
    const json &pipe = root["pipeline"];
    bool training = !pipe["per_stage"].empty() &&
                    pipe["per_stage"][0].contains("backward_s");
    os << "\n## Pipeline\n\n"
       << llvm::formatv(
              "{0} stage{10} on sub-meshes {1} (mesh {2}), {3} micro-batches, "
              "{4}: predicted step {5} ms, bubble {6:F1}% ((p-1)/(m+p-1) = "
              "{7:F1}%); best plan without stages {8}; {9} stage plans "
              "priced.\n\nWhy stages: {11}.\n",
              pipe["stages"].get<int64_t>(), pipe["stage_mesh"].dump(),
              pipe["mesh"].dump(), pipe["micro_batches"].get<int64_t>(),
              pipe["schedule"].get<std::string>(),
              ms(pipe["step_time_s"].get<double>()),
              pipe["bubble"].get<double>() * 100,
              pipe["uniform_bubble"].get<double>() * 100,
              pipe["best_without_stages_s"].is_number()
                  ? ms(pipe["best_without_stages_s"].get<double>()) + " ms"
                  : std::string("none"),
              pipe["stage_plans_priced"].get<int64_t>(),
              pipe["stages"].get<int64_t>() == 1 ? "" : "s",
              pipe["why"].get<std::string>())
       << "\n| stage | function | first op | forward ms | "
       << (training ? "backward ms | update ms | " : "")
       << "send ms | memory MiB |\n|---:|---|---:|---:|"
       << (training ? "---:|---:|" : "") << "---:|---:|\n";
    for (auto [s, stage] : llvm::enumerate(pipe["per_stage"])) {
      os << "| " << s << " | @"
         << (stage["function"].is_string()
                 ? stage["function"].get<std::string>()
                 : std::string("?"))
         << " | " << stage["first_op"].get<int64_t>() << " | "
         << ms(stage["forward_s"].get<double>()) << " | ";
      if (training)
        os << ms(stage["backward_s"].get<double>()) << " | "
           << ms(stage["update_s"].get<double>()) << " | ";
      os << ms(stage["send_s"].get<double>()) << " | "
         << mib(stage["memory_bytes"].get<double>()) << " |\n";
    }
    if (pipe.contains("references"))
      for (auto &[name, ref] : pipe["references"].items())
        os << "\nReference `" << name << "`, as many stages of even layers: "
           << "predicted step " << ms(ref["step_time_s"].get<double>())
           << " ms, bubble "
           << llvm::formatv("{0:F1}", ref["bubble"].get<double>() * 100)
           << "%.\n";
  }
  for (const json &func : root["functions"]) {
    const json &search = func["search"];
    os << "\n## @" << func["name"].get<std::string>() << "\n\n"
       << llvm::formatv("Searched {0} nodes in {1:F3} s, {6} solve(s) ({2} "
                        "eliminated, {3} of them reused; {4} left for message "
                        "passing, integer program on {7} nodes; {5}).\n",
                        search["nodes"].get<int64_t>(),
                        search["seconds"].get<double>(),
                        search["eliminated"].get<int64_t>(),
                        search["eliminations_reused"].get<int64_t>(),
                        search["core_nodes"].get<int64_t>(),
                        bound(search, func["plan"]),
                        search["solves"].get<int64_t>(),
                        search["program_nodes"].get<int64_t>())
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
    if (func.contains("recomputation")) {
      const json &r = func["recomputation"];
      os << "\nRecomputed in the backward pass to fit the memory limit: "
         << r["segments"].get<int64_t>() << " of " << r["of"].get<int64_t>()
         << " forward segments (" << r["ops_copied"].get<int64_t>()
         << " ops copied).\n";
    }
    os << "\n| argument | name | role | layout |\n|---|---|---|---|\n";
    for (const json &arg : func["arguments"])
      os << "| " << arg["argument"].get<int64_t>() << " | "
         << arg["name"].get<std::string>() << " | "
         << arg["role"].get<std::string>() << " | `"
         << arg["layout"].get<std::string>() << "` |\n";
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
