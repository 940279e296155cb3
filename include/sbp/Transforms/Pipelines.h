//===- Pipelines.h - sbp pass pipelines -------------------------*- C++ -*-===//

#ifndef SBP_TRANSFORMS_PIPELINES_H
#define SBP_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include <optional>
#include <string>

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

/// Options of `--sbp-lower-gpu`.
struct LowerGpuOptions : public PassPipelineOptions<LowerGpuOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The GPU to compile for (sm_NN)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (the PTX ISA version, +ptxNN)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels become: 'bin' (cubin, through the "
                     "toolkit's ptxas), 'isa' (PTX, compiled by the driver "
                     "at load), 'fatbin', or 'auto' (bin when ptxas is "
                     "there, else isa)"),
      llvm::cl::init("auto")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit (libdevice, ptxas); empty: the one "
                     "found at build time, else CUDA_HOME"),
      llvm::cl::init("")};
  Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("Let f32 matmuls use TF32 tensor cores in cuBLAS"),
      llvm::cl::init(false)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of the "
                                           "generated kernels"),
                            llvm::cl::init(256)};
  Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Run collectives on a communication stream beside the "
                     "kernels that do not use their buffers "
                     "(sbp-overlap-collectives)"),
      llvm::cl::init(true)};
  Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Testing: run the kernels as host loops and matmuls as "
                     "generated code, through the CPU lowering, to check "
                     "the GPU lowering on machines without a GPU"),
      llvm::cl::init(false)};
  Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the kernels' LLVM code"),
      llvm::cl::init(3)};
};

/// The CUDA toolkit the GPU lowering uses given option `toolkit`: the
/// option, else the toolkit found at build time, else $CUDA_HOME; empty
/// when there is none.
std::string getCudaToolkit(llvm::StringRef toolkit);

/// sbp-propagate, sbp-insert-boxing, sbp-partition, then canonicalization
/// (and, in a pipeline, sbp-insert-transfers): from a logical program with
/// layout constraints to the program every device runs.
void buildParallelizePipeline(OpPassManager &pm);

/// From one rank's program on tensors to the LLVM dialect: collectives to
/// runtime calls, element-wise ops to linalg and fused, one-shot
/// bufferization with ownership-based deallocation, linalg to loops, then
/// everything to LLVM.
void buildLowerCpuPipeline(OpPassManager &pm,
                           const LowerCpuOptions &options = {});

/// Why `options` cannot be used (an unknown chip or format, a block size
/// out of range, a missing toolkit), or nothing.
std::optional<std::string>
validateLowerGpuOptions(const LowerGpuOptions &options);

/// From one rank's program on tensors to the LLVM dialect with its kernels
/// embedded: collectives to runtime calls, element-wise ops fused, matmuls
/// to cuBLAS, one-shot bufferization into device buffers, each remaining
/// linalg op one kernel, kernels to NVVM and PTX or cubin, host code to
/// LLVM calling the `mgpu*` runtime.
void buildLowerGpuPipeline(OpPassManager &pm, const LowerGpuOptions &options);

/// Registers `--sbp-parallelize`, `--sbp-lower-cpu` and `--sbp-lower-gpu`.
void registerSbpPipelines();

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PIPELINES_H
