//===- sbp-exec.cpp - Run a program saved by sbp-run --save-program ------===//
//
// A saved program is a shared library exporting the packed entry
// `_mlir_<entry>`, a manifest of its tensors and mesh, its inputs and, when
// saved with --reference, the reference's results. sbp-exec runs it on
// every rank like sbp-run does, without MLIR or LLVM: it links only sbp's
// runtime, so it runs where the compiler is not installed (a GPU machine).
//
//===----------------------------------------------------------------------===//

#include "sbp/Run/Entry.h"
#include "sbp/Run/Execution.h"
#include "sbp/Runtime/Npy.h"
#ifdef SBP_HAVE_CUDA
#include "sbp/Runtime/sbp_cuda.h"
#endif
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>

using namespace sbp::run;
using sbp::runtime::NpyArray;

namespace {

const char *const usageText =
    "usage: sbp-exec DIR [--bench N] [--comm threads|mpi|nccl] [--tol X]\n"
    "                [--timeout S] [--trace FILE.json] [--output-dir D]\n"
    "                [--random-inputs] [--seed N]\n"
    "Runs the program that `sbp-run --save-program DIR` saved, on the\n"
    "ranks of its mesh (a training step: its steps, printing each loss),\n"
    "and compares its results with the saved reference when there is one.\n"
    "Inputs are DIR/argN.npy, or random (--seed) where that file is absent\n"
    "or with --random-inputs. Exit codes as sbp-run's: 0 ok, 1 mismatch,\n"
    "2 bad input or usage, 3 a rank failed.\n";

int usage(const std::string &message) {
  std::fprintf(stderr, "sbp-exec: %s\n", message.c_str());
  return 2;
}

/// A program loaded from a saved library.
class LoadedProgram : public EntryPoint {
public:
  LoadedProgram(void (*entry)(void **), Backend kind) {
    packed = entry;
    backend = kind;
  }
};

struct Flags {
  std::string dir, comm = "threads", trace, outputDir;
  int64_t bench = 0;
  uint64_t seed = 0;
  bool randomInputs = false;
  double tol = -1, timeout = 300;
};

/// Parses argv; an error message, or an empty string.
std::string parse(int argc, char **argv, Flags &flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    size_t eq = arg.find('=');
    bool isFlag = arg.rfind("--", 0) == 0;
    if (isFlag && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (isFlag && arg != "--help" && arg != "--random-inputs") {
      if (i + 1 >= argc)
        return arg + " needs a value";
      value = argv[++i];
    }
    char *end = nullptr;
    if (arg == "--random-inputs") {
      flags.randomInputs = true;
      continue;
    }
    if (arg == "--help") {
      std::fputs(usageText, stdout);
      std::exit(0);
    } else if (arg == "--bench") {
      flags.bench = std::strtoll(value.c_str(), &end, 10);
      if (*end || flags.bench < 0)
        return "--bench " + value + ": expected a count";
    } else if (arg == "--seed") {
      flags.seed = std::strtoull(value.c_str(), &end, 10);
      if (*end)
        return "--seed " + value + ": expected a number";
    } else if (arg == "--tol") {
      flags.tol = std::strtod(value.c_str(), &end);
      if (*end || !(flags.tol >= 0))
        return "--tol " + value + ": expected a non-negative number";
    } else if (arg == "--timeout") {
      flags.timeout = std::strtod(value.c_str(), &end);
      if (*end || !(flags.timeout > 0))
        return "--timeout " + value + ": expected seconds";
    } else if (arg == "--comm") {
      if (value != "threads" && value != "mpi" && value != "nccl")
        return "--comm " + value + ": expected threads, mpi or nccl";
      flags.comm = value;
    } else if (arg == "--trace") {
      flags.trace = value;
    } else if (arg == "--output-dir") {
      flags.outputDir = value;
    } else if (isFlag) {
      return "unknown flag " + arg;
    } else if (flags.dir.empty()) {
      flags.dir = arg;
    } else {
      return "one program directory, not " + flags.dir + " and " + arg;
    }
  }
  if (flags.dir.empty())
    return "no program directory given";
  return "";
}

} // namespace

