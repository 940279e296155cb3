//===- Pipelines.h - sbp pass pipelines -------------------------*- C++ -*-===//

#ifndef SBP_TRANSFORMS_PIPELINES_H
#define SBP_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace sbp {

/// Options of `--sbp-lower-cpu`.
struct LowerCpuOptions : public PassPipelineOptions<LowerCpuOptions> {
  Option<bool> useBlas{
      *this, "blas",
      llvm::cl::desc("Call OpenBLAS (cblas_sgemm/cblas_dgemm) for f32 and f64 "
                     "matmuls instead of generating their code"),
      llvm::cl::init(false)};
  Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorize matmul-like ops for the host CPU"),
      llvm::cl::init(true)};
};

/// sbp-propagate, sbp-insert-boxing, sbp-partition, then canonicalization:
/// from a logical program with layout constraints to the program every
/// device runs.
void buildParallelizePipeline(OpPassManager &pm);

/// From one rank's program on tensors to the LLVM dialect: collectives to
/// runtime calls, element-wise ops to linalg and fused, one-shot
/// bufferization with ownership-based deallocation, linalg to loops, then
/// everything to LLVM.
void buildLowerCpuPipeline(OpPassManager &pm,
                           const LowerCpuOptions &options = {});

/// Registers `--sbp-parallelize` and `--sbp-lower-cpu`.
void registerSbpPipelines();

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINES_H
