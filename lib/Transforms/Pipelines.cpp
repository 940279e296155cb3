//===- Pipelines.cpp - sbp pass pipelines ---------------------------------===//

#include "sbp/Transforms/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "sbp/Transforms/Passes.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::sbp;

static void buildCpuCodegenPipeline(OpPassManager &pm);

/// What both lowerings start with: collectives to runtime calls, layouts
/// stripped, aggregated ops (softmax) and element-wise ops as fused
/// linalg.generic ops.
static void addRankFrontEnd(OpPassManager &pm) {
  pm.addPass(createSbpLowerCollectivesPass());
  pm.addPass(createSbpStripPass());
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createSbpDecomposeAggregatesPass());
  // Before fusion, which would make a product part of a bigger generic.
  funcs.addPass(createSbpUnfoldConvolutionsPass());
  funcs.addPass(createSbpSpecializeContractionsPass());
  funcs.addPass(createConvertElementwiseToLinalgPass());
  funcs.addPass(createSbpFuseElementwisePass());
}

/// One-shot bufferization of whole programs, function boundaries included,
/// with dense (identity-layout) arguments and results: the host passes
/// dense buffers.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // A loop over layers yields a tensor it computed, not its iter arg.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

void sbp::buildParallelizePipeline(OpPassManager &pm) {
  pm.addPass(createSbpPropagatePass());
  pm.addPass(createSbpInsertBoxingPass());
  pm.addPass(createSbpPartitionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSbpInsertTransfersPass());
}

void sbp::buildLowerCpuPipeline(OpPassManager &pm,
                                const LowerCpuOptions &options) {
  addRankFrontEnd(pm);
  if (options.useBlas)
    pm.addPass(createSbpMatmulToBlasPass());
  if (options.vectorize) {
    pm.addPass(createSbpTileAndVectorizePass());
    pm.addPass(createCanonicalizerPass());
  }
  addBufferization(pm);
  // Loops that bufferization left carrying buffers they yield unchanged
  // lose them, so that every nest is a loop without results.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createSbpOutlineLoopNestsPass());
  // Upstream's buffer deallocation pipeline, per function: a function per
  // distinct nest now, in parallel. Its first pass, expand-realloc, is
  // left out: nothing here creates a memref.realloc.
  OpPassManager &deallocation = pm.nest<func::FuncOp>();
  deallocation.addPass(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  deallocation.addPass(createCanonicalizerPass());
  deallocation.addPass(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  OpPassManager &cleanup = pm.nest<func::FuncOp>();
  cleanup.addPass(createCSEPass());
  cleanup.addPass(createCanonicalizerPass());
  // The deallocation pipeline clones buffers it does not own.
  pm.addPass(createConvertBufferizationToMemRefPass());
  buildCpuCodegenPipeline(pm);
}

/// From buffers and loops on the host to the LLVM dialect.
static void buildCpuCodegenPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // A large model is now a function per distinct loop nest: the
  // conversions that add no symbol to the module convert the functions in
  // parallel; those that declare functions (malloc, libm, abort) run on
  // the module.
  OpPassManager &transfers = pm.nest<func::FuncOp>();
  // Masked and n-d transfers become loops of 1-d ones, fully unrolled so
  // that no stack buffer sits in the hot loops.
  transfers.addPass(vector::createLowerVectorMaskPass());
  transfers.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Integer powers (math.ipowi) have no LLVM intrinsic: loops in a helper.
  pm.addPass(createConvertMathToFuncs());
  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createSCFToControlFlowPass());
  loops.addPass(memref::createExpandStridedMetadataPass());
  loops.addPass(createLowerAffinePass());
  // aligned_alloc rather than malloc and five instructions to align its
  // result: a model's glue allocates hundreds of buffers.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLlvm;
  memrefToLlvm.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLlvm));
  pm.addNestedPass<func::FuncOp>(createConvertMathToLLVMPass());
  pm.addPass(createSbpConvertToLibcCallsPass());
  pm.addNestedPass<func::FuncOp>(createSbpConvertBodiesToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

std::string sbp::getCudaToolkit(StringRef toolkit) {
  if (!toolkit.empty())
    return toolkit.str();
  if (!StringRef(SBP_CUDA_TOOLKIT).empty())
    return SBP_CUDA_TOOLKIT;
  if (const char *home = std::getenv("CUDA_HOME"))
    return home;
  return "";
}

std::optional<std::string>
sbp::validateLowerGpuOptions(const LowerGpuOptions &options) {
  StringRef format = options.format;
  if (format != "auto" && format != "bin" && format != "isa" &&
      format != "fatbin")
    return "format=" + format.str() + ": expected auto, bin, isa or fatbin";
  if (options.blockSize < 1 || options.blockSize > 1024)
    return "block-size=" + std::to_string(options.blockSize) +
           ": expected 1 to 1024 threads";
  if (!llvm::Regex("^(\\+ptx[0-9]+)?$").match(options.features))
    return "features=" + options.features +
           ": expected a PTX version such as +ptx80";
  if (!options.toolkit.empty() && !llvm::sys::fs::is_directory(options.toolkit))
    return "toolkit=" + options.toolkit + ": no such directory";
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "this LLVM has no NVPTX target: " + error;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(options.chip))
    return "chip=" + options.chip +
           ": not a GPU that LLVM's NVPTX backend knows (sm_80, sm_90, ...)";
  return std::nullopt;
}

