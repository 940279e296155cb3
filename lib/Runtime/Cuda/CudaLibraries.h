//===- CudaLibraries.h - The CUDA libraries, loaded at run time -*- C++ -*-===//
//
// The driver (libcuda.so.1), cuBLAS and NCCL are opened with dlopen on
// first use so that the runtime, sbp-run and every program build and start
// on machines without a GPU; the toolkit's cuda.h gives the driver's
// types. cuBLAS and NCCL ship no headers with the toolkit here, so the few
// functions and enumerators used are declared below from their documented
// C ABI.
//
// Each rank is one thread with its device's primary context and one
// stream (RankState); every function that has no status to return records
// the rank's first error there.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_CUDA_CUDALIBRARIES_H
#define SBP_RUNTIME_CUDA_CUDALIBRARIES_H

#include <cstddef>
#include <cstdint>
#include <cuda.h>
#include <map>
#include <string>
#include <vector>

namespace sbp::cuda {

#define SBP_STRINGIFY_IMPL(x) #x
#define SBP_STRINGIFY(x) SBP_STRINGIFY_IMPL(x)

/// (member, function of cuda.h); the symbol is the versioned name cuda.h
/// maps the function to.
#define SBP_DRIVER_FUNCTIONS(X)                                                \
  X(init, cuInit)                                                              \
  X(getErrorString, cuGetErrorString)                                          \
  X(deviceGetCount, cuDeviceGetCount)                                          \
  X(deviceGet, cuDeviceGet)                                                    \
  X(deviceGetName, cuDeviceGetName)                                            \
  X(primaryCtxRetain, cuDevicePrimaryCtxRetain)                                \
  X(ctxSetCurrent, cuCtxSetCurrent)                                            \
  X(ctxGetCurrent, cuCtxGetCurrent)                                            \
  X(streamCreate, cuStreamCreate)                                              \
  X(streamDestroy, cuStreamDestroy)                                            \
  X(streamSynchronize, cuStreamSynchronize)                                    \
  X(memAllocAsync, cuMemAllocAsync)                                            \
  X(memFreeAsync, cuMemFreeAsync)                                              \
  X(deviceGetDefaultMemPool, cuDeviceGetDefaultMemPool)                        \
  X(memPoolSetAttribute, cuMemPoolSetAttribute)                                \
  X(memcpyAsync, cuMemcpyAsync)                                                \
  X(pointerGetAttribute, cuPointerGetAttribute)                                \
  X(memcpy2DAsync, cuMemcpy2DAsync)                                            \
  X(memsetD32Async, cuMemsetD32Async)                                          \
  X(memsetD16Async, cuMemsetD16Async)                                          \
  X(moduleLoadData, cuModuleLoadData)                                          \
  X(moduleLoadDataEx, cuModuleLoadDataEx)                                      \
  X(moduleUnload, cuModuleUnload)                                              \
  X(moduleGetFunction, cuModuleGetFunction)                                    \
  X(launchKernel, cuLaunchKernel)                                              \
  X(eventCreate, cuEventCreate)                                                \
  X(eventDestroy, cuEventDestroy)                                              \
  X(eventRecord, cuEventRecord)                                                \
  X(eventSynchronize, cuEventSynchronize)                                      \
  X(streamWaitEvent, cuStreamWaitEvent)

/// The driver's functions.
struct Driver {
#define SBP_DECLARE(member, function) decltype(&::function) member = nullptr;
  SBP_DRIVER_FUNCTIONS(SBP_DECLARE)
#undef SBP_DECLARE

  /// "cuFoo: CUDA_ERROR_...: description".
  std::string describe(const char *call, CUresult result) const;
};

/// The loaded, initialized driver, or null with `error` set (on every
/// call after a failed first one too).
const Driver *getDriver(std::string *error = nullptr);

// cuBLAS (cublas_api.h, library_types.h).
using cublasHandle_t = struct cublasContext *;
enum { CUBLAS_OP_N = 0, CUBLAS_GEMM_DEFAULT = -1 };
enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F = 70,
};

/// `type`, declarable before a name when it is a function pointer's.
template <typename T> using Declared = T;

/// cuBLAS's functions: (member, symbol, type); each one is resolved.
#define SBP_CUBLAS_FUNCTIONS(X)                                                \
  X(create, cublasCreate_v2, int (*)(cublasHandle_t *))                        \
  X(destroy, cublasDestroy_v2, int (*)(cublasHandle_t))                        \
  X(setStream, cublasSetStream_v2, int (*)(cublasHandle_t, CUstream))          \
  X(gemmStridedBatchedEx, cublasGemmStridedBatchedEx,                          \
    int (*)(cublasHandle_t, int, int, int, int, int, const void *,             \
            const void *, int, int, long long, const void *, int, int,         \
            long long, const void *, void *, int, int, long long, int, int,    \
            int))                                                              \
  X(saxpy, cublasSaxpy_v2,                                                     \
    int (*)(cublasHandle_t, int, const float *, const float *, int, float *,   \
            int))                                                              \
  X(daxpy, cublasDaxpy_v2,                                                     \
    int (*)(cublasHandle_t, int, const double *, const double *, int,          \
            double *, int))                                                    \
  X(getStatusString, cublasGetStatusString, const char *(*)(int))

