//===- Pipelines.cpp - sbp pass pipelines ---------------------------------===//

#include "sbp/Transforms/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "sbp/Transforms/Passes.h"

using namespace mlir;

void sbp::buildParallelizePipeline(OpPassManager &pm) {
  pm.addPass(createSbpPropagatePass());
  pm.addPass(createSbpInsertBoxingPass());
  pm.addPass(createSbpPartitionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void sbp::buildLowerCpuPipeline(OpPassManager &pm,
                                const LowerCpuOptions &options) {
  pm.addPass(createSbpLowerCollectivesPass());
  pm.addPass(createSbpStripPass());
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createConvertElementwiseToLinalgPass());
  funcs.addPass(createSbpFuseElementwisePass());
  if (options.useBlas)
    pm.addPass(createSbpMatmulToBlasPass());
  if (options.vectorize) {
    pm.addPass(createSbpTileAndVectorizePass());
    pm.addPass(createCanonicalizerPass());
  }
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  // The deallocation pipeline clones buffers it does not own.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Masked and n-d transfers become loops of 1-d ones, fully unrolled so
  // that no stack buffer sits in the hot loops.
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMaskPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Integer powers (math.ipowi) have no LLVM intrinsic: loops in a helper.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createSbpOutlineLoopNestsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertVectorToLLVMPassOptions vectorToLlvm;
  vectorToLlvm.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLlvm));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void sbp::registerSbpPipelines() {
  PassPipelineRegistration<LowerCpuOptions>(
      "sbp-lower-cpu",
      "Lower one rank's program on tensors to the LLVM dialect "
      "(sbp-lower-collectives, sbp-strip, element-wise fusion, "
      "one-shot-bufferize, deallocation, loops, LLVM)",
      [](OpPassManager &pm, const LowerCpuOptions &options) {
        buildLowerCpuPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "sbp-parallelize",
      "Propagate layouts, insert boxing and partition into the per-device "
      "program (sbp-propagate, sbp-insert-boxing, sbp-partition, "
      "canonicalize, cse)",
      buildParallelizePipeline);
}
