//===- HloShardingTest.cpp - XLA sharding strings as nd-SBP ---------------===//

#include "../../lib/Import/StableHLO/HloSharding.h"
#include "gtest/gtest.h"

using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;

namespace {

/// Entries as text: `S0`, `B` per mesh axis.
std::string entries(const HloShardingSet &set, int index) {
  llvm::SmallVector<SbpEntry> result;
  std::string error;
  if (!set.getEntries(index, result, error))
    return "error: " + error;
  std::string text;
  for (const SbpEntry &entry : result)
    text += (text.empty() ? "" : " ") +
            (entry.isSplit() ? "S" + std::to_string(entry.getDim()) : "B");
  return text;
}

TEST(HloShardingTest, OneAxis) {
  HloShardingSet set;
  std::string error;
  int index = set.add("{devices=[1,2]<=[2]}", error);
  ASSERT_GE(index, 0) << error;
  ASSERT_TRUE(set.buildMesh(error)) << error;
  EXPECT_EQ(set.getMeshShape().vec(), std::vector<int64_t>({2}));
  EXPECT_EQ(entries(set, index), "S1");
}

TEST(HloShardingTest, MegatronOnTwoByTwo) {
  // JAX's P('x', None) and P(None, 'y') on a ('x', 'y') = 2x2 mesh.
  HloShardingSet set;
  std::string error;
  int rows = set.add("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", error);
  int cols =
      set.add("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", error);
  int both = set.add("{devices=[2,2]<=[4]}", error);
  int none = set.add("{replicated}", error);
  ASSERT_TRUE(rows >= 0 && cols >= 0 && both >= 0 && none >= 0) << error;
  ASSERT_TRUE(set.buildMesh(error)) << error;
  EXPECT_EQ(set.getMeshShape().vec(), std::vector<int64_t>({2, 2}));
  EXPECT_EQ(entries(set, rows), "S0 B");
  EXPECT_EQ(entries(set, cols), "B S1");
  EXPECT_EQ(entries(set, both), "S0 S1");
  EXPECT_EQ(entries(set, none), "B B");
}

TEST(HloShardingTest, OneDimensionOverTwoAxes) {
  // Dim 0 over all 4 devices, next to a sharding that cuts them in 2x2.
  HloShardingSet set;
  std::string error;
  int whole = set.add("{devices=[4,1]<=[4]}", error);
  int half = set.add("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", error);
  ASSERT_TRUE(whole >= 0 && half >= 0) << error;
  ASSERT_TRUE(set.buildMesh(error)) << error;
  EXPECT_EQ(set.getMeshShape().vec(), std::vector<int64_t>({2, 2}));
  EXPECT_EQ(entries(set, whole), "S0 S0");
  EXPECT_EQ(entries(set, half), "S0 B");
}

TEST(HloShardingTest, ExplicitDeviceLists) {
  HloShardingSet set;
  std::string error;
  int plain = set.add("{devices=[2,2]0,1,2,3}", error);
  int transposed =
      set.add("{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", error);
  ASSERT_TRUE(plain >= 0 && transposed >= 0) << error;
  ASSERT_TRUE(set.buildMesh(error)) << error;
  EXPECT_EQ(entries(set, plain), "S0 S1");
  EXPECT_EQ(entries(set, transposed), "B S1");
}

TEST(HloShardingTest, Errors) {
  HloShardingSet set;
  std::string error;
  EXPECT_LT(set.add("devices=[2]<=[2]", error), 0);
  EXPECT_NE(error.find("expected a sharding in braces"), std::string::npos);
  EXPECT_LT(set.add("{devices=[2]0,3}", error), 0);
  EXPECT_NE(error.find("not a (transposed) row-major order"),
            std::string::npos);
  EXPECT_LT(set.add("{devices=[3]<=[2]}", error), 0);
  EXPECT_NE(error.find("does not match its 3 tiles"), std::string::npos);
  EXPECT_LT(set.add("{devices=[2]<=[2] last_tile_dims={manual}}", error), 0);
  EXPECT_NE(error.find("manual shardings"), std::string::npos);
  ASSERT_GE(set.add("{devices=[2]<=[2]}", error), 0);
  EXPECT_LT(set.add("{devices=[4]<=[4]}", error), 0);
  EXPECT_NE(error.find("uses 4 devices but an earlier one uses 2"),
            std::string::npos);
}

TEST(HloShardingTest, UnevenAxes) {
  // 6 devices as 2x3: dim 0 over the 2, then over the 3 (a transposed iota).
  HloShardingSet set;
  std::string error;
  int overTwo =
      set.add("{devices=[2,1,3]<=[6] last_tile_dim_replicate}", error);
  int overThree =
      set.add("{devices=[3,1,2]<=[2,3]T(1,0) last_tile_dim_replicate}", error);
  ASSERT_TRUE(overTwo >= 0 && overThree >= 0) << error;
  ASSERT_TRUE(set.buildMesh(error)) << error;
  EXPECT_EQ(set.getMeshShape().vec(), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(entries(set, overTwo), "S0 B");
  EXPECT_EQ(entries(set, overThree), "B S0");
}

TEST(HloShardingTest, IncompatibleDeviceOrders) {
  // Digit boundaries 3 and 2 of 6 devices: no mixed radix has both.
  HloShardingSet set;
  std::string error;
  ASSERT_GE(set.add("{devices=[2,1,3]<=[6] last_tile_dim_replicate}", error),
            0);
  ASSERT_GE(set.add("{devices=[3,1,2]<=[6] last_tile_dim_replicate}", error),
            0);
  EXPECT_FALSE(set.buildMesh(error));
  EXPECT_NE(error.find("cannot share one mesh"), std::string::npos);
}

} // namespace
