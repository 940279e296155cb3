//===- Mgpu.cpp - The mgpu* ABI of MLIR's GPU lowering, and ranks ---------===//
//
// MLIR's `gpu-to-llvm` emits calls of mgpu* functions and a global
// constructor that loads each kernel image with mgpuModuleLoad (cubin) or
// mgpuModuleLoadJIT (PTX). Here a module is the image plus one CUmodule
// per context, loaded on a launch's first use in that context: the
// constructor runs when the JIT initializes, before any rank has begun,
// and ranks on different devices need their own modules.
//
// Streams that the generated code creates are the rank's stream (see
// sbp_cuda.h); allocations are stream-ordered (cuMemAllocAsync) from the
// device's default pool, kept cached between iterations.
//
//===----------------------------------------------------------------------===//

#include "CudaLibraries.h"
#include "sbp/Runtime/sbp_cuda.h"
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

using namespace sbp::cuda;

namespace {

/// A kernel image and its modules, one per context.
struct Module {
  const void *image = nullptr;
  bool isPtx = false;
  int optLevel = 3;
  std::mutex mutex;
  std::map<CUcontext, CUmodule> loaded;
  /// Kernels by name, handed out by mgpuModuleGetFunction.
  std::map<std::string, std::unique_ptr<struct Kernel>> kernels;
};

/// One kernel of a module, resolved per context.
struct Kernel {
  Module *module = nullptr;
  std::string name;
  std::map<CUcontext, CUfunction> functions;
};

/// The function of `kernel` in the rank's context, loading the module
/// there on first use.
CUfunction resolve(Kernel *kernel, RankState &rank) {
  Module &module = *kernel->module;
  std::lock_guard<std::mutex> lock(module.mutex);
  auto found = kernel->functions.find(rank.context);
  if (found != kernel->functions.end())
    return found->second;
  const Driver *driver = getDriver();
  CUmodule &loaded = module.loaded[rank.context];
  if (!loaded) {
    CUresult result;
    if (module.isPtx) {
      CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
      void *values[] = {reinterpret_cast<void *>(intptr_t(module.optLevel))};
      result =
          driver->moduleLoadDataEx(&loaded, module.image, 1, options, values);
    } else {
      result = driver->moduleLoadData(&loaded, module.image);
    }
    if (!rank.check(module.isPtx ? "cuModuleLoadDataEx (PTX JIT)"
                                 : "cuModuleLoadData",
                    result))
      return nullptr;
  }
  CUfunction function = nullptr;
  if (!rank.check(
          ("cuModuleGetFunction " + kernel->name).c_str(),
          driver->moduleGetFunction(&function, loaded, kernel->name.c_str())))
    return nullptr;
  kernel->functions[rank.context] = function;
  return function;
}

/// The rank, or null after recording that the calling thread has none.
RankState *getActiveRank(const char *call) {
  RankState &rank = getRank();
  if (rank.device < 0) {
    rank.fail(std::string(call) + ": no rank began on this thread");
    return nullptr;
  }
  return &rank;
}

/// Copies `bytes` between host and device memory (unified addressing
/// tells which is which) and waits for the copy: 0, or -1 with the rank's
/// error recorded.
int copyAndWait(void *dst, const void *src, int64_t bytes, const char *call) {
  RankState *rank = getActiveRank(call);
  if (!rank)
    return -1;
  CUstream stream = rank->activeStream();
  bool ok =
      rank->check(call,
                  getDriver()->memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                           reinterpret_cast<CUdeviceptr>(src),
                                           bytes, stream)) &&
      rank->check("cuStreamSynchronize",
                  getDriver()->streamSynchronize(stream));
  return ok ? 0 : -1;
}

Module *createModule(const void *image, bool isPtx, int optLevel) {
  auto *module = new Module;
  module->image = image;
  module->isPtx = isPtx;
  module->optLevel = optLevel;
  return module;
}

} // namespace

