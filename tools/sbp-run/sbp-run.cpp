//===- sbp-run.cpp - Run a program on N ranks -----------------------------===//
//
// Reads a logical or partitioned program, partitions a logical one for the
// mesh, JIT-compiles it, runs the entry function on every rank with that
// rank's shard of the inputs, rebuilds the global results and optionally
// compares them with the logical program run on one rank. Exit codes: 0 ok,
// 1 numerical mismatch, 2 bad input or usage, 3 failure on a rank.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "Program.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Dialect/Sbp/Utils/ArgumentNames.h"
#include "sbp/Import/Onnx.h"
#include "sbp/Import/Stablehlo.h"
#include "sbp/InitSbp.h"
#include "sbp/Run/Execution.h"
#include "sbp/Runtime/Npy.h"
#include "sbp/Tools/InputFile.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Pipelines.h"
#include "sbp/Transforms/ProgressLine.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#ifdef SBP_HAVE_CUDA
#include "sbp/Runtime/sbp_cuda.h"
#endif
#include <cmath>
#include <cstdlib>
#include <future>
#include <map>
#include <random>

using namespace mlir;
using namespace ::sbp::run;
using ::sbp::runtime::NpyArray;
namespace cl = llvm::cl;

namespace {
/// The value of `optional`, or null.
template <typename T>
const T *optionalPtr(const std::optional<T> &optional) {
  return optional ? &*optional : nullptr;
}

cl::OptionCategory category("sbp-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<program>"),
                               cl::cat(category));
cl::opt<std::string> meshFlag("mesh", cl::desc("Mesh shape, e.g. 2x2"),
                              cl::value_desc("AxB..."), cl::cat(category));
cl::opt<int64_t> ranksFlag("ranks", cl::desc("Number of ranks of a 1-d mesh"),
                           cl::init(0), cl::cat(category));
cl::opt<bool> autoFlag("auto", cl::desc("Run the auto-parallel search first"),
                       cl::cat(category));
cl::opt<std::string> clusterFlag("cluster",
                                 cl::desc("Cluster preset or file for --auto"),
                                 cl::cat(category));
cl::opt<std::string> calibrateFlag(
    "calibrate",
    cl::desc("Measure this host (matmul and loop FLOP/s, memory bandwidth, "
             "all-reduce latency and bandwidth) and write a cluster file for "
             "--cluster; no program is run"),
    cl::value_desc("FILE.json"), cl::cat(category));
cl::opt<std::string> backendFlag("backend", cl::desc("cpu or cuda"),
                                 cl::init("cpu"), cl::cat(category));
cl::opt<bool> emulateGpuFlag(
    "emulate-gpu",
    cl::desc("Testing: lower with --sbp-lower-gpu but run the kernels as "
             "host loops on the CPU backend"),
    cl::Hidden, cl::cat(category));
cl::opt<std::string> commFlag("comm", cl::desc("threads, mpi or nccl"),
                              cl::init("threads"), cl::cat(category));
cl::opt<std::string> saveFlag(
    "save-program",
    cl::desc("Compile the program and save it for sbp-exec instead of "
             "running it: DIR/program.so, DIR/program.json, the inputs "
             "(argN.npy) and, with --reference, the reference's results "
             "(expectedN.npy); a cuda program needs no GPU to be saved"),
    cl::value_desc("DIR"), cl::cat(category));
cl::opt<std::string> cacheFlag(
    "cache",
    cl::desc("Directory of the persistent compilation cache, or 'off' "
             "(default: $SBP_CACHE_DIR, else $XDG_CACHE_HOME/sbp, else "
             "~/.cache/sbp): a program compiled before links at once"),
    cl::value_desc("DIR|off"), cl::cat(category));
cl::opt<bool> quietFlag(
    "quiet",
    cl::desc("No status lines while the search runs (results and errors "
             "still print)"),
    cl::cat(category));
cl::alias quietAlias("q", cl::desc("Alias for --quiet"),
                     cl::aliasopt(quietFlag));

cl::opt<bool> timingFlag(
    "timing",
    cl::desc("Print the time of each step (import, search, partitioning, "
             "lowering, LLVM code generation, linking, run) to stderr"),
    cl::cat(category));
cl::opt<int64_t> nprocFlag(
    "nproc",
    cl::desc("Start N processes of this command, one per rank, through MPI's "
             "launcher (for --comm mpi or nccl; the same as mpirun -np N)"),
    cl::init(0), cl::cat(category));
cl::opt<std::string>
    entryFlag("entry",
              cl::desc("Entry function (default: the only public function)"),
              cl::cat(category));
cl::list<std::string> inputFlags("input",
                                 cl::desc("An input: NAME=FILE.npy, NAME "
                                          "being argN, N or an ONNX input's "
                                          "name (repeatable)"),
                                 cl::cat(category));
cl::opt<bool> randomInputs("random-inputs",
                           cl::desc("Random inputs for arguments without "
                                    "--input (the default)"),
                           cl::cat(category));
cl::opt<uint64_t> seedFlag("seed", cl::desc("Seed of the random inputs"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> outputDir("output-dir",
                               cl::desc("Write each result as resultN.npy"),
                               cl::cat(category));
cl::opt<bool> referenceFlag(
    "reference",
    cl::desc("Also run the logical program on one rank and compare"),
    cl::cat(category));
cl::opt<bool> plainReferenceFlag(
    "plain-reference",
    cl::desc("With --reference: lower the reference to plain loops (no "
             "tiling, vectorization or BLAS), which checks the code "
             "generation too; slow on large models"),
    cl::cat(category));
cl::opt<double> tolFlag("tol",
                        cl::desc("Largest relative error --reference "
                                 "accepts (default 1e-4, 1e-10 for f64 "
                                 "results, 4 units of roundoff of f16 or "
                                 "bf16 where the program computes in them)"),
                        cl::init(-1), cl::cat(category));
cl::opt<int64_t> benchFlag("bench",
                           cl::desc("Time N iterations after a warm-up"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> traceFlag("trace", cl::desc("Write a Chrome trace (JSON)"),
                               cl::cat(category));
cl::opt<double> timeoutFlag("timeout",
                            cl::desc("Seconds a collective waits for its "
                                     "peers before all ranks stop"),
                            cl::init(300), cl::cat(category));
cl::opt<std::string> onnxWeights(
    "onnx-weights",
    cl::desc("ONNX weights as 'arguments' (the default: loaded from the "
             "model, shardable) or 'constants'"),
    cl::init("arguments"), cl::cat(category));
cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Shape of an ONNX input with dynamic dimensions: "
                         "NAME=AxB... (repeatable)"),
                cl::cat(category));
cl::opt<bool> blasFlag("blas", cl::desc("Call OpenBLAS for matmuls"),
                       cl::cat(category));
cl::opt<int64_t> stagesFlag(
    "pipeline-stages",
    cl::desc("Run the program as a pipeline of K stages, each on its own "
             "sub-mesh (the mesh's first axis numbers them; 1 is the whole "
             "mesh, accumulating the gradients of --micro-batches; with "
             "--auto and without this flag the search may choose K)"),
    cl::value_desc("K"), cl::init(0), cl::cat(category));
cl::opt<int64_t> microBatchesFlag(
    "micro-batches",
    cl::desc("Micro-batches of a pipeline (default 1, or the search's choice "
             "with --auto)"),
    cl::value_desc("M"), cl::init(0), cl::cat(category));
cl::opt<std::string>
    scheduleFlag("schedule",
                 cl::desc("Pipeline schedule: 1f1b (the default) or gpipe"),
                 cl::cat(category));
cl::opt<bool> trainFlag(
    "train",
    cl::desc("Train: turn the program into a training step "
             "(--sbp-make-train-step) and run --steps steps on one batch "
             "(--input, else synthetic), printing each step's loss"),
    cl::cat(category));
/// The size of an ONNX input's dynamic dimensions that neither
/// --input-shape nor an --input array fixes: a batch that 1, 2, 4 and 8
/// ranks split evenly.
constexpr int64_t kDynamicSize = 8;
/// --check-gradients' learning rate: a power of two (exact scaling) large
/// enough that `p - rate * g` keeps g's digits where g is far below p's
/// precision (f32 loses a gradient of 1e-10 beside a parameter of 1 at
/// rate 1), and small enough not to overflow f32 for |g| < 1e19.
constexpr double kGradientRate = 0x1p64;

cl::opt<bool> checkGradientsFlag(
    "check-gradients",
    cl::desc("Build the training step's gradients and compare each "
             "parameter's with central finite differences of the loss along "
             "a random direction; exit code 1 above --tol (default 1e-6 for "
             "f64, 2e-2 for f32) and above the loss's rounding"),
    cl::cat(category));
cl::list<std::string> paramsFlag(
    "params", cl::CommaSeparated,
    cl::desc("Training: the arguments that are parameters, comma-separated "
             "(argN, N or an ONNX input's name; default: an ONNX model's "
             "parameters (docs/onnx.md), else the float arguments that are "
             "not a batch)"),
    cl::value_desc("NAME,..."), cl::cat(category));
cl::list<std::string> frozenFlag(
    "frozen", cl::CommaSeparated,
    cl::desc("Training: parameters left as they are, comma-separated (argN, "
             "N, an ONNX input's name or the framework's parameter name)"),
    cl::value_desc("NAME,..."), cl::cat(category));
cl::opt<bool> listParamsFlag(
    "list-params",
    cl::desc("Training: print each parameter trained (the framework's name "
             "for an ONNX model's) and each argument left constant, with why"),
    cl::cat(category));
cl::opt<int64_t> stepsFlag("steps", cl::desc("Training steps (default 10)"),
                           cl::init(10), cl::cat(category));
cl::opt<std::string> optimizerFlag("optimizer",
                                   cl::desc("Training: sgd or adamw"),
                                   cl::init("adamw"), cl::cat(category));
cl::opt<double> lrFlag("lr", cl::desc("Training: learning rate"),
                       cl::init(1e-3), cl::cat(category));
cl::opt<std::string>
    lossFlag("loss",
             cl::desc("Training: auto, result, mse or cross-entropy (see "
                      "--sbp-make-train-step)"),
             cl::init("auto"), cl::cat(category));

/// Reports, at their locations, the elements read or written at constant
/// indices outside their tensors' static shapes, which would reach outside
/// the buffers at run time.
LogicalResult checkConstantIndices(ModuleOp module) {
  bool outside = false;
  module.walk([&](Operation *op) {
    Value tensor;
    OperandRange indices = op->getOperands();
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      tensor = extract.getTensor();
      indices = extract.getIndices();
    } else if (auto insert = dyn_cast<tensor::InsertOp>(op)) {
      tensor = insert.getDest();
      indices = insert.getIndices();
    } else {
      return;
    }
    auto type = cast<RankedTensorType>(tensor.getType());
    for (auto [dim, index] : llvm::enumerate(indices)) {
      APInt value;
      if (type.isDynamicDim(dim) || !matchPattern(index, m_ConstantInt(&value)))
        continue;
      if (value.isNegative() || value.sge(type.getDimSize(dim))) {
        op->emitError() << "index " << value.getSExtValue()
                        << " is out of bounds for dimension " << dim
                        << " of size " << type.getDimSize(dim);
        outside = true;
        return;
      }
    }
  });
  return failure(outside);
}

/// A usage or input error: exit code 2.
int usage(const llvm::Twine &message) {
  llvm::errs() << "sbp-run: " << message << "\n";
  return 2;
}

/// "2x2", as mesh options take it.
std::string joinMesh(ArrayRef<int64_t> mesh) {
  return llvm::join(
      llvm::map_range(mesh, [](int64_t size) { return std::to_string(size); }),
      "x");
}

/// Parses "2x2" into a mesh shape.
bool parseMesh(StringRef text, std::vector<int64_t> &shape) {
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size < 1)
      return false;
    shape.push_back(size);
  }
  return !shape.empty();
}

