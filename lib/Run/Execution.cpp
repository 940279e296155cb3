//===- Execution.cpp - Running a compiled program on every rank -----------===//
//
// With the threads backend every rank is a thread of this process running
// the same JIT-compiled code on its own communicator. Benchmark iterations
// start together: a barrier of the ranks precedes each one, and an
// iteration lasts from the earliest start to the latest end.
//
//===----------------------------------------------------------------------===//

#include "sbp/Run/Execution.h"
#include "sbp/Runtime/sbp_program.h"
#ifdef SBP_HAVE_CUDA
#include "sbp/Runtime/sbp_cuda.h"
#endif
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
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

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

std::vector<int64_t>
sbp::run::inferGlobalShape(const std::vector<NpyArray> &shards,
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

bool sbp::run::isUnderMpiLauncher() {
  return std::getenv("PMI_RANK") || std::getenv("PMI_SIZE") ||
         std::getenv("OMPI_COMM_WORLD_SIZE");
}

int64_t sbp::run::getMpiLauncherSize() {
  for (const char *name : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE"})
    if (const char *value = std::getenv(name))
      return std::max<int64_t>(0, std::strtoll(value, nullptr, 10));
  return 0;
}

Execution::Execution(const EntryPoint &program, std::vector<TensorSpec> args,
                     std::vector<TensorSpec> results, ExecutionOptions options)
    : program(&program), args(std::move(args)), results(std::move(results)),
      options(std::move(options)) {
  for (TensorSpec &spec : this->args)
    spec.layout.meshShape = this->options.mesh;
  for (TensorSpec &spec : this->results)
    spec.layout.meshShape = this->options.mesh;
}

Execution::Execution(const Pipeline &pipeline, std::vector<TensorSpec> results,
                     ExecutionOptions options)
    : pipeline(&pipeline), results(std::move(results)),
      options(std::move(options)) {
  for (const char *kind : {"F", "B"})
    for (int64_t mb = 0; mb < pipeline.microBatches; ++mb)
      taskNames.push_back(kind + std::to_string(mb));
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
  int64_t iterations = options.trainSteps        ? options.trainSteps
                       : options.benchIterations ? options.benchIterations + 1
                                                 : 1;
  bool reportsLoss = rank == 0 || options.useMpi;
  for (int64_t it = 0; it < iterations; ++it) {
    bool record = timed && (options.benchIterations == 0 || it > 0);
    synchronize();
    sbp_program_trace(record);
    double begin = sbp_program_now_us();
    program->call(pointers, results, rankResults);
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    if (record)
      this->record(rank, begin, end);
    if (!options.trainSteps || rankResults.empty())
      continue;
    // The updated parameters and state are the next step's arguments; the
    // loss is replicated (a result never stays partial).
    const NpyArray &loss = rankResults.back();
    if (reportsLoss && !loss.data.empty())
      losses.push_back(
          loss.dtype == SBP_F64
              ? *reinterpret_cast<const double *>(loss.data.data())
              : *reinterpret_cast<const float *>(loss.data.data()));
    if (it + 1 < iterations)
      for (int64_t i = 0; i < options.carried; ++i)
        shards[i] = std::move(rankResults[i]);
  }
  sbp_program_set_comm(nullptr);
}

void Execution::record(int64_t rank, double begin, double end,
                       std::vector<sbp_span> tasks) {
  Iteration iteration;
  iteration.begin = begin;
  iteration.end = end;
  iteration.tasks = std::move(tasks);
  std::vector<sbp_span> spans(4096);
  spans.resize(sbp_program_take_spans(spans.data(), spans.size()));
  for (const sbp_span &span : spans) {
    iteration.communication += span.end_us - span.begin_us;
    if (std::strcmp(span.name, "recv") == 0)
      iteration.receiving += span.end_us - span.begin_us;
  }
  if (options.trace)
    iteration.spans = std::move(spans);
  timeline[rank].push_back(std::move(iteration));
}

void Execution::runCudaRank(int64_t rank, sbp_comm *comm,
                            const std::vector<NpyArray> &inputs,
                            std::vector<NpyArray> &rankResults) {
#ifdef SBP_HAVE_CUDA
  // Ranks take the GPUs in turn: a virtual mesh when there are fewer. A
  // rank that fails still meets the others at every iteration's start, so
  // that none waits for it; the world's error stops their collectives.
  int devices = std::max(1, sbp_cuda_device_count());
  const char *problem = nullptr;
  bool begun = sbp_cuda_rank_begin(rank % devices, &problem) == 0;
  // Threads share an address space: device copies between their buffers
  // (SBP_CUDA_VIRTUAL_MESH=staging stages them through host memory).
  const char *virtualMesh = std::getenv("SBP_CUDA_VIRTUAL_MESH");
  bool staged =
      options.useMpi || (virtualMesh && std::string(virtualMesh) == "staging");
  sbp_comm *deviceComm = nullptr;
  if (begun)
    deviceComm = options.useNccl ? sbp_nccl_comm_create(comm, &problem)
                 : staged        ? sbp_cuda_staging_comm_create(comm)
                                 : sbp_cuda_device_comm_create(comm);
  bool ok = deviceComm != nullptr;
  if (!ok)
    sbp_comm_abort(comm, problem);
  sbp_program_set_comm(deviceComm);
  std::vector<int64_t> coords = sbp::runtime::getCoords(options.mesh, rank);
  std::vector<NpyArray> shards;
  std::vector<void *> data;
  std::vector<const std::vector<int64_t> *> shapes;
  for (size_t i = 0; ok && i < args.size(); ++i) {
    shards.push_back(
        sbp::runtime::extractShard(inputs[i], args[i].layout, coords));
    int64_t bytes = shards.back().data.size();
    data.push_back(sbp_cuda_alloc(bytes));
    sbp_cuda_upload(data.back(), shards.back().data.data(), bytes);
  }
  for (NpyArray &shard : shards)
    shapes.push_back(&shard.shape);

  bool timed = options.benchIterations > 0 || options.trace;
  int64_t iterations = options.trainSteps        ? options.trainSteps
                       : options.benchIterations ? options.benchIterations + 1
                                                 : 1;
  bool reportsLoss = rank == 0 || options.useMpi;
  // The allocations the arguments live in: the uploads, then, for the
  // updated parameters and state, the results of the step before.
  std::set<void *> argBuffers(data.begin(), data.end());
  std::vector<ReturnedBuffer> returned;
  for (int64_t it = 0; it < iterations; ++it) {
    synchronize();
    if (!ok)
      continue;
    bool recorded = timed && (options.benchIterations == 0 || it > 0);
    sbp_program_trace(recorded);
    double begin = sbp_program_now_us();
    program->invoke(data, shapes, results, returned);
    // An iteration ends when its kernels have run.
    const char *failure = sbp_cuda_synchronize();
    double end = sbp_program_now_us();
    sbp_program_trace(false);
    if (failure) {
      sbp_comm_abort(comm, failure);
      ok = false;
      continue;
    }
    if (recorded)
      record(rank, begin, end);
    if (options.trainSteps && !returned.empty() && reportsLoss) {
      // The loss is replicated (a result never stays partial).
      const ReturnedBuffer &loss = returned.back();
      if (results.back().dtype == SBP_F64) {
        double value = 0;
        sbp_cuda_download(&value, loss.data, sizeof(value));
        losses.push_back(value);
      } else {
        float value = 0;
        sbp_cuda_download(&value, loss.data, sizeof(value));
        losses.push_back(value);
      }
    }
    if (it + 1 == iterations) {
      rankResults.assign(results.size(), NpyArray());
      for (size_t r = 0; r < results.size(); ++r) {
        NpyArray &result = rankResults[r];
        result.dtype = results[r].dtype;
        result.shape = returned[r].shape;
        result.data.resize(result.numElements() * sbp_dtype_size(result.dtype));
        sbp_cuda_download(result.data.data(), returned[r].data,
                          result.data.size());
      }
    }
    // The updated parameters and state are the next step's arguments, in
    // place on the device. Every other allocation is freed once, whether
    // a result returned an argument's buffer or not.
    std::set<void *> next = argBuffers;
    if (options.trainSteps) {
      next.clear();
      for (size_t i = 0; i < args.size(); ++i) {
        if (int64_t(i) >= options.carried) {
          next.insert(data[i]);
          continue;
        }
        data[i] = returned[i].data;
        shards[i].shape = returned[i].shape;
        next.insert(returned[i].allocated);
      }
    }
    if (it + 1 == iterations)
      next.clear();
    std::set<void *> owned = argBuffers;
    for (ReturnedBuffer &buffer : returned)
      owned.insert(buffer.allocated);
    for (void *buffer : owned)
      if (!next.count(buffer))
        sbp_cuda_free(buffer);
    argBuffers = std::move(next);
  }
  // What a failed iteration left.
  for (void *buffer : argBuffers)
    sbp_cuda_free(buffer);
  sbp_program_set_comm(nullptr);
  if (deviceComm)
    sbp_cuda_comm_destroy(deviceComm);
  if (begun) {
    if (const char *failure = sbp_cuda_synchronize())
      sbp_comm_abort(comm, failure);
    sbp_cuda_rank_end();
  }
  if (rankResults.size() != results.size())
    rankResults.assign(results.size(), NpyArray());
#else
  sbp_comm_abort(comm, "this sbp-run was built without the CUDA toolkit");
#endif
}

void Execution::runAnyRank(int64_t rank, sbp_comm *comm,
                           const std::vector<NpyArray> &inputs,
                           std::vector<NpyArray> &rankResults) {
  if (pipeline)
    runPipelineRank(rank, comm, inputs, rankResults);
  else if (program->getBackend() == Backend::Cuda)
    runCudaRank(rank, comm, inputs, rankResults);
  else
    runRank(rank, comm, inputs, rankResults);
}

bool Execution::run(const std::vector<NpyArray> &inputs,
                    std::vector<NpyArray> &outputs, std::string &error) {
  int64_t numRanks = 1;
  for (int64_t size : options.mesh)
    numRanks *= size;
  timeline.assign(numRanks, {});
  std::vector<std::vector<NpyArray>> rankResults(numRanks);
  sbp_world *world;
  if (options.useMpi) {
    // This process runs its own rank; the ranks meet in an all-reduce.
    const char *problem = nullptr;
    world = sbp_mpi_world_create(options.mesh.data(), options.mesh.size(),
                                 options.timeoutSeconds, &problem);
    if (!world) {
      error = std::string("--comm mpi: ") + problem;
      usageError = true;
      return false;
    }
    int64_t rank = sbp_world_process_rank(world);
    reporting = rank == 0;
    sbp_comm *comm = sbp_world_comm(world, rank);
    std::vector<int64_t> axes(options.mesh.size());
    std::iota(axes.begin(), axes.end(), 0);
    synchronize = [comm, axes] {
      int64_t one = 1, value = 0, sum = 0;
      sbp_tensor in{&value, 1, &one, SBP_I64}, out{&sum, 1, &one, SBP_I64};
      sbp_all_reduce(comm, axes.data(), axes.size(), &in, &out, SBP_SUM);
    };
    runAnyRank(rank, comm, inputs, rankResults[rank]);
    gatherResults(comm, rank, rankResults);
  } else {
    world = sbp_threads_world_create(options.mesh.data(), options.mesh.size(),
                                     options.timeoutSeconds);
    auto barrier = std::make_shared<Barrier>(numRanks);
    synchronize = [barrier] { barrier->wait(); };
    std::vector<std::thread> threads;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      threads.emplace_back([&, rank] {
        runAnyRank(rank, sbp_world_comm(world, rank), inputs,
                   rankResults[rank]);
      });
    for (std::thread &thread : threads)
      thread.join();
  }
  if (const char *failure = sbp_world_error(world)) {
    error = failure;
    sbp_world_destroy(world);
    return false;
  }
  sbp_world_destroy(world);
  if (pipeline)
    return assemblePipelineOutputs(rankResults, outputs, error);

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

void Execution::gatherResults(sbp_comm *comm, int64_t rank,
                              std::vector<std::vector<NpyArray>> &rankResults) {
  // Every rank's shapes, then every rank's bytes, with the runtime's own
  // all-gather over the whole mesh (whose group order is the rank order).
  std::vector<int64_t> axes(options.mesh.size());
  std::iota(axes.begin(), axes.end(), 0);
  int64_t numRanks = rankResults.size();
  size_t count = rankResults[rank].size();
  for (int64_t j = 0; j < numRanks; ++j)
    rankResults[j].resize(count);
  for (size_t r = 0; r < count; ++r) {
    NpyArray &mine = rankResults[rank][r];
    int64_t tensorRank = mine.shape.size();
    std::vector<int64_t> shapes(numRanks * tensorRank);
    int64_t inShape[] = {1, tensorRank}, outShape[] = {numRanks, tensorRank};
    sbp_tensor in{mine.shape.data(), 2, inShape, SBP_I64},
        out{shapes.data(), 2, outShape, SBP_I64};
    sbp_all_gather(comm, axes.data(), axes.size(), &in, &out, 0);
    int64_t elementSize = sbp_dtype_size(mine.dtype), totalBytes = 0;
    std::vector<int64_t> bytes(numRanks);
    for (int64_t j = 0; j < numRanks; ++j) {
      bytes[j] = elementSize;
      for (int64_t d = 0; d < tensorRank; ++d)
        bytes[j] *= shapes[j * tensorRank + d];
      totalBytes += bytes[j];
    }
    std::vector<char> all(totalBytes);
    int64_t myBytes = mine.data.size();
    sbp_tensor data{mine.data.data(), 1, &myBytes, SBP_I8},
        gathered{all.data(), 1, &totalBytes, SBP_I8};
    sbp_all_gather(comm, axes.data(), axes.size(), &data, &gathered, 0);
    for (int64_t j = 0, at = 0; j < numRanks; ++j) {
      NpyArray &shard = rankResults[j][r];
      shard.dtype = mine.dtype;
      shard.shape.assign(shapes.begin() + j * tensorRank,
                         shapes.begin() + (j + 1) * tensorRank);
      shard.data.assign(all.begin() + at, all.begin() + at + bytes[j]);
      at += bytes[j];
    }
  }
}

std::vector<double> Execution::getIterationTimes() const {
  // Under MPI a process knows only its own rank's times.
  size_t iterations = 0;
  for (const auto &rank : timeline)
    iterations = std::max(iterations, rank.size());
  std::vector<double> times;
  for (size_t it = 0; it < iterations; ++it) {
    double begin = INFINITY, end = -INFINITY;
    for (const auto &rank : timeline) {
      if (it >= rank.size())
        continue;
      begin = std::min(begin, rank[it].begin);
      end = std::max(end, rank[it].end);
    }
    times.push_back((end - begin) / 1000);
  }
  return times;
}

double Execution::getMedianMilliseconds() const {
  std::vector<double> times = getIterationTimes();
  return times.empty() ? 0 : median(times);
}

std::string Execution::formatBench() const {
  std::vector<double> times = getIterationTimes();
  size_t iterations = times.size();
  double min =
      times.empty() ? 0 : *std::min_element(times.begin(), times.end());
  char line[256];
  std::snprintf(line, sizeof(line),
                "time_ms median=%.3f min=%.3f iterations=%zu\n", median(times),
                min, iterations);
  std::string text = line;
  for (size_t rank = 0; rank < timeline.size(); ++rank) {
    if (timeline[rank].empty())
      continue;
    std::vector<double> compute, communication;
    for (const Iteration &it : timeline[rank]) {
      compute.push_back((it.end - it.begin - it.communication) / 1000);
      communication.push_back(it.communication / 1000);
    }
    std::snprintf(line, sizeof(line),
                  "rank %zu: compute_ms=%.3f comm_ms=%.3f\n", rank,
                  median(compute), median(communication));
    text += line;
  }
  if (!pipeline)
    return text;
  // The bubble: the fraction of the step the devices spend outside tasks
  // or waiting in them for another stage's activations.
  std::vector<double> bubbles;
  for (size_t it = 0; it < iterations; ++it) {
    double busy = 0;
    int64_t ranks = 0;
    for (const auto &rank : timeline) {
      if (it >= rank.size())
        continue;
      ++ranks;
      for (const sbp_span &task : rank[it].tasks)
        busy += task.end_us - task.begin_us;
      busy -= rank[it].receiving;
    }
    if (ranks && times[it] > 0)
      bubbles.push_back(1 - busy / 1000 / (ranks * times[it]));
  }
  std::snprintf(
      line, sizeof(line),
      "pipeline: stages=%zu micro_batches=%lld schedule=%s "
      "bubble=%.3f\n",
      pipeline->stages.size(), static_cast<long long>(pipeline->microBatches),
      sbp::runtime::getScheduleName(pipeline->schedule), median(bubbles));
  return text + line;
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
      // A pipeline stage's tasks, with the transfers and collectives
      // within and between them.
      if (pipeline) {
        for (const sbp_span &task : it.tasks)
          event(task.name, "task", rank, task.begin_us, task.end_us);
        for (const sbp_span &span : it.spans)
          event(span.name, "communication", rank, span.begin_us, span.end_us);
        continue;
      }
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