int main(int argc, char **argv) {
  Flags flags;
  std::string problem = parse(argc, argv, flags);
  if (!problem.empty())
    return usage(problem + "\n" + usageText);
  std::string error;
  std::optional<Manifest> manifest =
      readManifest(flags.dir + "/program.json", error);
  if (!manifest)
    return usage(error);
  if (flags.comm == "nccl" && manifest->backend != Backend::Cuda)
    return usage("--comm nccl needs a cuda program");
  if (manifest->backend == Backend::Cuda) {
#ifdef SBP_HAVE_CUDA
    const char *reason = nullptr;
    if (sbp_cuda_init(&reason))
      return usage(flags.dir + " is a cuda program: " + reason);
#else
    return usage(flags.dir + " is a cuda program; this sbp-exec was built "
                             "without the CUDA toolkit");
#endif
  }

  std::string library = flags.dir + "/program.so";
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return usage(std::string("cannot load ") + dlerror());
  std::string symbol = "_mlir_" + manifest->entry;
  auto entry =
      reinterpret_cast<void (*)(void **)>(dlsym(handle, symbol.c_str()));
  if (!entry)
    return usage(library + " has no " + symbol);
  // The program's global constructors (its kernel images' loads), which
  // `dlopen` does not run: sbp-run exports them as one function.
  if (auto init =
          reinterpret_cast<void (*)()>(dlsym(handle, "sbp_program_init")))
    init();
  LoadedProgram program(entry, manifest->backend);

  // Saved inputs, else random ones of the recorded global shapes (large
  // benchmark inputs need not travel with the program).
  std::vector<NpyArray> inputs(manifest->args.size()), expected;
  std::mt19937_64 rng(flags.seed);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = flags.dir + "/arg" + std::to_string(i) + ".npy";
    if (!flags.randomInputs && access(path.c_str(), F_OK) == 0) {
      if (!sbp::runtime::readNpy(path, inputs[i], error))
        return usage(error);
      continue;
    }
    inputs[i] = randomArray(manifest->args[i], manifest->argShapes[i], rng);
  }
  if (manifest->hasExpected) {
    // A training step's loss curve follows its results.
    expected.resize(manifest->results.size() + (manifest->trainSteps ? 1 : 0));
    for (size_t r = 0; r < expected.size(); ++r)
      if (!sbp::runtime::readNpy(flags.dir + "/expected" + std::to_string(r) +
                                     ".npy",
                                 expected[r], error))
        return usage(error);
  }

  bool underMpirun = isUnderMpiLauncher();
  ExecutionOptions options;
  options.mesh = manifest->mesh;
  options.timeoutSeconds = flags.timeout;
  options.benchIterations = flags.bench;
  options.trace = !flags.trace.empty();
  options.useMpi = flags.comm == "mpi" || (flags.comm == "nccl" && underMpirun);
  options.useNccl = flags.comm == "nccl";
  options.trainSteps = manifest->trainSteps;
  options.carried = manifest->carried;
  Execution execution(program, manifest->args, manifest->results, options);
  std::vector<NpyArray> outputs;
  if (!execution.run(inputs, outputs, error)) {
    std::fprintf(stderr, "sbp-exec: %s\n", error.c_str());
    return execution.isUsageError() ? 2 : 3;
  }
  if (!execution.isReportingRank())
    return 0;
  int64_t ranks = 1;
  for (int64_t size : manifest->mesh)
    ranks *= size;
  std::printf("ran @%s on %lld rank%s (mesh %s, %s%s)\n",
              manifest->entry.c_str(), static_cast<long long>(ranks),
              ranks == 1 ? "" : "s", formatShape(manifest->mesh).c_str(),
              manifest->backend == Backend::Cuda ? "cuda, " : "",
              flags.comm.c_str());
  for (size_t r = 0; r < outputs.size(); ++r)
    std::printf("result%zu: %s %s\n", r, dtypeName(outputs[r].dtype),
                formatShape(outputs[r].shape).c_str());
  for (size_t step = 0; step < execution.getLosses().size(); ++step)
    std::printf("step=%zu loss=%.7g\n", step + 1, execution.getLosses()[step]);
  if (flags.bench)
    std::fputs(execution.formatBench().c_str(), stdout);
  if (!flags.trace.empty() && !execution.writeTrace(flags.trace, error))
    return usage(error);
  for (size_t r = 0; !flags.outputDir.empty() && r < outputs.size(); ++r)
    if (!sbp::runtime::writeNpy(flags.outputDir + "/result" +
                                    std::to_string(r) + ".npy",
                                outputs[r], error))
      return usage(error);
  if (expected.empty())
    return 0;
  if (manifest->trainSteps)
    outputs.push_back(
        makeLossCurve(execution.getLosses(), manifest->results.back().dtype));
  Comparison comparison = compareResults(outputs, expected);
  if (!comparison.shapeError.empty()) {
    std::printf("%s\n", comparison.shapeError.c_str());
    return 1;
  }
  std::printf("max_abs_err=%.6g max_rel_err=%.6g\n", comparison.maxAbs,
              comparison.maxRel);
  double tol = flags.tol >= 0 ? flags.tol : comparison.hasF64 ? 1e-10 : 1e-4;
  if (!(comparison.maxRel <= tol)) {
    std::printf("mismatch: max_rel_err above --tol %g\n", tol);
    return 1;
  }
  return 0;
}