/// Whether `module` is already partitioned: sbp-partition marks it, and
/// collectives exist only in partitioned programs.
bool isPartitioned(ModuleOp module) {
  if (module->hasAttr(mlir::sbp::SbpDialect::getPartitionedAttrName()))
    return true;
  WalkResult found = module.walk([](Operation *op) {
    return isa<mlir::sbp::SbpDialect>(op->getDialect()) &&
                   !isa<mlir::sbp::MeshOp, mlir::sbp::AnnotateOp,
                        mlir::sbp::BoxingOp>(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// The run as the command line describes it.
class Runner {
public:
  int run();

private:
  int load();
  void registerDialects();
  int resolveMesh();
  int findEntry();
  /// Runs sbp-auto-parallel on the logical program.
  int searchPlan();
  /// Checks --pipeline-stages, --micro-batches and --schedule.
  int checkPipelineFlags();
  /// Checks --train, --steps, --optimizer, --lr and --loss.
  int checkTrainFlags();
  /// --check-gradients: runs the step (plain gradient descent at
  /// kGradientRate, so that each parameter's update is its gradient scaled
  /// by a power of two) and the loss at parameters moved both ways along a
  /// random direction.
  int checkGradients(const EntryPoint &program,
                     const std::vector<TensorSpec> &args,
                     const std::vector<TensorSpec> &results,
                     ExecutionOptions options);
  /// Replaces the entry function by its training step; renumbers the ONNX
  /// weights as its arguments.
  int makeTrainStep();
  /// The mesh of a pipeline of `stages` stages on the command line's mesh:
  /// its first axis numbers the stages.
  int getPipelineMesh(int64_t stages, std::vector<int64_t> &pipelineMesh);
  /// Cuts the logical program into the stages --pipeline-stages asks for.
  int splitStages();
  /// Partitions, compiles and runs a pipelined module.
  int runPipeline(ModuleOp logical, StringRef entryName,
                  const std::vector<TensorSpec> &globalArgs,
                  const std::vector<TensorSpec> &logicalResults);
  /// Prints what a run gave, writes its trace and results and compares
  /// them with the reference.
  int finish(const Execution &execution, std::vector<NpyArray> &outputs,
             const std::vector<int64_t> &ranMesh, StringRef entryName,
             Backend backend, ModuleOp logical,
             const std::vector<TensorSpec> &globalArgs,
             const std::vector<TensorSpec> &logicalResults);
  int prepareInputs(const std::vector<TensorSpec> &logicalArgs);
  /// Prints `param NAME TYPE` for each parameter of the training step, by
  /// the framework's name where the ONNX model records it, and `constant
  /// NAME: WHY` for each weight it leaves alone (--list-params).
  void listParameters(ArrayRef<int64_t> params);
  /// The message for `flag`'s NAME, which names no argument of the entry.
  std::string noArgument(StringRef flag, StringRef name);
  /// Starts compiling the logical program for --reference on a thread of
  /// its own, beside the partitioned program's compilation.
  void startReference(ModuleOp logical, StringRef entryName);
  /// Runs the logical program on one rank (the program startReference
  /// compiled) into `expected`; an exit status on failure.
  int runReference(ModuleOp logical, StringRef entryName,
                   const std::vector<TensorSpec> &globalArgs,
                   const std::vector<TensorSpec> &logicalResults,
                   std::vector<NpyArray> &expected,
                   std::vector<double> *losses = nullptr);
  /// --save-program: the library, manifest, inputs and expected results.
  int save(const CompiledProgram &program, ModuleOp logical,
           StringRef entryName, Backend backend,
           const std::vector<TensorSpec> &args,
           const std::vector<TensorSpec> &results,
           const std::vector<TensorSpec> &globalArgs,
           const std::vector<TensorSpec> &logicalResults);
  int compare(const std::vector<NpyArray> &results,
              const std::vector<NpyArray> &expected);

  MLIRContext context;
  /// --timing's report, printed when the runner ends.
  DefaultTimingManager timingManager;
  TimingScope timing;
  /// --cache's, or nothing.
  std::optional<CompileCache> cache;
  /// The reference's compiled program, from startReference, and its error.
  std::future<std::unique_ptr<CompiledProgram>> referenceProgram;
  std::string referenceError;
  TimingScope referenceTiming;
  OwningOpRef<ModuleOp> module;
  /// Values of arguments that an ONNX model holds (its weights).
  std::vector<mlir::sbp::OnnxWeight> weights;
  /// --input files read before an ONNX import, by flag.
  std::map<std::string, NpyArray> readInputs;
  std::vector<int64_t> mesh;
  /// Whether the command line, the module or MPI's launcher gave the mesh.
  bool meshGiven = false;
  func::FuncOp entry;
  std::vector<NpyArray> inputs;
  /// A training step's leading arguments that its results update:
  /// parameters, then optimizer state.
  int64_t numParams = 0, numCarried = 0;
  /// Their names: the ONNX initializer's, else argN of the forward.
  std::vector<std::string> paramNames;
};

void Runner::registerDialects() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  mlir::sbp::registerSbpDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context.appendDialectRegistry(registry);
}

int Runner::load() {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      mlir::sbp::openSbpInputFile(inputFile, &error);
  if (!buffer)
    return usage(error);
  if (mlir::sbp::isOnnxModel(inputFile, buffer->getBuffer())) {
    mlir::sbp::OnnxImportOptions options;
    if (onnxWeights != "arguments" && onnxWeights != "constants")
      return usage("--onnx-weights=" + onnxWeights +
                   ": expected arguments or constants");
    options.weightsAsArguments = onnxWeights == "arguments";
    for (const std::string &flag : inputShapes)
      if (!mlir::sbp::parseOnnxInputShape(flag, options, error))
        return usage(error);
    // Inputs named in --input may be needed at import time (a shape); they
    // are read once, here, and kept for prepareInputs.
    for (const std::string &flag : inputFlags) {
      auto [name, path] = StringRef(flag).rsplit('=');
      NpyArray array;
      if (path.empty() || !::sbp::runtime::readNpy(path.str(), array, error))
        continue;
      NpyArray &kept = readInputs[flag] = std::move(array);
      options.inputValues[name] = StringRef(kept.data.data(), kept.data.size());
      options.valueShapes[name].assign(kept.shape.begin(), kept.shape.end());
    }
    // Synthetic inputs need a size for dimensions the model leaves open.
    options.dynamicSize = kDynamicSize;
    mlir::sbp::OnnxImport imported = mlir::sbp::importOnnxModel(
        buffer->getMemBufferRef(), &context, options, error);
    if (!imported.module) {
      llvm::errs() << error << "\n";
      return 2;
    }
    module = std::move(imported.module);
    weights = std::move(imported.weights);
    for (const std::string &note : imported.notes)
      llvm::errs() << "sbp-run: note: " << note << "\n";
    return 0;
  }
  if (!inputShapes.empty())
    return usage("--input-shape applies to ONNX models only");
  llvm::SourceMgr sourceMgr;
  bool stablehlo = mlir::sbp::mayHoldStablehlo(buffer->getBuffer());
  const llvm::MemoryBuffer &text = *buffer;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Import errors name ops by their location; the op's text would repeat
  // the file's line.
  context.printOpOnDiagnostic(false);
  if (stablehlo && failed(mlir::sbp::checkStablehloOpNames(text, &context)))
    return 2;
  module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return usage("cannot parse " + inputFile);
  if (stablehlo && mlir::sbp::isStablehloModule(*module) &&
      failed(mlir::sbp::importStablehlo(*module)))
    return usage("cannot import the StableHLO program " + inputFile);
  if (failed(checkConstantIndices(*module)))
    return 2;
  return 0;
}

int Runner::resolveMesh() {
  SmallVector<mlir::sbp::MeshOp> meshes(module->getOps<mlir::sbp::MeshOp>());
  std::vector<int64_t> requested;
  if (!meshFlag.empty() && ranksFlag)
    return usage("--mesh and --ranks both give the mesh; use one");
  if (!meshFlag.empty() && !parseMesh(meshFlag, requested))
    return usage("--mesh " + meshFlag +
                 ": expected sizes separated by 'x', e.g. 2x2");
  if (ranksFlag < 0)
    return usage("--ranks must be positive");
  if (ranksFlag)
    requested = {ranksFlag};
  if (meshes.size() > 1)
    return usage(inputFile + " declares " + std::to_string(meshes.size()) +
                 " meshes; sbp-run runs programs on one mesh");
  // One process per rank: without a mesh, the launcher's processes are it.
  if (meshes.empty() && requested.empty() && commFlag != "threads")
    if (int64_t processes = getMpiLauncherSize())
      requested = {processes};
  meshGiven = !requested.empty() || !meshes.empty();
  if (meshes.empty()) {
    mesh = requested.empty() ? std::vector<int64_t>{1} : requested;
    return 0;
  }
  ArrayRef<int64_t> declared = meshes[0].getShape();
  mesh.assign(declared.begin(), declared.end());
  if (!requested.empty() && requested != mesh)
    return usage("the mesh " + formatShape(requested) +
                 " from the command line does not match @" +
                 meshes[0].getSymName() + " of shape " + formatShape(mesh) +
                 " in " + inputFile);
  return 0;
}

int Runner::searchPlan() {
  mlir::sbp::SbpAutoParallelPassOptions options;
  options.cluster = clusterFlag.empty() ? "cpu-local" : clusterFlag.getValue();
  // The mesh of the command line or the module; a module without either
  // gets the cluster's.
  if (meshGiven)
    options.mesh = joinMesh(mesh);
  // Without --pipeline-stages the search may choose a pipeline, which
  // runs on the host backend; for a training step, whose every candidate
  // stage is three searches, only when asked for (docs/pipeline.md).
  options.pipelineStages = stagesFlag ? stagesFlag.getValue()
                           : backendFlag == "cpu" && !emulateGpuFlag &&
                                   saveFlag.empty() && !trainFlag &&
                                   !checkGradientsFlag
                               ? 0
                               : 1;
  options.microBatches = microBatchesFlag;
  if (!scheduleFlag.empty())
    options.schedule = scheduleFlag;
  if (stagesFlag) {
    std::vector<int64_t> pipelineMesh;
    if (int status = getPipelineMesh(stagesFlag, pipelineMesh))
      return status;
    options.mesh = joinMesh(pipelineMesh);
  }
  // The search may replace the function (a training step that recomputes
  // activations): look it up again by name afterwards.
  std::string entryName = entry.getSymName().str();
  PassManager pm(&context);
  pm.addPass(mlir::sbp::createSbpAutoParallelPass(options));
  if (failed(pm.run(*module)))
    return usage("--auto: no plan for " + inputFile +
                 " (see the errors above)");
  if ((*module)->hasAttr(mlir::sbp::SbpDialect::getPipelineAttrName()))
    return 0;
  for (auto meshOp : module->getOps<mlir::sbp::MeshOp>())
    mesh.assign(meshOp.getShape().begin(), meshOp.getShape().end());
  entry = module->lookupSymbol<func::FuncOp>(entryName);
  return 0;
}

int Runner::checkPipelineFlags() {
  if (stagesFlag < 0 || microBatchesFlag < 0)
    return usage(
        std::string(stagesFlag < 0 ? "--pipeline-stages" : "--micro-batches") +
        " must be positive");
  if (!scheduleFlag.empty() && !::sbp::runtime::parseSchedule(scheduleFlag))
    return usage("--schedule " + scheduleFlag + ": expected 1f1b or gpipe");
  bool pipelineFlags = microBatchesFlag || !scheduleFlag.empty();
  if (pipelineFlags && !stagesFlag && !autoFlag)
    return usage(
        std::string(microBatchesFlag ? "--micro-batches" : "--schedule") +
        " describes a pipeline: it needs --pipeline-stages or "
        "--auto");
  if (stagesFlag &&
      (backendFlag != "cpu" || emulateGpuFlag || !saveFlag.empty()))
    return usage("--pipeline-stages: pipelines run on --backend cpu, without "
                 "--save-program or --emulate-gpu, in this sbp-run");
  return 0;
}

int Runner::checkTrainFlags() {
  if (checkGradientsFlag) {
    if (trainFlag || optimizerFlag.getNumOccurrences() ||
        lrFlag.getNumOccurrences() || stepsFlag.getNumOccurrences())
      return usage("--check-gradients runs its own steps; it takes no "
                   "--train, --steps, --optimizer or --lr");
    if (referenceFlag || benchFlag || !saveFlag.empty() || !outputDir.empty())
      return usage("--check-gradients prints its own comparison; it takes "
                   "no --reference, --bench, --save-program or --output-dir");
  }
  if (checkGradientsFlag &&
      (paramsFlag.getNumOccurrences() || frozenFlag.getNumOccurrences()))
    return usage("--check-gradients checks every float argument; it takes "
                 "no --params or --frozen");
  if (!trainFlag && !checkGradientsFlag) {
    for (cl::Option *flag : std::initializer_list<cl::Option *>{
             &stepsFlag, &optimizerFlag, &lrFlag, &lossFlag,
             static_cast<cl::Option *>(std::addressof(paramsFlag)),
             static_cast<cl::Option *>(std::addressof(frozenFlag)),
             &listParamsFlag})
      if (flag->getNumOccurrences())
        return usage("--" + flag->ArgStr.str() + " needs --train");
    return 0;
  }
  if (stepsFlag < 1)
    return usage("--steps must be positive");
  if (optimizerFlag != "sgd" && optimizerFlag != "adamw")
    return usage("--optimizer " + optimizerFlag + ": expected sgd or adamw");
  if (!(lrFlag > 0))
    return usage("--lr must be positive");
  if (lossFlag != "auto" && lossFlag != "result" && lossFlag != "mse" &&
      lossFlag != "cross-entropy")
    return usage("--loss " + lossFlag +
                 ": expected auto, result, mse or cross-entropy");
  if (stagesFlag && checkGradientsFlag)
    return usage("--pipeline-stages with --check-gradients: gradients are "
                 "checked without stages");
  return 0;
}

int Runner::makeTrainStep() {
  // ONNX weights are the parameters; other programs' parameters are found
  // by the pass.
  unsigned numArgs = entry.getNumArguments();
  mlir::sbp::SbpMakeTrainStepPassOptions options;
  options.function = entry.getSymName().str();
  options.loss = lossFlag;
  options.optimizer = checkGradientsFlag ? "sgd" : optimizerFlag.getValue();
  options.lr = checkGradientsFlag ? kGradientRate : lrFlag.getValue();
  if (checkGradientsFlag)
    options.weightDecay = 0;
  // --check-gradients checks the gradient of every float argument.
  std::vector<int64_t> params;
  auto isFloat = [&](unsigned i) {
    return isa<FloatType>(getElementTypeOrSelf(entry.getArgument(i).getType()));
  };
  if (checkGradientsFlag) {
    for (unsigned i = 0; i < numArgs; ++i)
      if (isFloat(i))
        params.push_back(i);
  } else if (!paramsFlag.empty()) {
    for (const std::string &name : paramsFlag) {
      std::optional<unsigned> index = mlir::sbp::findArgument(entry, name);
      if (!index)
        return usage(noArgument("--params " + name, name));
      if (!isFloat(*index))
        return usage("--params " + name + ": not a float argument");
      if (!llvm::is_contained(params, int64_t(*index)))
        params.push_back(*index);
    }
  } else {
    for (const mlir::sbp::OnnxWeight &weight : weights)
      if (weight.trainable && isFloat(weight.argument))
        params.push_back(weight.argument);
  }
  // --frozen names an argument or, for an ONNX model, the framework's name.
  for (const std::string &name : frozenFlag) {
    std::optional<unsigned> index = mlir::sbp::findArgument(entry, name);
    for (const mlir::sbp::OnnxWeight &weight : weights)
      if (!index && weight.trainable && weight.parameter == name)
        index = weight.argument;
    if (!index)
      return usage(noArgument("--frozen " + name, name));
    auto found = llvm::find(params, int64_t(*index));
    if (found == params.end())
      return usage("--frozen " + name + ": not a parameter" +
                   (params.empty() ? " (this program's parameters are found "
                                     "by the training step: give --params)"
                                   : ""));
    params.erase(found);
  }
  llvm::sort(params);
  for (int64_t index : params)
    options.params.push_back(std::to_string(index));
  PassManager pm(&context);
  pm.addPass(mlir::sbp::createSbpMakeTrainStepPass(options));
  if (failed(pm.run(*module)))
    return usage("--train: cannot make a training step of " + inputFile +
                 " (see the errors above)");
  for (auto func : module->getOps<func::FuncOp>())
    if (auto step = func->getAttrOfType<DictionaryAttr>(
            mlir::sbp::SbpDialect::getTrainStepAttrName())) {
      entry = func;
      numParams = cast<IntegerAttr>(step.get("params")).getInt();
      numCarried = numParams + cast<IntegerAttr>(step.get("state")).getInt();
    }
  for (int64_t i = 0; i < numParams; ++i) {
    auto name = entry.getArgAttrOfType<StringAttr>(i, "onnx.name");
    if (!name)
      name = entry.getArgAttrOfType<StringAttr>(
          i, mlir::sbp::SbpDialect::getNameAttrName());
    paramNames.push_back(name ? name.str() : "param" + std::to_string(i));
  }
  if (listParamsFlag)
    listParameters(params);
  // The step's arguments: parameters (in `params` order), state, then the
  // others in their order.
  std::vector<int64_t> renumbered(numArgs, -1);
  int64_t next = numCarried;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto param = llvm::find(params, int64_t(i));
    renumbered[i] = param != params.end() ? param - params.begin() : next++;
  }
  for (mlir::sbp::OnnxWeight &weight : weights)
    weight.argument = renumbered[weight.argument];
  return 0;
}

void Runner::listParameters(ArrayRef<int64_t> params) {
  // `params` numbers the arguments before the step renumbered them.
  for (int64_t i = 0; i < numParams; ++i) {
    std::string name = paramNames[i];
    for (const mlir::sbp::OnnxWeight &weight : weights)
      if (weight.argument == params[i] && weight.trainable)
        name = weight.parameter;
    llvm::outs() << "param " << name << " " << entry.getArgument(i).getType()
                 << "\n";
  }
  for (const mlir::sbp::OnnxWeight &weight : weights)
    if (!llvm::is_contained(params, int64_t(weight.argument)))
      llvm::outs() << "constant " << weight.name << ": "
                   << (weight.trainable ? "--frozen" : weight.parameter)
                   << "\n";
}

int Runner::getPipelineMesh(int64_t stages,
                            std::vector<int64_t> &pipelineMesh) {
  int64_t ranks = 1;
  for (int64_t size : mesh)
    ranks *= size;
  // One stage (gradient accumulation) runs on the whole mesh.
  if (stages == 1 && mesh.size() > 1 && mesh[0] != 1) {
    pipelineMesh = {1};
    pipelineMesh.insert(pipelineMesh.end(), mesh.begin(), mesh.end());
    return 0;
  }
  if (mesh.size() > 1) {
    if (mesh[0] != stages)
      return usage("--pipeline-stages " + std::to_string(stages) +
                   ": the first axis of the mesh " + formatShape(mesh) +
                   " numbers the stages, so it must be " +
                   std::to_string(stages));
    pipelineMesh = mesh;
    return 0;
  }
  if (ranks % stages)
    return usage("--pipeline-stages " + std::to_string(stages) + ": " +
                 std::to_string(ranks) + " ranks do not divide into " +
                 std::to_string(stages) + " equal stages");
  pipelineMesh = {stages};
  if (ranks > stages)
    pipelineMesh.push_back(ranks / stages);
  return 0;
}

int Runner::splitStages() {
  mlir::sbp::SbpSplitStagesPassOptions options;
  options.function = entry.getSymName().str();
  options.stages = stagesFlag;
  options.microBatches = microBatchesFlag ? microBatchesFlag.getValue() : 1;
  std::vector<int64_t> pipelineMesh;
  if (int status = getPipelineMesh(stagesFlag, pipelineMesh))
    return status;
  options.mesh = joinMesh(pipelineMesh);
  if (!scheduleFlag.empty())
    options.schedule = scheduleFlag;
  PassManager pm(&context);
  pm.addPass(mlir::sbp::createSbpSplitStagesPass(options));
  if (failed(pm.run(*module)))
    return usage("--pipeline-stages: cannot cut " + inputFile +
                 " into stages (see the errors above)");
  return 0;
}

int Runner::findEntry() {
  if (!entryFlag.empty()) {
    entry = module->lookupSymbol<func::FuncOp>(entryFlag);
    if (!entry || entry.isExternal())
      return usage("no function @" + entryFlag + " in " + inputFile);
    return 0;
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.size() == 1) {
    entry = candidates[0];
    return 0;
  }
  for (func::FuncOp func : candidates)
    if (func.getSymName() == "main") {
      entry = func;
      return 0;
    }
  return usage(inputFile + " has " + std::to_string(candidates.size()) +
               " public functions; choose one with --entry");
}

std::string Runner::noArgument(StringRef flag, StringRef name) {
  return (flag + ": @" + entry.getSymName() + " has no argument " + name +
          " (argN, N or an argument's onnx.name or sbp.name; " +
          Twine(entry.getNumArguments()) + " arguments)")
      .str();
}

int Runner::prepareInputs(const std::vector<TensorSpec> &args) {
  inputs.assign(args.size(), NpyArray());
  std::vector<bool> given(args.size(), false);
  for (const std::string &flag : inputFlags) {
    auto [name, path] = StringRef(flag).rsplit('=');
    if (path.empty())
      return usage("--input " + flag +
                   ": expected NAME=FILE.npy with NAME "
                   "argN, N or the name of an ONNX input");
    std::optional<unsigned> found = mlir::sbp::findArgument(entry, name);
    if (!found)
      return usage(noArgument("--input " + flag, name));
    unsigned index = *found;
    std::string error;
    if (auto read = readInputs.find(flag); read != readInputs.end()) {
      inputs[index] = std::move(read->second);
      readInputs.erase(read);
    } else if (!::sbp::runtime::readNpy(path.str(), inputs[index], error))
      return usage(error);
    const TensorSpec &spec = args[index];
    // NumPy has no bfloat16: a bf16 argument reads f32, rounded.
    if (spec.dtype == SBP_BF16 && inputs[index].dtype == SBP_F32)
      inputs[index] = ::sbp::runtime::convertFloats(inputs[index], SBP_BF16);
    if (inputs[index].dtype != spec.dtype)
      return usage(path + ": holds " + dtypeName(inputs[index].dtype) +
                   " but " + spec.name + " of @" + entry.getSymName() + " is " +
                   spec.typeName);
    bool matches = inputs[index].shape.size() == spec.localShape.size();
    for (size_t d = 0; matches && d < spec.localShape.size(); ++d)
      matches = spec.localShape[d] < 0 ||
                spec.localShape[d] == inputs[index].shape[d];
    if (!matches)
      return usage(path + ": has shape " + formatShape(inputs[index].shape) +
                   " but " + spec.name + " of @" + entry.getSymName() + " is " +
                   spec.typeName);
    given[index] = true;
  }
  for (const mlir::sbp::OnnxWeight &weight : weights) {
    if (weight.argument >= args.size() || given[weight.argument])
      continue;
    NpyArray &array = inputs[weight.argument];
    array.dtype = args[weight.argument].dtype;
    array.shape = args[weight.argument].localShape;
    array.data.assign(weight.bytes.begin(), weight.bytes.end());
    given[weight.argument] = true;
  }
  std::mt19937_64 rng(seedFlag);
  for (size_t i = 0; i < args.size(); ++i) {
    if (given[i])
      continue;
    for (int64_t size : args[i].localShape)
      if (size < 0)
        return usage(args[i].name + " of @" + entry.getSymName() +
                     " has a dynamic shape; give it with --input");
    inputs[i] = randomArray(args[i], args[i].localShape, rng);
    if (int64_t(i) >= numCarried)
      continue;
    // Training starts from zero optimizer state and from parameters
    // scaled by their fan-in: all dimensions but the last (a matmul's [in,
    // out] weight: in; a convolution's [h, w, in, out] kernel: h * w * in);
    // those that must be positive stay as they are.
    const std::vector<int64_t> &shape = args[i].localShape;
    double fanIn = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      fanIn *= double(shape[d]);
    double scale = int64_t(i) >= numParams ? 0
                   : args[i].positive      ? 1
                   : shape.size() >= 2     ? 1 / std::sqrt(fanIn)
                                           : 0.1;
    int64_t n = inputs[i].numElements();
    for (int64_t k = 0; k < n; ++k)
      if (inputs[i].dtype == SBP_F64)
        reinterpret_cast<double *>(inputs[i].data.data())[k] *= scale;
      else
        reinterpret_cast<float *>(inputs[i].data.data())[k] *= scale;
  }
  return 0;
}

int Runner::compare(const std::vector<NpyArray> &results,
                    const std::vector<NpyArray> &expected) {
  Comparison comparison = compareResults(results, expected);
  if (!comparison.shapeError.empty()) {
    llvm::outs() << comparison.shapeError << "\n";
    return 1;
  }
  // NaNs in the same places compare equal, so a NaN reference checks
  // nothing there: say so.
  if (comparison.nans)
    llvm::errs() << "sbp-run: warning: " << comparison.nans
                 << " elements of the reference are NaN; only their places "
                    "are compared\n";
  llvm::outs() << "max_abs_err=" << llvm::format("%.6g", comparison.maxAbs)
               << " max_rel_err=" << llvm::format("%.6g", comparison.maxRel)
               << "\n";
  // Ranks add partial sums in another order than one rank: the
  // difference grows with the roundoff of the least precise float type
  // the program computes in.
  double roundoff = 0;
  module->walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      Type element = getElementTypeOrSelf(type);
      if (element.isBF16() || element.isF16())
        roundoff = std::max(roundoff, element.isBF16() ? 0x1p-8 : 0x1p-11);
    }
  });
  double tol = tolFlag >= 0        ? tolFlag.getValue()
               : roundoff > 0      ? 4 * roundoff
               : comparison.hasF64 ? 1e-10
                                   : 1e-4;
  if (!(comparison.maxRel <= tol)) {
    llvm::outs() << "mismatch: max_rel_err above --tol " << tol << "\n";
    return 1;
  }
  return 0;
}

