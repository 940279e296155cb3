//===- InitSbp.cpp - Register everything sbp provides ---------------------===//

#include "sbp/InitSbp.h"
#include "mlir/IR/DialectRegistry.h"
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
}

void mlir::sbp::registerSbpPassesAndPipelines() {
  registerSbpPasses();
  registerSbpPipelines();
  registerImportStablehloPipeline();
}
