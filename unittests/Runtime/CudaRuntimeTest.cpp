//===- CudaRuntimeTest.cpp - The CUDA backend without a device ------------===//
//
// What can be checked where no GPU driver is installed: the GEMM shapes
// handed to cuBLAS, the errors when the driver, cuBLAS or NCCL is missing,
// and the kernel handles of the mgpu ABI. The libraries are pointed at
// paths that do not exist, so these tests behave the same on GPU machines.
//
//===----------------------------------------------------------------------===//

#include "sbp/Runtime/sbp_cuda.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <string>

extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
}

namespace {

/// Points every CUDA library at a missing file, before any is loaded.
class CudaRuntime : public testing::Test {
protected:
  static void SetUpTestSuite() {
    setenv("SBP_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    setenv("SBP_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  }
};

TEST_F(CudaRuntime, GemmShapeOfMatrices) {
  // A [3, 5] x B [5, 7] -> C [3, 7], dense.
  int64_t a[] = {3, 5}, aStrides[] = {5, 1};
  int64_t b[] = {5, 7}, bStrides[] = {7, 1};
  int64_t c[] = {3, 7}, cStrides[] = {7, 1};
  sbp_gemm_shape shape;
  const char *error = nullptr;
  ASSERT_EQ(sbp_cuda_gemm_shape(2, a, aStrides, b, bStrides, c, cStrides,
                                &shape, &error),
            0);
  EXPECT_EQ(shape.batch, 1);
  EXPECT_EQ(shape.m, 3);
  EXPECT_EQ(shape.n, 7);
  EXPECT_EQ(shape.k, 5);
  EXPECT_EQ(shape.lda, 5);
  EXPECT_EQ(shape.ldb, 7);
  EXPECT_EQ(shape.ldc, 7);
}

TEST_F(CudaRuntime, GemmShapeOfViewsAndBatches) {
  // Batches of 4, A a column slice of a wider buffer (row pitch 16).
  int64_t a[] = {4, 3, 5}, aStrides[] = {48, 16, 1};
  int64_t b[] = {4, 5, 2}, bStrides[] = {10, 2, 1};
  int64_t c[] = {4, 3, 2}, cStrides[] = {6, 2, 1};
  sbp_gemm_shape shape;
  const char *error = nullptr;
  ASSERT_EQ(sbp_cuda_gemm_shape(3, a, aStrides, b, bStrides, c, cStrides,
                                &shape, &error),
            0);
  EXPECT_EQ(shape.batch, 4);
  EXPECT_EQ(shape.lda, 16);
  EXPECT_EQ(shape.stride_a, 48);
  EXPECT_EQ(shape.stride_b, 10);
  EXPECT_EQ(shape.stride_c, 6);
  // One row: any row stride will do.
  int64_t row[] = {1, 5}, rowStrides[] = {0, 1};
  int64_t out[] = {1, 7}, outStrides[] = {7, 1};
  int64_t b2[] = {5, 7}, b2Strides[] = {7, 1};
  ASSERT_EQ(sbp_cuda_gemm_shape(2, row, rowStrides, b2, b2Strides, out,
                                outStrides, &shape, &error),
            0);
  EXPECT_EQ(shape.lda, 5);
}

TEST_F(CudaRuntime, GemmShapeRejects) {
  int64_t a[] = {3, 5}, b[] = {5, 7}, c[] = {3, 7};
  int64_t aStrides[] = {5, 1}, bStrides[] = {7, 1}, cStrides[] = {7, 1};
  sbp_gemm_shape shape;
  const char *error = nullptr;
  // Column-major A.
  int64_t transposed[] = {1, 3};
  EXPECT_EQ(sbp_cuda_gemm_shape(2, a, transposed, b, bStrides, c, cStrides,
                                &shape, &error),
            -1);
  EXPECT_STREQ(error, "GEMM operands must be row-major");
  // K differs.
  int64_t wrong[] = {4, 7};
  EXPECT_EQ(sbp_cuda_gemm_shape(2, a, aStrides, wrong, bStrides, c, cStrides,
                                &shape, &error),
            -1);
  EXPECT_STREQ(error, "GEMM operand shapes do not match");
  EXPECT_EQ(sbp_cuda_gemm_shape(1, a, aStrides, b, bStrides, c, cStrides,
                                &shape, &error),
            -1);
}

TEST_F(CudaRuntime, MissingDriverIsAnError) {
  const char *error = nullptr;
  EXPECT_EQ(sbp_cuda_init(&error), -1);
  ASSERT_NE(error, nullptr);
  std::string message = error;
  EXPECT_NE(message.find("no CUDA driver: /nonexistent/libcuda.so.1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("SBP_CUDA_DRIVER"), std::string::npos);
  EXPECT_EQ(sbp_cuda_device_count(), 0);
  // A rank cannot begin; the same error again.
  EXPECT_EQ(sbp_cuda_rank_begin(0, &error), -1);
  EXPECT_NE(std::string(error).find("no CUDA driver"), std::string::npos);
}

TEST_F(CudaRuntime, CallsWithoutARankRecordAnError) {
  // What a compiled program calls when no rank began on its thread: no
  // crash, an error for the host.
  EXPECT_EQ(sbp_cuda_alloc(64), nullptr);
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  const char *error = sbp_cuda_synchronize();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("no rank began on this thread"),
            std::string::npos)
      << error;
  EXPECT_NE(std::string(error).find("sbp_cuda_alloc"), std::string::npos)
      << "the first error is reported: " << error;
  // Synchronizing without a rank is itself an error.
  error = sbp_cuda_synchronize();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("sbp_cuda_synchronize"), std::string::npos);
}

TEST_F(CudaRuntime, CollectiveBracketsWithoutARank) {
  // A program's overlap calls on a thread with no rank: recorded errors, a
  // handle that waits for nothing.
  sbp_rt_cuda_collective_begin();
  EXPECT_EQ(sbp_rt_cuda_collective_end(), -1);
  sbp_rt_cuda_collective_wait(-1);
  sbp_rt_cuda_collective_wait(12345);
  const char *error = sbp_cuda_synchronize();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("sbp_rt_cuda_collective_begin"),
            std::string::npos)
      << error;
}

TEST_F(CudaRuntime, KernelHandlesAreStable) {
  // Modules load lazily per context: loading needs no driver, and the
  // generated code asks for a kernel at every launch.
  static const char image[] = "// PTX";
  void *module = mgpuModuleLoadJIT(const_cast<char *>(image), 3);
  ASSERT_NE(module, nullptr);
  void *first = mgpuModuleGetFunction(module, "kernel_a");
  EXPECT_EQ(mgpuModuleGetFunction(module, "kernel_a"), first);
  EXPECT_NE(mgpuModuleGetFunction(module, "kernel_b"), first);
  void *cubin = mgpuModuleLoad(const_cast<char *>(image), sizeof(image));
  EXPECT_NE(cubin, module);
  mgpuModuleUnload(cubin);
  mgpuModuleUnload(module);
}

TEST_F(CudaRuntime, MissingNcclIsAnError) {
  const char *error = nullptr;
  EXPECT_EQ(sbp_nccl_comm_create(nullptr, &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("no NCCL: /nonexistent/libnccl.so.2"),
            std::string::npos)
      << error;
}

} // namespace