int Runner::run() {
  registerDialects();
  if (!calibrateFlag.empty()) {
    if (!inputFile.empty())
      return usage("--calibrate measures the host and runs no program; drop " +
                   inputFile);
    if (commFlag != "threads" && commFlag != "mpi")
      return usage("--calibrate measures the threads or the mpi backend, not "
                   "--comm " +
                   commFlag);
    if (ranksFlag < 0 || ranksFlag == 1)
      return usage("--calibrate needs --ranks of at least 2 for the "
                   "collectives");
    return calibrate(context, calibrateFlag, blasFlag, commFlag == "mpi",
                     ranksFlag ? ranksFlag.getValue() : 2, llvm::outs());
  }
  if (inputFile.empty())
    return usage("no program given; usage: sbp-run FILE [flags], see --help");
  if (!clusterFlag.empty() && !autoFlag)
    return usage("--cluster " + clusterFlag + " needs --auto");
  if (backendFlag != "cpu" && backendFlag != "cuda")
    return usage("--backend " + backendFlag + ": expected cpu or cuda");
  if (commFlag != "threads" && commFlag != "mpi" && commFlag != "nccl")
    return usage("--comm " + commFlag + ": expected threads, mpi or nccl");
  if (commFlag == "nccl" && backendFlag != "cuda")
    return usage("--comm nccl needs --backend cuda");
  if (emulateGpuFlag && backendFlag != "cpu")
    return usage("--emulate-gpu runs on --backend cpu");
  if (int status = checkTrainFlags())
    return status;
  if (int status = checkPipelineFlags())
    return status;
  if (backendFlag == "cuda" && saveFlag.empty()) {
#ifdef SBP_HAVE_CUDA
    // The driver is loaded here, not linked: say plainly when there is none.
    const char *problem = nullptr;
    if (sbp_cuda_init(&problem))
      return usage(std::string("--backend cuda: ") + problem);
#else
    return usage("--backend cuda: this sbp-run was built without the CUDA "
                 "toolkit");
#endif
  }
  if (plainReferenceFlag && !referenceFlag)
    return usage("--plain-reference lowers the reference of --reference, "
                 "which is not given");
  if (benchFlag < 0)
    return usage("--bench must not be negative");
  if (!(timeoutFlag > 0))
    return usage("--timeout must be positive");
  timingManager.setEnabled(timingFlag);
  timing = timingManager.getRootScope();
  cache = CompileCache::open(cacheFlag);
  TimingScope importing = timing.nest("import");
  if (int status = load())
    return status;
  importing.stop();
  if ((*module)->hasAttr(mlir::sbp::SbpDialect::getPipelineAttrName()))
    return usage(inputFile + " is already cut into pipeline stages; give "
                             "sbp-run the logical program and "
                             "--pipeline-stages");
  if (int status = resolveMesh())
    return status;
  if (int status = findEntry())
    return status;
  if (trainFlag || checkGradientsFlag) {
    if (isPartitioned(*module))
      return usage("--train needs the logical program; " + inputFile +
                   " is already partitioned");
    TimingScope building = timing.nest("training step");
    if (int status = makeTrainStep())
      return status;
  }
  std::string entryName = entry.getSymName().str();

  bool partitioned = isPartitioned(*module);
  if (partitioned && stagesFlag)
    return usage("--pipeline-stages needs the logical program; " + inputFile +
                 " is already partitioned");
  if (referenceFlag && partitioned)
    return usage("--reference needs the logical program; " + inputFile +
                 " is already partitioned");
  OwningOpRef<ModuleOp> logical = module->clone();
  // The reference's compilation may still use the logical module.
  llvm::scope_exit waitForReference([&] {
    if (referenceProgram.valid())
      referenceProgram.wait();
  });
  if (autoFlag) {
    if (partitioned)
      return usage("--auto needs the logical program; " + inputFile +
                   " is already partitioned");
    TimingScope searching = timing.nest("search");
    if (int status = searchPlan())
      return status;
  } else if (stagesFlag) {
    if (int status = splitStages())
      return status;
  }

  // The inputs are global tensors: the logical program's arguments, or the
  // partitioned program's local ones scaled up by their layouts.
  // A pipeline replaced the entry function by its stages' programs: its
  // arguments are the logical function's.
  bool pipelined =
      (*module)->hasAttr(mlir::sbp::SbpDialect::getPipelineAttrName());
  if (pipelined)
    entry = logical->lookupSymbol<func::FuncOp>(entryName);
  std::vector<TensorSpec> args, results;
  if (auto error = describeEntry(entry, mesh, args, results))
    return usage("@" + entryName + ": " + *error);
  std::vector<TensorSpec> globalArgs = args;
  if (partitioned)
    for (TensorSpec &spec : globalArgs)
      for (size_t a = 0; a < mesh.size(); ++a)
        if (spec.layout.entries[a].kind == ::sbp::runtime::LayoutEntry::Split &&
            spec.localShape[spec.layout.entries[a].dim] >= 0)
          spec.localShape[spec.layout.entries[a].dim] *= mesh[a];
  if (int status = prepareInputs(globalArgs))
    return status;
  std::vector<TensorSpec> logicalResults = results;
  if (pipelined)
    return runPipeline(*logical, entryName, globalArgs, logicalResults);

  if (!partitioned) {
    TimingScope partitioning = timing.nest("partitioning");
    PassManager pm(&context);
    pm.enableTiming(partitioning);
    mlir::sbp::buildParallelizePipeline(pm);
    if (failed(pm.run(*module)))
      return usage("cannot partition " + inputFile + " (see the errors above)");
    entry = module->lookupSymbol<func::FuncOp>(entryName);
    if (auto error = describeEntry(entry, mesh, args, results))
      return usage("@" + entryName + ": " + *error);
  }

  // NCCL runs one GPU per rank: processes under mpirun, else threads.
  bool underMpirun = isUnderMpiLauncher();
#ifdef SBP_HAVE_CUDA
  int64_t ranks = 1;
  for (int64_t size : mesh)
    ranks *= size;
  if (commFlag == "nccl" && saveFlag.empty() && !underMpirun &&
      ranks > sbp_cuda_device_count())
    return usage(
        "--comm nccl needs one GPU per rank: " + std::to_string(ranks) +
        " ranks, " + std::to_string(sbp_cuda_device_count()) +
        " GPUs (--comm threads runs the ranks on fewer GPUs)");
#endif

  std::string error;
  Backend backend = backendFlag == "cuda" ? Backend::Cuda
                    : emulateGpuFlag      ? Backend::EmulatedCuda
                                          : Backend::Cpu;
  if (referenceFlag)
    startReference(*logical, entryName);
  TimingScope compiling = timing.nest("compile");
  auto program = CompiledProgram::compile(*module, entryName, backend, true,
                                          blasFlag, error, optionalPtr(cache),
                                          compiling);
  if (!program)
    return usage(inputFile + ": " + error);
  compiling.stop();
  // The search lays each updated value out as its argument.
  for (int64_t i = 0; i < numCarried; ++i)
    if (args[i].layout.entries != results[i].layout.entries)
      return usage("--train: result #" + std::to_string(i) + " of @" +
                   entryName + " is not laid out as argument #" +
                   std::to_string(i) + ", which it updates");
  if (!saveFlag.empty())
    return save(*program, *logical, entryName, backend, args, results,
                globalArgs, logicalResults);

  ExecutionOptions options;
  options.mesh = mesh;
  options.timeoutSeconds = timeoutFlag;
  options.benchIterations = benchFlag;
  options.trace = !traceFlag.empty();
  options.useMpi = commFlag == "mpi" || (commFlag == "nccl" && underMpirun);
  options.useNccl = commFlag == "nccl";
  if (trainFlag || checkGradientsFlag) {
    options.trainSteps = stepsFlag;
    options.carried = numCarried;
  }
  if (checkGradientsFlag)
    return checkGradients(*program, args, results, options);
  Execution execution(*program, args, results, options);
  std::vector<NpyArray> outputs;
  TimingScope running = timing.nest("run");
  if (!execution.run(inputs, outputs, error)) {
    llvm::errs() << "sbp-run: " << error << "\n";
    return execution.isUsageError() ? 2 : 3;
  }
  running.stop();
  return finish(execution, outputs, mesh, entryName, backend, *logical,
                globalArgs, logicalResults);
}

