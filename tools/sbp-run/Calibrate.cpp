//===- Calibrate.cpp - Measuring this host for the cost model -------------===//
//
// Each figure is measured the way the cost model uses it: kernels are
// JIT-compiled by the same pipeline as the programs sbp-run runs, their
// FLOPs and bytes counted as the model counts them (payload operations per
// iteration, operands plus results), and collectives timed through the
// runtime's threads backend and fitted to the alpha-beta ring formula.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "Program.h"
#include "mlir/Parser/Parser.h"
#include "sbp/Cost/Cluster.h"
#include "sbp/Run/Execution.h"
#include "sbp/Runtime/sbp_runtime.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <chrono>
#include <thread>

using namespace sbp::run;

namespace {

/// Median milliseconds of `iterations` runs of the program `text` (entry
/// @k) on `ranks` ranks, each running all of it; negative on failure, with
/// the reason in `error`.
double timeKernel(mlir::MLIRContext &context, const std::string &text,
                  bool useBlas, int iterations, std::string &error,
                  int64_t ranks = 1) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module) {
    error = "cannot parse a calibration kernel";
    return -1;
  }
  auto func = module->lookupSymbol<mlir::func::FuncOp>("k");
  std::vector<TensorSpec> args, results;
  if (auto message = describeEntry(func, {ranks}, args, results)) {
    error = *message;
    return -1;
  }
  mlir::TimingScope untimed;
  auto program = CompiledProgram::compile(*module, "k", Backend::Cpu, true,
                                          useBlas, error, nullptr, untimed);
  if (!program)
    return -1;
  std::vector<::sbp::runtime::NpyArray> inputs, outputs;
  for (const TensorSpec &spec : args) {
    ::sbp::runtime::NpyArray array;
    array.dtype = spec.dtype;
    array.shape = spec.localShape;
    array.data.assign(array.numElements() * 4, 0);
    inputs.push_back(std::move(array));
  }
  ExecutionOptions options;
  options.mesh = {ranks};
  options.benchIterations = iterations;
  Execution execution(*program, args, results, options);
  if (!execution.run(inputs, outputs, error))
    return -1;
  return execution.getMedianMilliseconds();
}

/// Median seconds of an all-reduce of `count` floats over the `ranks` ranks
/// of `world`: every rank when it runs them all as threads, this process's
/// when it runs one under MPI.
double timeAllReduce(sbp_world *world, int64_t ranks, int64_t count,
                     int iterations) {
  const int64_t axes[] = {0}, shape[] = {count};
  int64_t own = sbp_world_process_rank(world);
  std::vector<std::vector<float>> in(ranks, std::vector<float>(count, 1));
  std::vector<std::vector<float>> out(ranks, std::vector<float>(count, 0));
  auto reduce = [&](int64_t r) {
    sbp_tensor a = {in[r].data(), 1, shape, SBP_F32};
    sbp_tensor b = {out[r].data(), 1, shape, SBP_F32};
    sbp_all_reduce(sbp_world_comm(world, r), axes, 1, &a, &b, SBP_SUM);
  };
  std::vector<double> times;
  for (int i = 0; i <= iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (own >= 0) {
      reduce(own);
    } else {
      std::vector<std::thread> threads;
      for (int64_t r = 0; r < ranks; ++r)
        threads.emplace_back(reduce, r);
      for (std::thread &t : threads)
        t.join();
    }
    // The first run warms up.
    if (i > 0)
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int sbp::run::calibrate(mlir::MLIRContext &context, const std::string &path,
                        bool useBlas, bool useMpi, int64_t ranks,
                        llvm::raw_ostream &log) {
  auto cluster = mlir::sbp::getClusterPreset("cpu-local");
  if (!cluster) {
    log << "sbp-run: " << llvm::toString(cluster.takeError()) << "\n";
    return 2;
  }
  std::string error;
  auto fail = [&]() {
    log << "sbp-run: --calibrate: " << error << "\n";
    return 3;
  };
  // The collectives' world first: under MPI only its first process logs.
  const int64_t mesh[] = {ranks};
  sbp_world *world = nullptr;
  if (useMpi) {
    const char *message = nullptr;
    world = sbp_mpi_world_create(mesh, 1, 300, &message);
    if (!world) {
      error = message ? message : "cannot start MPI";
      return fail();
    }
  } else {
    world = sbp_threads_world_create(mesh, 1, 300);
  }
  bool writer = sbp_world_process_rank(world) <= 0;
  llvm::raw_ostream &out = writer ? log : llvm::nulls();

  // Contractions: an MLP layer, relu(x w1) w2, x 256x512, w1 512x1024,
  // w2 1024x512: two matmuls of 2 * 256 * 512 * 1024 FLOPs as the code
  // generator runs them (the second one fused with the activation).
  std::string matmul = R"mlir(
#m = affine_map<(i, j) -> (i, j)>
func.func @k(%x: tensor<256x512xf32>, %w1: tensor<512x1024xf32>, %w2: tensor<1024x512xf32>) -> tensor<256x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<256x512xf32>, tensor<512x1024xf32>) outs(%f : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<256x1024xf32>) outs(%e : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %z : f32
    linalg.yield %v : f32
  } -> tensor<256x1024xf32>
  %e2 = tensor.empty() : tensor<256x512xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<256x1024xf32>, tensor<1024x512xf32>) outs(%f2 : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
})mlir";
  double ms = timeKernel(context, matmul, useBlas, 10, error);
  if (ms < 0)
    return fail();
  double matmulFlops = 2 * 2.0 * 256 * 512 * 1024 / (ms / 1e3);
  out << llvm::formatv("MLP layer 256x512x1024: {0:F3} ms, {1:F1} GFLOP/s\n",
                       ms, matmulFlops / 1e9);

  // Ranks beyond the cores: the same layer on every core, then on twice
  // as many ranks, which would take twice as long if turns were free.
  int64_t cores = *cluster->hostCores;
  double onCores = timeKernel(context, matmul, useBlas, 5, error, cores);
  double onTwice = timeKernel(context, matmul, useBlas, 5, error, 2 * cores);
  if (onCores < 0 || onTwice < 0)
    return fail();
  double efficiency = std::clamp(2 * onCores / onTwice, 0.05, 1.0);
  out << llvm::formatv("MLP layer on {0} ranks: {1:F3} ms, on {2}: {3:F3} ms "
                       "-> oversubscribed efficiency {4:F2}\n",
                       cores, onCores, 2 * cores, onTwice, efficiency);

  // Other loops: attention scores as a generic contraction over (batch,
  // head, query, key, feature), 2 operations per iteration.
  std::string loops = R"mlir(
