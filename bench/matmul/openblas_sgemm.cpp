//===- openblas_sgemm.cpp - OpenBLAS single-thread SGEMM, the peer --------===//
//
// Usage: sbp-bench-sgemm N ITERATIONS. Times C = A B for N x N f32 matrices
// with OpenBLAS on one thread and prints "time_ms median=.. min=..", the
// same line sbp-run --bench prints.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  int iterations = argc > 2 ? std::atoi(argv[2]) : 10;
  openblas_set_num_threads(1);
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  std::vector<double> times;
  for (int it = 0; it <= iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                a.data(), n, b.data(), n, 0.0f, c.data(), n);
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    if (it > 0)
      times.push_back(took.count());
  }
  std::sort(times.begin(), times.end());
  std::printf("time_ms median=%.3f min=%.3f iterations=%d\n",
              times[times.size() / 2], times[0], iterations);
  return 0;
}