int Runner::checkGradients(const EntryPoint &program,
                           const std::vector<TensorSpec> &args,
                           const std::vector<TensorSpec> &results,
                           ExecutionOptions options) {
  options.trainSteps = 1;
  options.carried = numCarried;
  bool reporting = true;
  auto step = [&](const std::vector<NpyArray> &in, std::vector<NpyArray> &out,
                  double &loss) {
    Execution execution(program, args, results, options);
    std::string error;
    if (!execution.run(in, out, error)) {
      llvm::errs() << "sbp-run: " << error << "\n";
      return execution.isUsageError() ? 2 : 3;
    }
    reporting = execution.isReportingRank();
    loss = execution.getLosses().empty() ? 0 : execution.getLosses()[0];
    return 0;
  };
  auto element = [](NpyArray &array, int64_t k) -> double {
    return array.dtype == SBP_F64
               ? reinterpret_cast<double *>(array.data.data())[k]
               : reinterpret_cast<float *>(array.data.data())[k];
  };
  auto setElement = [](NpyArray &array, int64_t k, double value) {
    if (array.dtype == SBP_F64)
      reinterpret_cast<double *>(array.data.data())[k] = value;
    else
      reinterpret_cast<float *>(array.data.data())[k] = value;
  };
  std::vector<NpyArray> updated;
  double loss;
  if (int status = step(inputs, updated, loss))
    return status;
  if (!std::isfinite(loss)) {
    // No difference of it says anything of the gradient.
    if (reporting)
      llvm::errs() << "sbp-run: --check-gradients: the loss is "
                   << llvm::format("%g", loss)
                   << " at these inputs; give inputs inside the program's "
                      "domain with --input\n";
    return 2;
  }
  // f64's step and tolerance where the parameters and the loss are f64
  // (an f64 parameter cast to an f32 loss has f32's rounding).
  bool f64 = numParams && !results.empty() && results.back().dtype == SBP_F64 &&
             llvm::all_of(llvm::seq<int64_t>(0, numParams), [&](int64_t i) {
               return inputs[i].dtype == SBP_F64;
             });
  double tol = tolFlag >= 0 ? tolFlag.getValue() : f64 ? 1e-6 : 2e-2;
  double roundoff = std::ldexp(1.0, f64 ? -53 : -24);
  /// The loss with parameter `i` moved by `shift` times `direction`.
  auto lossAt = [&](int64_t i, ArrayRef<double> direction, double shift,
                    double &value) {
    std::vector<NpyArray> shifted = inputs, ignored;
    for (int64_t k = 0, e = direction.size(); k < e; ++k)
      setElement(shifted[i], k, element(inputs[i], k) + shift * direction[k]);
    return step(shifted, ignored, value);
  };
  /// One estimate of the derivative along a direction, and what rounding
  /// the loss (once, to its type) alone makes of it.
  struct Estimate {
    double value = 0, floor = 0;
  };
  auto estimate = [&](int64_t i, ArrayRef<double> direction, double epsilon,
                      Estimate &result) {
    // The central difference; for f32, whose step must be large enough to
    // rise above the loss's rounding, combined with the one at half the
    // step (Richardson) to cancel their common epsilon^2 error, which is
    // not small there (a product of many factors). f64's step leaves that
    // error far below its rounding, which the combination would triple.
    int sides = f64 ? 2 : 4;
    double moved[4], largest = std::abs(loss);
    for (int side = 0; side < sides; ++side) {
      double shift = (side % 2 ? -epsilon : epsilon) / (side < 2 ? 1 : 2);
      if (int status = lossAt(i, direction, shift, moved[side]))
        return status;
      largest = std::max(largest, std::abs(moved[side]));
    }
    result.value = (moved[0] - moved[1]) / (2 * epsilon);
    if (!f64)
      result.value = (4 * (moved[2] - moved[3]) / epsilon - result.value) / 3;
    result.floor = 4 * roundoff * largest / epsilon;
    return 0;
  };
  /// The bound on what the loss's noise makes of `estimate`'s value at
  /// `epsilon`, measured (after Moré and Wild, "Estimating computational
  /// noise", 2011): the loss at 17 points epsilon apart along the
  /// direction, around the parameters, whose fourth differences are noise
  /// alone where the loss is smooth at that scale. Points closer together
  /// would miss rounding that changes only over the step (a long sum's,
  /// whose partial sums move by less than their last place between
  /// nearby points). Their typical square, times (4!)^2/8!, is the
  /// noise's variance; the estimate adds 2 (f64) or 4 (f32) noisy values over
  /// the step, which the bound takes at four standard deviations.
  auto measureNoise = [&](int64_t i, ArrayRef<double> direction, double epsilon,
                          double &bound) {
    constexpr int kPoints = 17, kOrder = 4;
    double values[kPoints];
    for (int j = 0; j < kPoints; ++j) {
      double shift = (j - kPoints / 2) * epsilon;
      if (shift == 0)
        values[j] = loss;
      else if (int status = lossAt(i, direction, shift, values[j]))
        return status;
    }
    for (int order = 0; order < kOrder; ++order)
      for (int j = 0; j + order + 1 < kPoints; ++j)
        values[j] = values[j + 1] - values[j];
    // The median square, not the mean: a kink (an isolated jump of the
    // slope) makes the few differences whose points straddle it large,
    // and is no noise; 0.455 is the median of a squared standard normal.
    double squares[kPoints - kOrder];
    for (int j = 0; j < kPoints - kOrder; ++j)
      squares[j] = values[j] * values[j];
    std::nth_element(squares, squares + (kPoints - kOrder) / 2,
                     squares + kPoints - kOrder);
    double sigma =
        std::sqrt(squares[(kPoints - kOrder) / 2] / 0.455 * 576 / 40320);
    // The central difference's noise: sqrt(2) sigma / (2 epsilon); with
    // Richardson's combination, sqrt(32 + 1/2) sigma / (3 epsilon).
    bound = 4 * sigma / epsilon * (f64 ? std::sqrt(0.5) : 1.9);
    return 0;
  };
  auto relativeError = [](double estimated, double computed) {
    // A NaN or infinite gradient is wrong, however the others compare
    // (std::max would drop a NaN).
    if (!std::isfinite(estimated) || !std::isfinite(computed))
      return double(INFINITY);
    double scale = std::max(std::abs(estimated), std::abs(computed));
    return scale > 0 ? std::abs(estimated - computed) / scale : 0;
  };
  // The first step is the most accurate where the loss is smooth. A step
  // that crosses a kink of the loss (a max, a ReLU or an absolute value
  // near a tie or a zero: max pooling in f32 crosses one almost surely)
  // measures the slopes on both of its sides; the smaller steps are tried
  // where the first disagrees, and one of them counts only if it agrees
  // within --tol (not merely within its larger rounding).
  SmallVector<double> steps = f64 ? SmallVector<double>{1e-6, 1e-8}
                                  : SmallVector<double>{1e-2, 1e-3, 1e-4};
  double worst = 0;
  std::mt19937_64 rng(seedFlag + 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < numParams; ++i) {
    // The update is the gradient times kGradientRate; the derivative along
    // v is <gradient, v>.
    int64_t n = inputs[i].numElements();
    std::vector<double> direction(n);
    double computed = 0;
    for (int64_t k = 0; k < n; ++k) {
      direction[k] = uniform(rng);
      computed += (element(inputs[i], k) - element(updated[i], k)) /
                  kGradientRate * direction[k];
    }
    Estimate first;
    if (int status = estimate(i, direction, steps.front(), first))
      return status;
    double error = relativeError(first.value, computed);
    double difference = std::abs(first.value - computed);
    // A difference within the loss's rounding is no evidence of a wrong
    // gradient.
    bool rounding = error > tol && difference <= first.floor;
    double estimated = first.value, usedStep = steps.front();
    for (double epsilon : ArrayRef(steps).drop_front()) {
      if (error <= tol || rounding)
        break;
      Estimate smaller;
      if (int status = estimate(i, direction, epsilon, smaller))
        return status;
      double smallerError = relativeError(smaller.value, computed);
      if (smallerError <= tol) {
        estimated = smaller.value;
        usedStep = epsilon;
        error = smallerError;
      }
    }
    // A loss summed from many terms rounds by more than a few units of its
    // last place: where no step agrees, the first step's difference is
    // weighed against the loss's noise, measured.
    if (error > tol && !rounding) {
      double measured;
      if (int status = measureNoise(i, direction, steps.front(), measured))
        return status;
      first.floor = std::max(first.floor, measured);
      rounding = difference <= first.floor;
    }
    if (!rounding)
      worst = std::max(worst, error);
    if (reporting) {
      llvm::outs() << "gradient " << paramNames[i]
                   << ": finite_difference=" << llvm::format("%.9g", estimated)
                   << " computed=" << llvm::format("%.9g", computed)
                   << " rel_err=" << llvm::format("%.3g", error);
      if (rounding)
        llvm::outs() << " (the difference, " << llvm::format("%.3g", difference)
                     << ", is within the loss's rounding, "
                     << llvm::format("%.3g", first.floor) << ")";
      if (usedStep != steps.front())
        llvm::outs() << " (at step " << llvm::format("%g", usedStep)
                     << ": the step " << llvm::format("%g", steps.front())
                     << " crosses a kink or a pole, finite_difference="
                     << llvm::format("%.9g", first.value) << ")";
      llvm::outs() << "\n";
    }
  }
  if (!reporting)
    return 0;
  llvm::outs() << "loss=" << llvm::format("%.9g", loss)
               << " max_rel_err=" << llvm::format("%.3g", worst) << "\n";
  if (!(worst <= tol)) {
    llvm::outs() << "mismatch: max_rel_err above --tol " << tol << "\n";
    return 1;
  }
  return 0;
}

