//===- Float16Test.cpp - 16-bit floats on the host ------------------------===//

#include "sbp/Runtime/Float16.h"
#include "sbp/Runtime/sbp_runtime.h"
#include "gtest/gtest.h"
#include <cmath>
#include <thread>
#include <vector>

using namespace sbp::runtime;

namespace {

TEST(Float16, HalfRoundTripsEveryValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = halfToFloat(uint16_t(bits));
    if (std::isnan(value))
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value)))) << bits;
    else
      EXPECT_EQ(floatToHalf(value), bits) << bits;
  }
}

TEST(Float16, HalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  // Halfway between 65504 and the next step rounds to infinity.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  // Between 1 and 1 + 2^-10: ties go to the even fraction.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  // Subnormals: units of 2^-24.
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
}

TEST(Float16, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBFloat16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(floatToBFloat16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(NAN))));
  for (uint32_t bits = 0; bits < 0x10000; ++bits)
    if (!std::isnan(bfloat16ToFloat(uint16_t(bits))))
      EXPECT_EQ(floatToBFloat16(bfloat16ToFloat(uint16_t(bits))), bits);
}

// Rank 0 holds 1 and the others 2^-8 each, half of bf16's last place at
// 1: added in bf16 one at a time, each rounds back to 1 (ties to even);
// the runtime adds in f32 and rounds once: 1 + 3 * 2^-8, a tie between
// 1 + 2^-7 and 1 + 2^-6, rounds to 1 + 2^-6. Both the all-reduce and the
// reduce-scatter (each rank keeping one of four elements) do.
void expectSumRoundedOnce(bool scatter) {
  const int64_t mesh[] = {4}, axes[] = {0}, shape[] = {4}, piece[] = {1};
  sbp_world *world = sbp_threads_world_create(mesh, 1, 30);
  std::vector<std::vector<BFloat16>> outputs(4, std::vector<BFloat16>(4));
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      std::vector<BFloat16> in(4, BFloat16(r == 0 ? 1.0f : 0x1p-8f));
      sbp_tensor input{in.data(), 1, shape, SBP_BF16};
      sbp_tensor output{outputs[r].data(), 1, scatter ? piece : shape,
                        SBP_BF16};
      sbp_comm *comm = sbp_world_comm(world, r);
      EXPECT_EQ(
          scatter
              ? sbp_reduce_scatter(comm, axes, 1, &input, &output, 0, SBP_SUM)
              : sbp_all_reduce(comm, axes, 1, &input, &output, SBP_SUM),
          SBP_OK);
    });
  for (std::thread &t : threads)
    t.join();
  sbp_world_destroy(world);
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < (scatter ? 1 : 4); ++i)
      EXPECT_EQ(float(outputs[r][i]), 1.0f + 0x1p-6f) << r << " " << i;
}

TEST(Float16, AllReduceAddsInFloat) { expectSumRoundedOnce(false); }

TEST(Float16, ReduceScatterAddsInFloat) { expectSumRoundedOnce(true); }

} // namespace
