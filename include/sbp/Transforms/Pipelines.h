//===- Pipelines.h - sbp pass pipelines -------------------------*- C++ -*-===//

#ifndef SBP_TRANSFORMS_PIPELINES_H
#define SBP_TRANSFORMS_PIPELINES_H

namespace mlir {
class OpPassManager;
namespace sbp {

/// sbp-propagate, sbp-insert-boxing, sbp-partition, then canonicalization:
/// from a logical program with layout constraints to the program every
/// device runs.
void buildParallelizePipeline(OpPassManager &pm);

/// Registers `--sbp-parallelize`.
void registerSbpPipelines();

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINES_H