int Runner::finish(const Execution &execution, std::vector<NpyArray> &outputs,
                   const std::vector<int64_t> &ranMesh, StringRef entryName,
                   Backend backend, ModuleOp logical,
                   const std::vector<TensorSpec> &globalArgs,
                   const std::vector<TensorSpec> &logicalResults) {
  if (!execution.isReportingRank())
    return 0;
  std::string error;
  int64_t numRanks = 1;
  for (int64_t size : ranMesh)
    numRanks *= size;
  llvm::outs() << "ran @" << entryName << " on " << numRanks << " rank"
               << (numRanks == 1 ? "" : "s") << " (mesh "
               << formatShape(ranMesh) << ", "
               << (backend == Backend::Cuda ? "cuda, " : "") << commFlag
               << ")\n";
  if (trainFlag) {
    // The results are the trained values: say how many, not each.
    int64_t values = 0;
    for (int64_t r = 0; r < numParams; ++r)
      values += outputs[r].numElements();
    llvm::outs() << "trained " << numParams << " parameters (" << values
                 << " values) and " << numCarried - numParams
                 << " optimizer states, " << optimizerFlag << "\n";
  } else {
    for (size_t r = 0; r < outputs.size(); ++r)
      llvm::outs() << "result" << r << ": " << dtypeName(outputs[r].dtype)
                   << " " << formatShape(outputs[r].shape) << "\n";
  }
  for (auto [step, loss] : llvm::enumerate(execution.getLosses()))
    llvm::outs() << "step=" << step + 1
                 << " loss=" << llvm::format("%.7g", loss) << "\n";
  if (benchFlag)
    llvm::outs() << execution.formatBench();
  if (!traceFlag.empty() && !execution.writeTrace(traceFlag, error))
    return usage(error);
  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return usage("--output-dir " + outputDir + ": " + ec.message());
    for (size_t r = 0; r < outputs.size(); ++r) {
      llvm::SmallString<128> path(outputDir);
      llvm::sys::path::append(path, "result" + std::to_string(r) + ".npy");
      if (!::sbp::runtime::writeNpy(path.str().str(), outputs[r], error))
        return usage(error);
    }
  }

  if (!referenceFlag)
    return 0;
  std::vector<NpyArray> expected;
  std::vector<double> expectedLosses;
  if (int status = runReference(logical, entryName, globalArgs, logicalResults,
                                expected, &expectedLosses))
    return status;
  if (trainFlag) {
    // The loss curves are compared step by step, as one more result in
    // the loss's type.
    outputs.push_back(
        makeLossCurve(execution.getLosses(), outputs.back().dtype));
    expected.push_back(makeLossCurve(expectedLosses, outputs.back().dtype));
  }
  return compare(outputs, expected);
}

