//===- CudaLibraries.cpp - Loading the driver, cuBLAS and NCCL ------------===//

#include "CudaLibraries.h"
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace sbp::cuda;

namespace {

/// Opens the library named by environment variable `variable`, else
/// `soname`; null with `error` naming it and dlerror's reason.
void *open(const char *variable, const char *soname, std::string &error) {
  const char *path = std::getenv(variable);
  if (!path || !*path)
    path = soname;
  void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *reason = dlerror();
    error = reason ? reason : path;
    error += std::string(" (set ") + variable + " to the library's path)";
  }
  return handle;
}

/// Resolves `name` in `handle` into `function`; false with `error` if it
/// is missing.
template <typename Fn>
bool resolve(void *handle, const char *name, Fn &function, std::string &error) {
  function = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!function && error.empty())
    error = std::string("missing symbol ") + name;
  return function != nullptr;
}

/// Loads a library table once; every later call returns the same table or
/// the same error.
template <typename Table, typename Loader>
const Table *loadOnce(Loader load, std::string *error) {
  static std::once_flag once;
  static Table table;
  static std::string failure;
  static bool loaded = false;
  std::call_once(once, [&] { loaded = load(table, failure); });
  if (!loaded && error)
    *error = failure;
  return loaded ? &table : nullptr;
}

thread_local RankState rankState;

} // namespace

std::string Driver::describe(const char *call, CUresult result) const {
  const char *text = nullptr;
  if (getErrorString)
    getErrorString(result, &text);
  return std::string(call) + ": error " + std::to_string(int(result)) +
         (text ? std::string(": ") + text : std::string());
}

const Driver *sbp::cuda::getDriver(std::string *error) {
  return loadOnce<Driver>(
      [](Driver &driver, std::string &failure) {
        void *handle = open("SBP_CUDA_DRIVER", "libcuda.so.1", failure);
        if (!handle) {
          failure = "no CUDA driver: " + failure;
          return false;
        }
        bool ok = true;
#define SBP_RESOLVE(member, function)                                          \
  ok &= resolve(handle, SBP_STRINGIFY(function), driver.member, failure);
        SBP_DRIVER_FUNCTIONS(SBP_RESOLVE)
#undef SBP_RESOLVE
        if (!ok) {
          failure = "the CUDA driver is too old: " + failure;
          return false;
        }
        if (CUresult result = driver.init(0)) {
          failure = driver.describe("cuInit", result);
          return false;
        }
        return true;
      },
      error);
}

const Cublas *sbp::cuda::getCublas(std::string *error) {
  return loadOnce<Cublas>(
      [](Cublas &cublas, std::string &failure) {
        void *handle = open("SBP_CUBLAS_LIBRARY", "libcublas.so.13", failure);
        if (!handle) {
          failure = "no cuBLAS: " + failure;
          return false;
        }
        bool ok = true;
#define SBP_RESOLVE(member, function, type)                                    \
  ok &= resolve(handle, SBP_STRINGIFY(function), cublas.member, failure);
        SBP_CUBLAS_FUNCTIONS(SBP_RESOLVE)
#undef SBP_RESOLVE
        return ok;
      },
      error);
}

const Nccl *sbp::cuda::getNccl(std::string *error) {
  return loadOnce<Nccl>(
      [](Nccl &nccl, std::string &failure) {
        void *handle = open("SBP_NCCL_LIBRARY", "libnccl.so.2", failure);
        if (!handle) {
          failure = "no NCCL: " + failure;
          return false;
        }
        bool ok = true;
#define SBP_RESOLVE(member, function, type)                                    \
  ok &= resolve(handle, SBP_STRINGIFY(function), nccl.member, failure);
        SBP_NCCL_FUNCTIONS(SBP_RESOLVE)
#undef SBP_RESOLVE
        return ok;
      },
      error);
}

bool RankState::check(const char *call, CUresult result) {
  if (result == CUDA_SUCCESS)
    return true;
  const Driver *driver = getDriver();
  return fail(driver ? driver->describe(call, result)
                     : std::string(call) + ": no CUDA driver");
}

RankState &sbp::cuda::getRank() { return rankState; }

cublasHandle_t sbp::cuda::getCublasHandle(RankState &rank, CUstream stream) {
  std::string failure;
  const Cublas *cublas = getCublas(&failure);
  if (!cublas) {
    rank.fail(failure);
    return nullptr;
  }
  if (!rank.cublas) {
    if (int status = cublas->create(&rank.cublas)) {
      rank.fail(std::string("cublasCreate: ") +
                cublas->getStatusString(status));
      return nullptr;
    }
  }
  cublas->setStream(rank.cublas, stream);
  return rank.cublas;
}

bool sbp::cuda::copy2D(void *dst, int64_t dstPitch, const void *src,
                       int64_t srcPitch, int64_t rowBytes, int64_t rows) {
  // Empty pieces of balanced splits move nothing.
  if (rowBytes == 0 || rows == 0)
    return true;
  RankState &rank = getRank();
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  copy.srcPitch = srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  copy.dstPitch = dstPitch;
  copy.WidthInBytes = rowBytes;
  copy.Height = rows;
  return rank.check("cuMemcpy2DAsync",
                    getDriver()->memcpy2DAsync(&copy, rank.activeStream()));
}