void sbp::buildLowerGpuPipeline(OpPassManager &pm,
                                const LowerGpuOptions &options) {
  addRankFrontEnd(pm);
  if (!options.emulate) {
    pm.addPass(createSbpMatmulToCublasPass(
        SbpMatmulToCublasPassOptions{options.tf32}));
    pm.addPass(createCanonicalizerPass());
  }

  addBufferization(pm);
  // Ownership-based deallocation up to, not including, its lowering, which
  // would read ownership lists in host memory: sbp-gpu-buffers lowers the
  // deallocations onto device buffers.
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(createSbpGpuBuffersPass());
  pm.addPass(
      createSbpLinalgToGpuPass(SbpLinalgToGpuPassOptions{options.blockSize}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.emulate) {
    // Host loops run in program order: nothing to overlap.
    pm.addPass(createSbpEmulateGpuPass());
    buildCpuCodegenPipeline(pm);
    return;
  }

  if (options.overlap)
    pm.addPass(createSbpOverlapCollectivesPass());

  // Kernels: outlined, then NVVM, then PTX or cubin.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // Host code: calls of the runtime and of the mgpu* functions.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  std::string toolkit = getCudaToolkit(options.toolkit);
  std::string format = options.format;
  if (format == "auto") {
    SmallString<128> ptxas(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    format =
        !toolkit.empty() && llvm::sys::fs::can_execute(ptxas) ? "bin" : "isa";
  }
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format;
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createCanonicalizerPass());
}

void sbp::registerSbpPipelines() {
  PassPipelineRegistration<LowerCpuOptions>(
      "sbp-lower-cpu",
      "Lower one rank's program on tensors to the LLVM dialect "
      "(sbp-lower-collectives, sbp-strip, sbp-decompose-aggregates, "
      "element-wise fusion, one-shot-bufferize, deallocation, loops, LLVM)",
      [](OpPassManager &pm, const LowerCpuOptions &options) {
        buildLowerCpuPipeline(pm, options);
      });
  // Registered by hand so that bad options are errors, not a pipeline
  // that fails later or compiles for the wrong chip.
  registerPassPipeline(
      "sbp-lower-gpu",
      "Lower one rank's program on tensors to the LLVM dialect with CUDA "
      "kernels (sbp-lower-collectives, sbp-strip, sbp-decompose-aggregates, "
      "element-wise fusion, "
      "sbp-matmul-to-cublas, one-shot-bufferize, sbp-gpu-buffers, "
      "sbp-linalg-to-gpu, NVVM, gpu-module-to-binary, gpu-to-llvm)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        LowerGpuOptions options;
        std::string parseErrors;
        llvm::raw_string_ostream errors(parseErrors);
        if (failed(options.parseFromString(text, errors)))
          return errorHandler("sbp-lower-gpu: " + parseErrors);
        if (auto problem = validateLowerGpuOptions(options))
          return errorHandler("sbp-lower-gpu: " + *problem);
        buildLowerGpuPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printer) {
        printer(LowerGpuOptions());
      });
  PassPipelineRegistration<>(
      "sbp-parallelize",
      "Propagate layouts, insert boxing and partition into the per-device "
      "program (sbp-propagate, sbp-insert-boxing, sbp-partition, "
      "canonicalize, cse, and sbp-insert-transfers for a pipeline)",
      buildParallelizePipeline);
}