int Runner::runPipeline(ModuleOp logical, StringRef entryName,
                        const std::vector<TensorSpec> &globalArgs,
                        const std::vector<TensorSpec> &logicalResults) {
  TimingScope partitioning = timing.nest("partitioning");
  PassManager pm(&context);
  pm.enableTiming(partitioning);
  mlir::sbp::buildParallelizePipeline(pm);
  if (failed(pm.run(*module)))
    return usage("cannot partition the stages of " + inputFile +
                 " (see the errors above)");
  partitioning.stop();
  // Stage k runs on the devices at position k along the first axis of the
  // pipeline's mesh, the rest of it being the stage's sub-mesh.
  auto description = (*module)->getAttrOfType<DictionaryAttr>(
      mlir::sbp::SbpDialect::getPipelineAttrName());
  auto meshOp = module->lookupSymbol<mlir::sbp::MeshOp>(
      description.getAs<FlatSymbolRefAttr>("mesh"));
  std::vector<int64_t> pipelineMesh(meshOp.getShape().begin(),
                                    meshOp.getShape().end());
  std::vector<int64_t> stageMesh(pipelineMesh.begin() + 1, pipelineMesh.end());
  if (stageMesh.empty())
    stageMesh = {1};
  int64_t numStages = pipelineMesh[0];

  Pipeline pipeline;
  std::vector<std::string> names;
  if (auto error = describePipeline(*module, pipelineMesh, pipeline, names))
    return usage(*error);
  std::string error;
  if (referenceFlag)
    startReference(logical, entryName);
  TimingScope compiling = timing.nest("compile");
  auto program = CompiledProgram::compile(*module, names[0], Backend::Cpu, true,
                                          blasFlag, error, optionalPtr(cache),
                                          compiling);
  if (!program)
    return usage(inputFile + ": " + error);
  compiling.stop();
  // Each stage's programs, in the order describePipeline names them.
  std::vector<std::unique_ptr<EntryPoint>> entries;
  std::vector<StageProgram *> programs;
  for (PipelineStage &stage : pipeline.stages) {
    programs.push_back(&stage);
    if (pipeline.training)
      programs.insert(programs.end(), {&stage.backward, &stage.update});
  }
  for (auto [stageProgram, name] : llvm::zip(programs, names)) {
    entries.push_back(program->lookup(name, error));
    if (!entries.back())
      return usage(inputFile + ": " + error);
    stageProgram->entry = entries.back().get();
  }

  ExecutionOptions options;
  options.mesh = pipelineMesh;
  options.timeoutSeconds = timeoutFlag;
  options.benchIterations = benchFlag;
  options.trace = !traceFlag.empty();
  options.useMpi = commFlag == "mpi";
  if (trainFlag)
    options.trainSteps = stepsFlag;
  Execution execution(pipeline, logicalResults, options);
  std::vector<NpyArray> outputs;
  TimingScope running = timing.nest("run");
  if (!execution.run(inputs, outputs, error)) {
    llvm::errs() << "sbp-run: " << error << "\n";
    return execution.isUsageError() ? 2 : 3;
  }
  running.stop();
  if (execution.isReportingRank())
    llvm::outs() << "pipeline: " << numStages
                 << (numStages == 1 ? " stage" : " stages") << " on sub-meshes "
                 << formatShape(stageMesh) << ", " << pipeline.microBatches
                 << " micro-batches, "
                 << ::sbp::runtime::getScheduleName(pipeline.schedule) << "\n";
  return finish(execution, outputs, pipelineMesh, entryName, Backend::Cpu,
                logical, globalArgs, logicalResults);
}

