//===- all_reduce_bench.cpp - Threads all-reduce against memcpy -----------===//
//
// Sums a 64 MiB f32 tensor across 2 ranks of the threads backend and compares
// its bandwidth (bytes of the tensor per second) with memcpy of the same
// buffer on one thread, measured in the same run. Prints one line with the
// ratio; median of the given number of iterations (default 20).
//
//===----------------------------------------------------------------------===//

#include "sbp/Runtime/sbp_runtime.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const int64_t bytes = 64ll << 20, count = bytes / 4;
  const int64_t shape[] = {count};

  std::vector<float> src(count, 1.0f), dst(count, 0.0f);
  std::vector<double> memcpyTimes;
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    memcpyTimes.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
  }

  const int64_t mesh[] = {2}, axes[] = {0};
  sbp_world *world = sbp_threads_world_create(mesh, 1, 300);
  std::vector<std::vector<float>> in(2, std::vector<float>(count, 1.0f));
  std::vector<std::vector<float>> out(2, std::vector<float>(count, 0.0f));
  std::vector<double> reduceTimes;
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    std::vector<std::thread> ranks;
    for (int r = 0; r < 2; ++r)
      ranks.emplace_back([&, r] {
        sbp_tensor a = {in[r].data(), 1, shape, SBP_F32};
        sbp_tensor b = {out[r].data(), 1, shape, SBP_F32};
        sbp_all_reduce(sbp_world_comm(world, r), axes, 1, &a, &b, SBP_SUM);
      });
    for (std::thread &t : ranks)
      t.join();
    reduceTimes.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (const char *error = sbp_world_error(world)) {
    std::fprintf(stderr, "all_reduce failed: %s\n", error);
    return 3;
  }
  if (out[1][count - 1] != 2.0f) {
    std::fprintf(stderr, "all_reduce gave %f, not 2\n", out[1][count - 1]);
    return 1;
  }
  sbp_world_destroy(world);

  double memcpyGBs = bytes / median(memcpyTimes) / 1e9;
  double reduceGBs = bytes / median(reduceTimes) / 1e9;
  std::printf("all_reduce 64 MiB f32, 2 ranks (threads): %.2f GB/s; memcpy "
              "%.2f GB/s; ratio %.2f\n",
              reduceGBs, memcpyGBs, reduceGBs / memcpyGBs);
  return 0;
}
