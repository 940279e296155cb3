//===- InitSbp.cpp - Register everything sbp provides ---------------------===//

#include "sbp/InitSbp.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "sbp/Dialect/Sbp/Extensions/Signatures.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Dialect/StableHLO/IR/Stablehlo.h"
#include "sbp/Import/Stablehlo.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Pipelines.h"

void mlir::sbp::registerSbpDialects(DialectRegistry &registry) {
  registry.insert<SbpDialect, stablehlo::StablehloDialect, chlo::ChloDialect,
                  sdy::SdyDialect>();
  registerSignatureExternalModels(registry);
  // The GPU lowering translates kernels to LLVM IR to serialize them, and
  // the JIT translates gpu.binary ops.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // How gpu.binary embeds its kernels into the host module.
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

void mlir::sbp::registerSbpPassesAndPipelines() {
  registerSbpPasses();
  registerSbpPipelines();
  registerImportStablehloPipeline();
}