void Runner::startReference(ModuleOp logical, StringRef entryName) {
  // The lowering of the reference runs beside another in this context: the
  // dialects that either loads are loaded now, as no thread may load one
  // while another uses the context.
  DialectRegistry registry;
  PassManager pm(&context);
  mlir::sbp::buildLowerCpuPipeline(pm, {});
  if (backendFlag != "cpu" || emulateGpuFlag)
    mlir::sbp::buildLowerGpuPipeline(pm, {});
  pm.getDependentDialects(registry);
  for (StringRef name : registry.getDialectNames())
    context.getOrLoadDialect(name);
  referenceTiming = timing.nest("reference");
  // Vectorized as the program is, without BLAS: one rank's reference of a
  // large model in plain loops runs for minutes.
  bool optimize = !plainReferenceFlag;
  referenceProgram = std::async(
      std::launch::async, [this, logical, name = entryName.str(), optimize] {
        TimingScope compiling = referenceTiming.nest("compile");
        return CompiledProgram::compile(logical, name, Backend::Cpu, optimize,
                                        false, referenceError,
                                        optionalPtr(cache), compiling);
      });
}

int Runner::runReference(ModuleOp logical, StringRef entryName,
                         const std::vector<TensorSpec> &globalArgs,
                         const std::vector<TensorSpec> &logicalResults,
                         std::vector<NpyArray> &expected,
                         std::vector<double> *losses) {
  if (!referenceProgram.valid())
    startReference(logical, entryName);
  std::unique_ptr<CompiledProgram> reference = referenceProgram.get();
  if (!reference)
    return usage(inputFile + ": reference: " + referenceError);
  std::string error;
  TimingScope running = referenceTiming.nest("run");
  ExecutionOptions one;
  one.mesh = std::vector<int64_t>(mesh.size(), 1);
  one.timeoutSeconds = timeoutFlag;
  if (trainFlag) {
    one.trainSteps = stepsFlag;
    one.carried = numCarried;
  }
  Execution single(*reference, globalArgs, logicalResults, one);
  if (!single.run(inputs, expected, error)) {
    llvm::errs() << "sbp-run: reference: " << error << "\n";
    return 3;
  }
  if (losses)
    *losses = single.getLosses();
  return 0;
}

