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

/// From a program on tensors (one rank's, without collectives) to the LLVM
/// dialect: element-wise ops to linalg and fused, one-shot bufferization with
/// ownership-based deallocation, linalg to loops, then everything to LLVM.
void buildLowerCpuPipeline(OpPassManager &pm);

/// Registers `--sbp-parallelize` and `--sbp-lower-cpu`.
void registerSbpPipelines();

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINES_H
