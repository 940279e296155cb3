//===- ShardsTest.cpp - Cutting tensors into shards and back --------------===//

#include "sbp/Runtime/Shards.h"
#include "gtest/gtest.h"
#include <cstring>

using namespace sbp::runtime;

namespace {

/// A float array of `shape` holding 0, 1, 2, ...
NpyArray iota(std::vector<int64_t> shape) {
  NpyArray array;
  array.shape = std::move(shape);
  array.data.resize(array.numElements() * sizeof(float));
  auto *data = reinterpret_cast<float *>(array.data.data());
  for (int64_t i = 0; i < array.numElements(); ++i)
    data[i] = static_cast<float>(i);
  return array;
}

std::vector<float> values(const NpyArray &array) {
  const auto *data = reinterpret_cast<const float *>(array.data.data());
  return std::vector<float>(data, data + array.numElements());
}

LayoutEntry split(int64_t dim) { return {LayoutEntry::Split, dim, SBP_SUM}; }
LayoutEntry broadcast() { return {LayoutEntry::Broadcast, 0, SBP_SUM}; }
LayoutEntry partial(sbp_reduction kind) {
  return {LayoutEntry::Partial, 0, kind};
}

/// Cuts `global` for every rank and assembles the shards again.
NpyArray roundTrip(const NpyArray &global, const Layout &layout) {
  int64_t ranks = 1;
  for (int64_t size : layout.meshShape)
    ranks *= size;
  std::vector<NpyArray> shards;
  for (int64_t rank = 0; rank < ranks; ++rank)
    shards.push_back(
        extractShard(global, layout, getCoords(layout.meshShape, rank)));
  NpyArray result;
  std::string error;
  EXPECT_TRUE(assembleShards(shards, layout, global.shape, result, error))
      << error;
  return result;
}

TEST(Shards, BalancedSplitGivesTheFirstRanksOneMore) {
  NpyArray global = iota({5, 2});
  Layout layout{{2}, {split(0)}};
  NpyArray first = extractShard(global, layout, {0});
  NpyArray second = extractShard(global, layout, {1});
  EXPECT_EQ(first.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(second.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(second), (std::vector<float>{6, 7, 8, 9}));
}

TEST(Shards, HierarchicalSplitOfOneDimension) {
  // Axis 0 splits 7 rows into 4 + 3, axis 1 splits each piece again.
  NpyArray global = iota({7, 1});
  Layout layout{{2, 2}, {split(0), split(0)}};
  EXPECT_EQ(values(extractShard(global, layout, {0, 1})),
            (std::vector<float>{2, 3}));
  EXPECT_EQ(values(extractShard(global, layout, {1, 0})),
            (std::vector<float>{4, 5}));
  EXPECT_EQ(values(extractShard(global, layout, {1, 1})),
            (std::vector<float>{6}));
}

TEST(Shards, PartialShardsReduceBackToTheValue) {
  NpyArray global = iota({3});
  for (sbp_reduction kind : {SBP_SUM, SBP_MAX, SBP_MIN}) {
    Layout layout{{3}, {partial(kind)}};
    NpyArray other = extractShard(global, layout, {2});
    EXPECT_NE(values(other), values(global));
    EXPECT_EQ(values(roundTrip(global, layout)), values(global));
  }
}

TEST(Shards, RoundTripsOnATwoByTwoMesh) {
  NpyArray global = iota({5, 3});
  for (auto entries : std::vector<std::vector<LayoutEntry>>{
           {split(0), split(1)},
           {split(1), broadcast()},
           {broadcast(), split(0)},
           {partial(SBP_SUM), split(1)},
           {split(0), partial(SBP_SUM)},
           {partial(SBP_MAX), partial(SBP_MAX)}}) {
    Layout layout{{2, 2}, entries};
    EXPECT_EQ(values(roundTrip(global, layout)), values(global));
  }
}

TEST(Shards, AShardOfTheWrongShapeIsReported) {
  NpyArray global = iota({4});
  Layout layout{{2}, {split(0)}};
  std::vector<NpyArray> shards = {iota({2}), iota({3})};
  NpyArray result;
  std::string error;
  EXPECT_FALSE(assembleShards(shards, layout, global.shape, result, error));
  EXPECT_EQ(error, "rank 1 returned a shard of another shape or type than "
                   "its layout implies");
}

} // namespace