int Runner::save(const CompiledProgram &program, ModuleOp logical,
                 StringRef entryName, Backend backend,
                 const std::vector<TensorSpec> &args,
                 const std::vector<TensorSpec> &results,
                 const std::vector<TensorSpec> &globalArgs,
                 const std::vector<TensorSpec> &logicalResults) {
  if (std::error_code ec = llvm::sys::fs::create_directories(saveFlag))
    return usage("--save-program " + saveFlag + ": " + ec.message());
  auto inDir = [&](const std::string &name) {
    llvm::SmallString<128> path(saveFlag);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string error;
  if (!program.save(inDir("program.so"), error))
    return usage("--save-program: " + error);
  std::vector<NpyArray> expected;
  std::vector<double> expectedLosses;
  if (referenceFlag) {
    if (int status = runReference(logical, entryName, globalArgs,
                                  logicalResults, expected, &expectedLosses))
      return status;
    if (trainFlag)
      expected.push_back(
          makeLossCurve(expectedLosses, logicalResults.back().dtype));
  }
  Manifest manifest;
  manifest.entry = entryName.str();
  manifest.backend = backend;
  manifest.mesh = mesh;
  manifest.args = args;
  manifest.results = results;
  for (const NpyArray &input : inputs)
    manifest.argShapes.push_back(input.shape);
  manifest.hasExpected = referenceFlag;
  if (trainFlag) {
    manifest.trainSteps = stepsFlag;
    manifest.carried = numCarried;
  }
  if (!writeManifest(inDir("program.json"), manifest, error))
    return usage("--save-program: " + error);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!::sbp::runtime::writeNpy(inDir("arg" + std::to_string(i) + ".npy"),
                                  inputs[i], error))
      return usage("--save-program: " + error);
  for (size_t r = 0; r < expected.size(); ++r)
    if (!::sbp::runtime::writeNpy(
            inDir("expected" + std::to_string(r) + ".npy"), expected[r], error))
      return usage("--save-program: " + error);
  llvm::outs() << "saved @" << entryName << " (mesh " << formatShape(mesh)
               << ", " << (backend == Backend::Cuda ? "cuda" : "cpu") << ") in "
               << saveFlag << "\n";
  return 0;
}

} // namespace

/// Runs this command again as `nproc` processes under MPI's launcher,
/// without --nproc; returns the launcher's exit code.
static int launchProcesses(int argc, char **argv) {
  auto usage = [](const std::string &message) {
    llvm::errs() << "sbp-run: " << message << "\n";
    return 2;
  };
  if (nprocFlag < 1)
    return usage("--nproc must be positive");
  if (commFlag != "mpi" && commFlag != "nccl")
    return usage("--nproc starts one process per rank: it needs --comm mpi "
                 "or --comm nccl");
  if (isUnderMpiLauncher())
    return usage("--nproc: already running under mpirun");
  std::string launcher = SBP_MPIEXEC;
  if (launcher.empty())
    return usage("--nproc needs MPI's launcher (mpiexec), which this sbp-run "
                 "was built without; start the processes with mpirun");
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], &anchor);
  std::vector<std::string> args = {launcher, "-np", std::to_string(nprocFlag),
                                   self};
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--nproc" || arg == "-nproc") {
      ++i;
      continue;
    }
    if (arg.starts_with("--nproc=") || arg.starts_with("-nproc="))
      continue;
    args.push_back(arg.str());
  }
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string error;
  int status =
      llvm::sys::ExecuteAndWait(launcher, refs, std::nullopt, {}, 0, 0, &error);
  if (status < 0)
    return usage("--nproc: cannot run " + launcher + ": " + error);
  return status;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "sbp-run: partition a program for a mesh of ranks, run it and "
          "compare it with one rank\n",
          &llvm::errs()))
    return 2;
  mlir::sbp::ProgressLine::setQuiet(quietFlag);
  if (nprocFlag)
    return launchProcesses(argc, argv);
  Runner runner;
  return runner.run();
}
