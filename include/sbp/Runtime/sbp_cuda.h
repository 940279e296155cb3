/*===- sbp_cuda.h - The runtime's CUDA backend (C ABI) ------------*- C -*-===*
 *
 * Programs lowered with `--sbp-lower-gpu` keep every tensor in the memory
 * of their rank's GPU and call three kinds of functions:
 *
 * - the `mgpu*` functions that MLIR's `gpu-to-llvm` lowering emits
 *   (mgpuModuleLoad, mgpuLaunchKernel, mgpuMemAlloc, ...), implemented here
 *   against the CUDA driver API, which is loaded at run time
 *   (libcuda.so.1), so that programs and tools build and start where no
 *   driver is installed;
 * - sbp_rt_cuda_matmul (cuBLAS, loaded at run time: libcublas.so.13);
 * - the collectives of sbp_program.h, on device buffers, through the
 *   communicator the host set: one from sbp_cuda_device_comm_create
 *   (ranks as threads of one process, device copies: the virtual mesh),
 *   sbp_cuda_staging_comm_create (a host communicator, buffers staged
 *   through host memory: MPI) or sbp_nccl_comm_create (NCCL,
 *   libnccl.so.2, one GPU per rank).
 *
 * A thread runs one rank: sbp_cuda_rank_begin makes its device's primary
 * context current and gives the rank one stream, on which every kernel,
 * copy, allocation (stream-ordered), GEMM and NCCL call of the rank is
 * queued in program order. The stream the generated code creates and
 * synchronizes around each launch is that stream, and synchronizing it
 * there is a no-op: the host synchronizes once, with
 * sbp_cuda_synchronize, before it reads results. Functions without a
 * status record the rank's first error; sbp_cuda_synchronize returns it.
 *
 * Library paths: SBP_CUDA_DRIVER, SBP_CUBLAS_LIBRARY and SBP_NCCL_LIBRARY
 * override the default sonames.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SBP_RUNTIME_SBP_CUDA_H
#define SBP_RUNTIME_SBP_CUDA_H

#include "sbp/Runtime/sbp_runtime.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Overlap of communication and computation (sbp-overlap-collectives):
 * the collective called between _begin and _end runs on the rank's
 * communication stream after everything queued before _begin; _end
 * returns a handle (-1 after an error), and _wait(handle) makes the
 * rank's stream wait for that collective. Kernels queued in between run
 * beside it. Without a bracket, collectives run on the rank's stream. */
void sbp_rt_cuda_collective_begin(void);
int64_t sbp_rt_cuda_collective_end(void);
void sbp_rt_cuda_collective_wait(int64_t handle);

/* Element type codes of sbp_rt_cuda_matmul. */
enum {
  SBP_GEMM_F32 = 0,
  SBP_GEMM_F64 = 1,
  SBP_GEMM_F16 = 2,
  SBP_GEMM_BF16 = 3,
};

/* Loads and initializes the CUDA driver (once). Returns 0, or -1 with
 * `*error` saying why ("libcuda.so.1: cannot open shared object file ...",
 * "cuInit: CUDA_ERROR_NO_DEVICE ..."). */
int sbp_cuda_init(const char **error);
/* Devices the driver sees (0 before a successful sbp_cuda_init). */
int sbp_cuda_device_count(void);
/* Makes device `device` this thread's rank device with a fresh stream.
 * Returns 0, or -1 with `*error`. */
int sbp_cuda_rank_begin(int device, const char **error);
/* Destroys this thread's stream and cuBLAS handle. */
void sbp_cuda_rank_end(void);
/* Waits for this rank's stream. Returns NULL, or the rank's first error
 * (a failed launch, allocation, GEMM or copy), which it forgets. */
const char *sbp_cuda_synchronize(void);

/* Device memory of this rank, ordered on its stream. NULL after an error. */
void *sbp_cuda_alloc(int64_t bytes);
void sbp_cuda_free(void *pointer);
/* Copies between host and device memory on this rank's stream; download
 * waits for the copy. Return 0 or -1 (the error is recorded). */
int sbp_cuda_upload(void *device, const void *host, int64_t bytes);
int sbp_cuda_download(void *host, const void *device, int64_t bytes);

/* A communicator of the same rank as `host` whose collectives take device
 * buffers: each call copies its input to host memory, runs `host`'s
 * collective, and copies the result back. `host` stays owned by its
 * world. */
sbp_comm *sbp_cuda_staging_comm_create(sbp_comm *host);
/* A communicator of the same rank as `host`, for ranks that are threads of
 * one process (`host` from the threads backend), whose collectives take
 * device buffers and move them by device-to-device copies between the
 * ranks' buffers: the virtual mesh. f32/f64 sums add with cuBLAS; other
 * reductions, all-to-alls and sends are staged through host memory. */
sbp_comm *sbp_cuda_device_comm_create(sbp_comm *host);
/* A communicator of the same rank as `host` whose collectives are NCCL
 * calls on this rank's stream, with one NCCL communicator per group of
 * mesh axes, created on first use; `host` only exchanges the
 * ncclUniqueIds. The calling thread must have begun its rank. Returns NULL
 * with `*error` when NCCL cannot be loaded. */
sbp_comm *sbp_nccl_comm_create(sbp_comm *host, const char **error);
void sbp_cuda_comm_destroy(sbp_comm *comm);

/* `out` = `c` + `a` * `b` (`a` * `b` when `accumulate` is 0, without
 * reading `c`) for row-major matrices or batches of them (rank 3), with
 * cuBLAS on this rank's stream. `a_type` is the type of `a` and `b`,
 * `c_type` that of `c` and `out` (SBP_GEMM_*); `tf32` lets f32 products
 * use TF32 tensor cores. Tensors are unranked memrefs (see
 * sbp_program.h). Compiled programs call it through one entry point per
 * type pair, sbp_rt_cuda_matmul_<a>_<c> with <a>_<c> one of f32_f32,
 * f64_f64, f16_f16, f16_f32, bf16_bf16, bf16_f32, taking the same
 * arguments without the types. */
void sbp_rt_cuda_matmul(int64_t a_rank, void *a, int64_t b_rank, void *b,
                        int64_t c_rank, void *c, int64_t out_rank, void *out,
                        int64_t accumulate, int64_t a_type, int64_t c_type,
                        int64_t tf32);

/* The shape of one GEMM call of sbp_rt_cuda_matmul on row-major operands
 * described by their sizes and strides (elements): cuBLAS computes the
 * column-major C^T = B^T A^T. Returns 0, or -1 with `*error` when the
 * shapes do not match or a stride is not a row pitch. */
typedef struct {
  int64_t batch, m, n, k;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
} sbp_gemm_shape;
int sbp_cuda_gemm_shape(int64_t rank, const int64_t *a_sizes,
                        const int64_t *a_strides, const int64_t *b_sizes,
                        const int64_t *b_strides, const int64_t *c_sizes,
                        const int64_t *c_strides, sbp_gemm_shape *shape,
                        const char **error);

#ifdef __cplusplus
}
#endif

#endif /* SBP_RUNTIME_SBP_CUDA_H */