struct Cublas {
#define SBP_DECLARE(member, function, type) Declared<type> member = nullptr;
  SBP_CUBLAS_FUNCTIONS(SBP_DECLARE)
#undef SBP_DECLARE
};

/// cuBLAS, or null with `error` set.
const Cublas *getCublas(std::string *error = nullptr);

// NCCL (nccl.h).
using ncclComm_t = struct ncclComm *;
struct ncclUniqueId {
  char internal[128];
};
enum {
  ncclInt8 = 0,
  ncclInt32 = 2,
  ncclInt64 = 4,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};
enum { ncclSum = 0, ncclMax = 2, ncclMin = 3 };

/// NCCL's functions: (member, symbol, type); each one is resolved.
#define SBP_NCCL_FUNCTIONS(X)                                                  \
  X(getUniqueId, ncclGetUniqueId, int (*)(ncclUniqueId *))                     \
  X(commInitRank, ncclCommInitRank,                                            \
    int (*)(ncclComm_t *, int, ncclUniqueId, int))                             \
  X(commDestroy, ncclCommDestroy, int (*)(ncclComm_t))                         \
  X(allReduce, ncclAllReduce,                                                  \
    int (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))     \
  X(allGather, ncclAllGather,                                                  \
    int (*)(const void *, void *, size_t, int, ncclComm_t, CUstream))          \
  X(reduceScatter, ncclReduceScatter,                                          \
    int (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))     \
  X(broadcast, ncclBroadcast,                                                  \
    int (*)(const void *, void *, size_t, int, int, ncclComm_t, CUstream))     \
  X(send, ncclSend,                                                            \
    int (*)(const void *, size_t, int, int, ncclComm_t, CUstream))             \
  X(recv, ncclRecv, int (*)(void *, size_t, int, int, ncclComm_t, CUstream))   \
  X(groupStart, ncclGroupStart, int (*)())                                     \
  X(groupEnd, ncclGroupEnd, int (*)())                                         \
  X(getErrorString, ncclGetErrorString, const char *(*)(int))

struct Nccl {
#define SBP_DECLARE(member, function, type) Declared<type> member = nullptr;
  SBP_NCCL_FUNCTIONS(SBP_DECLARE)
#undef SBP_DECLARE
};

/// NCCL, or null with `error` set.
const Nccl *getNccl(std::string *error = nullptr);

/// The rank that the calling thread runs.
struct RankState {
  int device = -1;
  CUcontext context = nullptr;
  /// Kernels, copies and GEMMs, in program order.
  CUstream stream = nullptr;
  /// Collectives between sbp_rt_cuda_collective_begin and _end; created at
  /// the first.
  CUstream commStream = nullptr;
  /// The stream collective work goes to: commStream inside such a bracket.
  CUstream collectiveStream = nullptr;
  /// Events of collectives not waited for yet, by handle; spare events.
  std::map<int64_t, CUevent> pending;
  std::vector<CUevent> spareEvents;
  int64_t nextHandle = 0;
  cublasHandle_t cublas = nullptr;
  /// The first error since the host last synchronized.
  std::string error;

  /// Records `message` unless an earlier error is pending; returns false.
  bool fail(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }
  /// Whether `result` is CUDA_SUCCESS; records the failure of `call` if not.
  bool check(const char *call, CUresult result);
  /// Where work of the runtime itself (copies, scratch buffers, NCCL) goes.
  CUstream activeStream() const {
    return collectiveStream ? collectiveStream : stream;
  }
};

/// This thread's rank; `device` is -1 before sbp_cuda_rank_begin.
RankState &getRank();

/// The rank's cuBLAS handle on `stream`, created on first use; null with
/// the rank's error recorded when cuBLAS is missing.
cublasHandle_t getCublasHandle(RankState &rank, CUstream stream);

/// Copies a `rows` x `rowBytes` block between device buffers with row
/// pitches `srcPitch` and `dstPitch` on the rank's stream.
bool copy2D(void *dst, int64_t dstPitch, const void *src, int64_t srcPitch,
            int64_t rowBytes, int64_t rows);

} // namespace sbp::cuda

#endif // SBP_RUNTIME_CUDA_CUDALIBRARIES_H
