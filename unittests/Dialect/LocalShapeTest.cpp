//===- LocalShapeTest.cpp - Balanced splits and local shapes --------------===//

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpAttrs.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(BalancedSplit, EvenSizes) {
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(getBalancedChunkSize(8, 4, i), 2);
    EXPECT_EQ(getBalancedChunkOffset(8, 4, i), 2 * i);
  }
}

TEST(BalancedSplit, FirstRanksGetOneMore) {
  // 10 = 3 + 3 + 2 + 2.
  int64_t sizes[] = {3, 3, 2, 2}, offsets[] = {0, 3, 6, 8};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(getBalancedChunkSize(10, 4, i), sizes[i]);
    EXPECT_EQ(getBalancedChunkOffset(10, 4, i), offsets[i]);
  }
}

TEST(BalancedSplit, FewerRowsThanRanks) {
  int64_t total = 0;
  for (int64_t i = 0; i < 5; ++i)
    total += getBalancedChunkSize(3, 5, i);
  EXPECT_EQ(total, 3);
  EXPECT_EQ(getBalancedChunkSize(3, 5, 2), 1);
  EXPECT_EQ(getBalancedChunkSize(3, 5, 3), 0);
  EXPECT_EQ(getBalancedChunkOffset(3, 5, 4), 3);
}

TEST(BalancedSplit, PiecesTileTheDimension) {
  for (int64_t size = 0; size < 40; ++size)
    for (int64_t parts = 1; parts < 9; ++parts) {
      int64_t next = 0;
      for (int64_t i = 0; i < parts; ++i) {
        EXPECT_EQ(getBalancedChunkOffset(size, parts, i), next);
        next += getBalancedChunkSize(size, parts, i);
      }
      EXPECT_EQ(next, size);
    }
}

TEST(BalancedSplit, DynamicStaysDynamic) {
  EXPECT_EQ(getBalancedChunkSize(kDyn, 4, 1), kDyn);
}

TEST(LocalShape, SplitAndBroadcast) {
  SmallVector<SbpEntry> entries = {SbpEntry::split(0), SbpEntry::broadcast()};
  EXPECT_EQ(getLocalShape({8, 16}, entries, {2, 4}, {1, 3}),
            (SmallVector<int64_t>{4, 16}));
  EXPECT_EQ(getLocalShape({8, 16}, entries, {2, 4}),
            (SmallVector<int64_t>{4, 16}));
}

TEST(LocalShape, TwoDimensions) {
  SmallVector<SbpEntry> entries = {SbpEntry::split(0), SbpEntry::split(1)};
  EXPECT_EQ(getLocalShape({8, 16}, entries, {2, 4}),
            (SmallVector<int64_t>{4, 4}));
}

TEST(LocalShape, PartialKeepsTheFullShape) {
  SmallVector<SbpEntry> entries = {SbpEntry::partial(), SbpEntry::split(1)};
  EXPECT_EQ(getLocalShape({8, 16}, entries, {2, 4}),
            (SmallVector<int64_t>{8, 4}));
}

TEST(LocalShape, HierarchicalUnevenSplit) {
  // 10 rows over axis 0 (2): 5 + 5; each 5 over axis 1 (4): 2 + 1 + 1 + 1.
  SmallVector<SbpEntry> entries = {SbpEntry::split(0), SbpEntry::split(0)};
  EXPECT_EQ(getLocalShape({10, 3}, entries, {2, 4}, {0, 0})[0], 2);
  EXPECT_EQ(getLocalShape({10, 3}, entries, {2, 4}, {0, 1})[0], 1);
  EXPECT_EQ(getLocalShape({10, 3}, entries, {2, 4}, {1, 0})[0], 2);
  EXPECT_EQ(getLocalShape({10, 3}, entries, {2, 4}, {1, 3})[0], 1);
  int64_t total = 0;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      total += getLocalShape({10, 3}, entries, {2, 4}, {a, b})[0];
  EXPECT_EQ(total, 10);
}

TEST(LocalShape, UnevenSplitIsDynamicWhenCommonToAllRanks) {
  SmallVector<SbpEntry> entries = {SbpEntry::split(0)};
  EXPECT_EQ(getLocalShape({10, 3}, entries, {4}),
            (SmallVector<int64_t>{kDyn, 3}));
  EXPECT_EQ(getLocalShape({12, 3}, entries, {4}), (SmallVector<int64_t>{3, 3}));
}

TEST(LocalShape, SplitOverAWholeMeshAxisOfOne) {
  SmallVector<SbpEntry> entries = {SbpEntry::split(1), SbpEntry::split(1)};
  EXPECT_EQ(getLocalShape({5, 7}, entries, {1, 1}),
            (SmallVector<int64_t>{5, 7}));
}

} // namespace