extern "C" {

int sbp_cuda_init(const char **error) {
  static std::string failure;
  if (getDriver(&failure))
    return 0;
  if (error)
    *error = failure.c_str();
  return -1;
}

int sbp_cuda_device_count(void) {
  const Driver *driver = getDriver();
  int count = 0;
  if (!driver || driver->deviceGetCount(&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

int sbp_cuda_rank_begin(int device, const char **error) {
  thread_local std::string failure;
  RankState &rank = getRank();
  const Driver *driver = getDriver(&failure);
  CUdevice handle;
  if (driver) {
    CUresult result = driver->deviceGet(&handle, device);
    if (result)
      failure = driver->describe("cuDeviceGet", result);
    else if ((result = driver->primaryCtxRetain(&rank.context, handle)))
      failure = driver->describe("cuDevicePrimaryCtxRetain", result);
    else if ((result = driver->ctxSetCurrent(rank.context)))
      failure = driver->describe("cuCtxSetCurrent", result);
    else if ((result =
                  driver->streamCreate(&rank.stream, CU_STREAM_NON_BLOCKING)))
      failure = driver->describe("cuStreamCreate", result);
    else {
      // Freed blocks stay in the pool for the next iteration instead of
      // going back to the driver at every synchronization.
      CUmemoryPool pool;
      if (driver->deviceGetDefaultMemPool(&pool, handle) == CUDA_SUCCESS) {
        uint64_t keep = UINT64_MAX;
        driver->memPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                    &keep);
      }
      rank.device = device;
      rank.error.clear();
      return 0;
    }
  }
  if (error)
    *error = failure.c_str();
  return -1;
}

void sbp_cuda_rank_end(void) {
  RankState &rank = getRank();
  if (rank.device < 0)
    return;
  const Driver *driver = getDriver();
  if (rank.cublas)
    getCublas()->destroy(rank.cublas);
  driver->streamSynchronize(rank.stream);
  driver->streamDestroy(rank.stream);
  if (rank.commStream) {
    driver->streamSynchronize(rank.commStream);
    driver->streamDestroy(rank.commStream);
  }
  for (auto [handle, event] : rank.pending)
    driver->eventDestroy(event);
  for (CUevent event : rank.spareEvents)
    driver->eventDestroy(event);
  rank = RankState();
}

/// An event of the rank, reused.
static CUevent takeEvent(RankState &rank) {
  if (!rank.spareEvents.empty()) {
    CUevent event = rank.spareEvents.back();
    rank.spareEvents.pop_back();
    return event;
  }
  CUevent event = nullptr;
  rank.check("cuEventCreate",
             getDriver()->eventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void sbp_rt_cuda_collective_begin(void) {
  RankState *rank = getActiveRank("sbp_rt_cuda_collective_begin");
  if (!rank || !rank->error.empty())
    return;
  const Driver *driver = getDriver();
  if (!rank->commStream &&
      !rank->check(
          "cuStreamCreate",
          driver->streamCreate(&rank->commStream, CU_STREAM_NON_BLOCKING)))
    return;
  // The collective starts after everything queued before it.
  CUevent ready = takeEvent(*rank);
  if (!ready ||
      !rank->check("cuEventRecord", driver->eventRecord(ready, rank->stream)) ||
      !rank->check("cuStreamWaitEvent",
                   driver->streamWaitEvent(rank->commStream, ready, 0)))
    return;
  rank->spareEvents.push_back(ready);
  rank->collectiveStream = rank->commStream;
}

int64_t sbp_rt_cuda_collective_end(void) {
  RankState *rank = getActiveRank("sbp_rt_cuda_collective_end");
  if (!rank)
    return -1;
  bool begun = rank->collectiveStream != nullptr;
  rank->collectiveStream = nullptr;
  if (!begun || !rank->error.empty())
    return -1;
  CUevent done = takeEvent(*rank);
  if (!done || !rank->check("cuEventRecord",
                            getDriver()->eventRecord(done, rank->commStream)))
    return -1;
  int64_t handle = rank->nextHandle++;
  rank->pending[handle] = done;
  return handle;
}

void sbp_rt_cuda_collective_wait(int64_t handle) {
  RankState *rank = getActiveRank("sbp_rt_cuda_collective_wait");
  if (!rank)
    return;
  auto found = rank->pending.find(handle);
  if (found == rank->pending.end())
    return;
  rank->check("cuStreamWaitEvent",
              getDriver()->streamWaitEvent(rank->stream, found->second, 0));
  rank->spareEvents.push_back(found->second);
  rank->pending.erase(found);
}

const char *sbp_cuda_synchronize(void) {
  thread_local std::string reported;
  RankState *rank = getActiveRank("sbp_cuda_synchronize");
  if (rank)
    rank->check("cuStreamSynchronize",
                getDriver()->streamSynchronize(rank->stream));
  RankState &state = getRank();
  if (state.error.empty())
    return nullptr;
  reported = std::move(state.error);
  state.error.clear();
  return reported.c_str();
}

void *sbp_cuda_alloc(int64_t bytes) {
  RankState *rank = getActiveRank("sbp_cuda_alloc");
  CUdeviceptr pointer = 0;
  // Zero-sized tensors still get a distinct address.
  if (!rank ||
      !rank->check("cuMemAllocAsync",
                   getDriver()->memAllocAsync(&pointer, bytes > 0 ? bytes : 1,
                                              rank->activeStream())))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void sbp_cuda_free(void *pointer) {
  RankState *rank = getActiveRank("sbp_cuda_free");
  if (rank && pointer)
    rank->check("cuMemFreeAsync", getDriver()->memFreeAsync(
                                      reinterpret_cast<CUdeviceptr>(pointer),
                                      rank->activeStream()));
}

int sbp_cuda_upload(void *device, const void *host, int64_t bytes) {
  // The host buffer may be reused as soon as this returns.
  return copyAndWait(device, host, bytes, "sbp_cuda_upload");
}

int sbp_cuda_download(void *host, const void *device, int64_t bytes) {
  return copyAndWait(host, device, bytes, "sbp_cuda_download");
}

// The ABI of MLIR's gpu-to-llvm lowering.

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return createModule(data, /*isPtx=*/false, 3);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return createModule(data, /*isPtx=*/true, optLevel);
}

void mgpuModuleUnload(void *handle) {
  auto *module = static_cast<Module *>(handle);
  if (const Driver *driver = getDriver()) {
    CUcontext current = nullptr;
    driver->ctxGetCurrent(&current);
    for (auto [context, loaded] : module->loaded) {
      driver->ctxSetCurrent(context);
      driver->moduleUnload(loaded);
    }
    driver->ctxSetCurrent(current);
  }
  delete module;
}

void *mgpuModuleGetFunction(void *handle, const char *name) {
  auto *module = static_cast<Module *>(handle);
  std::lock_guard<std::mutex> lock(module->mutex);
  std::unique_ptr<Kernel> &kernel = module->kernels[name];
  if (!kernel) {
    kernel = std::make_unique<Kernel>();
    kernel->module = module;
    kernel->name = name;
  }
  return kernel.get();
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  RankState *rank = getActiveRank("mgpuLaunchKernel");
  if (!rank || !rank->error.empty())
    return;
  CUfunction resolved = resolve(static_cast<Kernel *>(function), *rank);
  if (!resolved)
    return;
  rank->check("cuLaunchKernel",
              getDriver()->launchKernel(resolved, gridX, gridY, gridZ, blockX,
                                        blockY, blockZ, sharedBytes,
                                        stream ? static_cast<CUstream>(stream)
                                               : rank->stream,
                                        params, extra));
}

void *mgpuStreamCreate() {
  RankState *rank = getActiveRank("mgpuStreamCreate");
  return rank ? rank->stream : nullptr;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *) {}

void mgpuStreamWaitEvent(void *stream, void *event) {
  RankState *rank = getActiveRank("mgpuStreamWaitEvent");
  if (rank)
    rank->check("cuStreamWaitEvent",
                getDriver()->streamWaitEvent(static_cast<CUstream>(stream),
                                             static_cast<CUevent>(event), 0));
}

void *mgpuEventCreate() {
  RankState *rank = getActiveRank("mgpuEventCreate");
  CUevent event = nullptr;
  if (rank)
    rank->check("cuEventCreate",
                getDriver()->eventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(void *event) {
  if (getActiveRank("mgpuEventDestroy"))
    getDriver()->eventDestroy(static_cast<CUevent>(event));
}

void mgpuEventSynchronize(void *event) {
  RankState *rank = getActiveRank("mgpuEventSynchronize");
  if (rank)
    rank->check("cuEventSynchronize",
                getDriver()->eventSynchronize(static_cast<CUevent>(event)));
}

void mgpuEventRecord(void *event, void *stream) {
  RankState *rank = getActiveRank("mgpuEventRecord");
  if (rank)
    rank->check("cuEventRecord",
                getDriver()->eventRecord(static_cast<CUevent>(event),
                                         static_cast<CUstream>(stream)));
}

void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool isHostShared) {
  if (isHostShared) {
    getRank().fail("mgpuMemAlloc: host-shared memory is not supported");
    return nullptr;
  }
  return sbp_cuda_alloc(bytes);
}

void mgpuMemFree(void *pointer, void * /*stream*/) { sbp_cuda_free(pointer); }

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  RankState *rank = getActiveRank("mgpuMemcpy");
  if (!rank)
    return;
  // A copy into host memory (an element that host control flow reads) is
  // read right after: wait for it, since an asynchronous copy into
  // pageable memory need not have finished when the call returns. Memory
  // the driver does not know is pageable host memory.
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  if (getDriver()->pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       reinterpret_cast<CUdeviceptr>(dst)) !=
      CUDA_SUCCESS)
    type = CU_MEMORYTYPE_HOST;
  if (type == CU_MEMORYTYPE_HOST) {
    copyAndWait(dst, src, bytes, "cuMemcpyAsync");
    return;
  }
  rank->check("cuMemcpyAsync",
              getDriver()->memcpyAsync(
                  reinterpret_cast<CUdeviceptr>(dst),
                  reinterpret_cast<CUdeviceptr>(src), bytes,
                  stream ? static_cast<CUstream>(stream) : rank->stream));
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  RankState *rank = getActiveRank("mgpuMemset32");
  if (rank)
    rank->check("cuMemsetD32Async",
                getDriver()->memsetD32Async(
                    reinterpret_cast<CUdeviceptr>(dst), value, count,
                    stream ? static_cast<CUstream>(stream) : rank->stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  RankState *rank = getActiveRank("mgpuMemset16");
  if (rank)
    rank->check("cuMemsetD16Async",
                getDriver()->memsetD16Async(
                    reinterpret_cast<CUdeviceptr>(dst), value, count,
                    stream ? static_cast<CUstream>(stream) : rank->stream));
}

} // extern "C"