#q = affine_map<(b, a, i, j, d) -> (b, i, a, d)>
#k = affine_map<(b, a, i, j, d) -> (b, j, a, d)>
#s = affine_map<(b, a, i, j, d) -> (b, a, i, j)>
func.func @k(%q: tensor<4x64x4x64xf32>, %k: tensor<4x64x4x64xf32>) -> tensor<4x4x64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4x64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4x64x64xf32>) -> tensor<4x4x64x64xf32>
  %r = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x64x4x64xf32>, tensor<4x64x4x64xf32>) outs(%f : tensor<4x4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x4x64x64xf32>
  return %r : tensor<4x4x64x64xf32>
})mlir";
  ms = timeKernel(context, loops, useBlas, 20, error);
  if (ms < 0)
    return fail();
  double loopFlops = 2.0 * 4 * 4 * 64 * 64 * 64 / (ms / 1e3);
  out << llvm::formatv("loops (attention scores 4x4x64x64x64): {0:F3} ms, "
                       "{1:F2} GFLOP/s\n",
                       ms, loopFlops / 1e9);

  // Memory: adding two 32 MiB tensors moves 96 MiB.
  std::string stream = R"mlir(
#m = affine_map<(i, j) -> (i, j)>
func.func @k(%a: tensor<2048x4096xf32>, %b: tensor<2048x4096xf32>) -> tensor<2048x4096xf32> {
  %e = tensor.empty() : tensor<2048x4096xf32>
  %r = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2048x4096xf32>, tensor<2048x4096xf32>) outs(%e : tensor<2048x4096xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2048x4096xf32>
  return %r : tensor<2048x4096xf32>
})mlir";
  ms = timeKernel(context, stream, useBlas, 5, error);
  if (ms < 0)
    return fail();
  double bandwidth = 3.0 * 2048 * 4096 * 4 / (ms / 1e3);
  out << llvm::formatv("memory 96 MiB: {0:F3} ms, {1:F2} GB/s\n", ms,
                       bandwidth / 1e9);

  // Collectives: all-reduce of 1 KiB and 16 MiB, fitted to
  // 2(p-1) alpha + 2(p-1)/p T / beta, over 2 threads or over the MPI
  // processes.
  double smallBytes = 1024, largeBytes = 16 << 20;
  double tSmall = timeAllReduce(world, ranks, smallBytes / 4, 50);
  double tLarge = timeAllReduce(world, ranks, largeBytes / 4, 5);
  sbp_world_destroy(world);
  double share = 2.0 * (ranks - 1) / ranks;
  double beta =
      share * (largeBytes - smallBytes) / std::max(tLarge - tSmall, 1e-9);
  double alpha = std::max(
      (tSmall - share * smallBytes / beta) / (2.0 * (ranks - 1)), 1e-7);
  out << llvm::formatv("all-reduce on {0} {1}: 1 KiB {2:F1} us, 16 MiB "
                       "{3:F3} ms -> latency {4:F2} us, bandwidth {5:F2} "
                       "GB/s\n",
                       ranks, useMpi ? "MPI processes" : "threads",
                       tSmall * 1e6, tLarge * 1e3, alpha * 1e6, beta / 1e9);
  // Under MPI the first process writes the file.
  if (!writer)
    return 0;

  cluster->name =
      useMpi ? "cpu-local (calibrated, MPI)" : "cpu-local (calibrated)";
  cluster->links = {mlir::sbp::Link{beta, alpha}};
  cluster->device.peakFlops = {{"f32", matmulFlops}, {"f64", matmulFlops / 2}};
  cluster->device.loopFlops = {{"f32", loopFlops}, {"f64", loopFlops}};
  cluster->device.memoryBandwidth = bandwidth;
  cluster->oversubscribedEfficiency = efficiency;
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    log << "sbp-run: --calibrate " << path << ": " << ec.message() << "\n";
    return 2;
  }
  os << cluster->toJson();
  out << "wrote " << path << "\n";
  return 0;
}
