//===- Execution.cpp - Running a compiled program on every rank -----------===//
//
// With the threads backend every rank is a thread of this process running
// the same JIT-compiled code on its own communicator. Benchmark iterations
// start together: a barrier of the ranks precedes each one, and an
// iteration lasts from the earliest start to the latest end.
//
//===----------------------------------------------------------------------===//

#include "Execution.h"
#include "sbp/Runtime/sbp_program.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

using namespace sbp::run;
using sbp::runtime::LayoutEntry;
using sbp::runtime::NpyArray;

struct Execution::Barrier {
  explicit Barrier(int64_t count) : count(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t generation = this->generation;
    if (++arrived == count) {
      arrived = 0;
      ++this->generation;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return generation != this->generation; });
  }

  int64_t count, arrived = 0;
  uint64_t generation = 0;
  std::mutex mutex;
  std::condition_variable changed;
};

namespace {

/// The global shape of a result from every rank's shard: along each
/// dimension, the sum of the pieces of the ranks that differ only on the
/// axes that split it.
std::vector<int64_t> inferGlobalShape(const std::vector<NpyArray> &shards,
                                      const sbp::runtime::Layout &layout) {
  std::vector<int64_t> global(shards[0].shape.size(), 0);
  for (size_t rank = 0; rank < shards.size(); ++rank) {
    std::vector<int64_t> coords =
        sbp::runtime::getCoords(layout.meshShape, rank);
    for (size_t d = 0; d < global.size(); ++d) {
      bool counts = true;
      for (size_t a = 0; a < coords.size(); ++a) {
        const LayoutEntry &entry = layout.entries[a];
        bool splitsDim =
            entry.kind == LayoutEntry::Split && entry.dim == int64_t(d);
        counts &= splitsDim || coords[a] == 0;
      }
      if (counts && d < shards[rank].shape.size())
        global[d] += shards[rank].shape[d];
    }
  }
  return global;
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

Execution::Execution(const CompiledProgram &program,
                     std::vector<TensorSpec> args,
                     std::vector<TensorSpec> results, ExecutionOptions options)
    : program(program), args(std::move(args)), results(std::move(results)),
      options(std::move(options)) {
  for (TensorSpec &spec : this->args)
    spec.layout.meshShape = this->options.mesh;
  for (TensorSpec &spec : this->results)
    spec.layout.meshShape = this->options.mesh;
}

void Execution::runRank(int64_t rank, sbp_comm *comm,
                        const std::vector<NpyArray> &inputs,
                        std::vector<NpyArray> &rankResults) {
  sbp_program_set_comm(comm);
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  std::vector<NpyArray> shards;
  for (size_t i = 0; i < args.size(); ++i)
    shards.push_back(
        sbp::runtime::extractShard(inputs[i], args[i].layout, coords));
  std::vector<NpyArray *> pointers;
  for (NpyArray &shard : shards)
    pointers.push_back(&shard);

  bool timed = options.benchIterations > 0 || options.trace;
  int64_t iterations =
      options.benchIterations > 0 ? options.benchIterations + 1 : 1;
  for (int64_t it = 0; it < iterations; ++it) {
    bool record = timed && (options.benchIterations == 0 || it > 0);
    barrier->wait();
    sbp_program_trace(record);
    double begin = sbp_program_now_us();
    program.call(pointers, results, rankResults);
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    if (!record)
      continue;
    Iteration iteration;
    iteration.begin = begin;
    iteration.end = end;
    std::vector<sbp_span> spans(4096);
    spans.resize(sbp_program_take_spans(spans.data(), spans.size()));
    for (const sbp_span &span : spans)
      iteration.communication += span.end_us - span.begin_us;
    if (options.trace)
      iteration.spans = std::move(spans);
    timeline[rank].push_back(std::move(iteration));
  }
  sbp_program_set_comm(nullptr);
}

bool Execution::run(const std::vector<NpyArray> &inputs,
                    std::vector<NpyArray> &outputs, std::string &error) {
  int64_t numRanks = 1;
  for (int64_t size : options.mesh)
    numRanks *= size;
  if (options.useMpi) {
    error = "--comm mpi: this sbp-run was built without MPI";
    return false;
  }
  sbp_world *world = sbp_threads_world_create(
      options.mesh.data(), options.mesh.size(), options.timeoutSeconds);
  barrier = std::make_shared<Barrier>(numRanks);
  timeline.assign(numRanks, {});
  std::vector<std::vector<NpyArray>> rankResults(numRanks);
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < numRanks; ++rank)
    threads.emplace_back([&, rank] {
      runRank(rank, sbp_world_comm(world, rank), inputs, rankResults[rank]);
    });
  for (std::thread &thread : threads)
    thread.join();
  if (const char *failure = sbp_world_error(world)) {
    error = failure;
    sbp_world_destroy(world);
    return false;
  }
  sbp_world_destroy(world);

  outputs.assign(results.size(), NpyArray());
  for (size_t r = 0; r < results.size(); ++r) {
    std::vector<NpyArray> shards;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      shards.push_back(std::move(rankResults[rank][r]));
    std::vector<int64_t> global = inferGlobalShape(shards, results[r].layout);
    if (!sbp::runtime::assembleShards(shards, results[r].layout, global,
                                      outputs[r], error)) {
      error = results[r].name + ": " + error;
      return false;
    }
  }
  return true;
}

void Execution::printBench(llvm::raw_ostream &os) const {
  size_t iterations = timeline.empty() ? 0 : timeline[0].size();
  std::vector<double> times;
  for (size_t it = 0; it < iterations; ++it) {
    double begin = timeline[0][it].begin, end = timeline[0][it].end;
    for (const auto &rank : timeline) {
      begin = std::min(begin, rank[it].begin);
      end = std::max(end, rank[it].end);
    }
    times.push_back((end - begin) / 1000);
  }
  double min =
      times.empty() ? 0 : *std::min_element(times.begin(), times.end());
  os << "time_ms median=" << llvm::format("%.3f", median(times))
     << " min=" << llvm::format("%.3f", min) << " iterations=" << iterations
     << "\n";
  for (size_t rank = 0; rank < timeline.size(); ++rank) {
    std::vector<double> compute, communication;
    for (const Iteration &it : timeline[rank]) {
      compute.push_back((it.end - it.begin - it.communication) / 1000);
      communication.push_back(it.communication / 1000);
    }
    os << "rank " << rank
       << ": compute_ms=" << llvm::format("%.3f", median(compute))
       << " comm_ms=" << llvm::format("%.3f", median(communication)) << "\n";
  }
}

bool Execution::writeTrace(const std::string &path, std::string &error) const {
  std::ofstream out(path);
  if (!out) {
    error = "--trace " + path + ": cannot write the file";
    return false;
  }
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto event = [&](const char *name, const char *category, size_t rank,
                   double begin, double end) {
    out << (first ? "" : ",\n") << "{\"name\": \"" << name << "\", \"cat\": \""
        << category << "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " << rank
        << ", \"ts\": " << begin << ", \"dur\": " << (end - begin) << "}";
    first = false;
  };
  for (size_t rank = 0; rank < timeline.size(); ++rank) {
    out << (first ? "" : ",\n")
        << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": "
        << rank << ", \"args\": {\"name\": \"rank " << rank << "\"}}";
    first = false;
    for (const Iteration &it : timeline[rank]) {
      // Compute is whatever lies between the collectives.
      double at = it.begin;
      for (const sbp_span &span : it.spans) {
        if (span.begin_us > at)
          event("compute", "compute", rank, at, span.begin_us);
        event(span.name, "collective", rank, span.begin_us, span.end_us);
        at = span.end_us;
      }
      if (it.end > at)
        event("compute", "compute", rank, at, it.end);
    }
  }
  out << "\n]}\n";
  if (!out) {
    error = "--trace " + path + ": writing failed";
    return false;
  }
  return true;
}
