//===- Pipelines.cpp - sbp pass pipelines ---------------------------------===//

#include "sbp/Transforms/Pipelines.h"
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

void sbp::registerSbpPipelines() {
  PassPipelineRegistration<>(
      "sbp-parallelize",
      "Propagate layouts, insert boxing and partition into the per-device "
      "program (sbp-propagate, sbp-insert-boxing, sbp-partition, "
      "canonicalize, cse)",
      buildParallelizePipeline);
}
