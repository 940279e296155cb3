//===- cublas_gemm.cpp - cuBLAS called directly: the GEMM peer ------------===//
//
// Usage: sbp-bench-cublas M N K ITERATIONS
// Times C = A B (f32, row-major as sbp's programs hold it) with one
// cublasGemmStridedBatchedEx per iteration on one stream, after a warm-up,
// and prints `cublas_ms=<median> tflops=<at the median>`: what
// sbp_rt_cuda_matmul costs without the compiled program around it.
//
//===----------------------------------------------------------------------===//

#include "CudaLibraries.h"
#include "sbp/Runtime/sbp_cuda.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace sbp::cuda;

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s M N K ITERATIONS\n", argv[0]);
    return 2;
  }
  long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  int iterations = std::atoi(argv[4]);
  const char *error = nullptr;
  if (sbp_cuda_init(&error) || sbp_cuda_rank_begin(0, &error)) {
    std::fprintf(stderr, "sbp-bench-cublas: %s\n", error);
    return 2;
  }
  std::string failure;
  const Cublas *cublas = getCublas(&failure);
  if (!cublas) {
    std::fprintf(stderr, "sbp-bench-cublas: %s\n", failure.c_str());
    return 2;
  }
  RankState &rank = getRank();
  cublas->create(&rank.cublas);
  cublas->setStream(rank.cublas, rank.stream);
  void *a = sbp_cuda_alloc(m * k * 4), *b = sbp_cuda_alloc(k * n * 4);
  void *c = sbp_cuda_alloc(m * n * 4);
  getDriver()->memsetD32Async(reinterpret_cast<CUdeviceptr>(a), 0x3c000000,
                              m * k, rank.stream);
  getDriver()->memsetD32Async(reinterpret_cast<CUdeviceptr>(b), 0x3c000000,
                              k * n, rank.stream);
  float alpha = 1, beta = 0;
  auto gemm = [&] {
    return cublas->gemmStridedBatchedEx(
        rank.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, CUDA_R_32F,
        n, 0, a, CUDA_R_32F, k, 0, &beta, c, CUDA_R_32F, n, 0, 1,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  if (int status = gemm()) {
    std::fprintf(stderr, "sbp-bench-cublas: %s\n",
                 cublas->getStatusString(status));
    return 3;
  }
  sbp_cuda_synchronize();
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    auto begin = std::chrono::steady_clock::now();
    gemm();
    if (const char *problem = sbp_cuda_synchronize()) {
      std::fprintf(stderr, "sbp-bench-cublas: %s\n", problem);
      return 3;
    }
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - begin)
                        .count());
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  std::printf("cublas_ms=%.4f tflops=%.2f\n", median,
              2.0 * m * n * k / (median * 1e-3) / 1e12);
  sbp_cuda_free(a);
  sbp_cuda_free(b);
  sbp_cuda_free(c);
  sbp_cuda_rank_end();
  return 0;
}
