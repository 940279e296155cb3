//===- BoxingPlanTest.cpp - The boxing table and nd plans -----------------===//

#include "sbp/Dialect/Sbp/Utils/BoxingPlan.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

const SbpEntry B = SbpEntry::broadcast();
const SbpEntry P = SbpEntry::partial(ReductionKind::Sum);
const SbpEntry Pmax = SbpEntry::partial(ReductionKind::Max);
SbpEntry S(int64_t dim) { return SbpEntry::split(dim); }

/// A 16x16 f32 tensor: T = 1024 bytes.
BoxingPlan plan1d(SbpEntry from, SbpEntry to, int64_t p = 4) {
  return planBoxing({from}, {to}, {16, 16}, 4, {p});
}

std::string kinds(const BoxingPlan &plan) {
  std::string result;
  for (const BoxingStep &step : plan.steps)
    result += (result.empty() ? "" : " ") + std::to_string(step.axis) + ":" +
              stringifyBoxingKind(step.kind).str();
  return result;
}

TEST(BoxingTable, OneAxis) {
  constexpr double t = 1024, p = 4;
  struct Row {
    SbpEntry from, to;
    const char *kind;
    double bytes;
  } rows[] = {
      {P, B, "0:all_reduce", 2 * (p - 1) / p * t},
      {P, S(1), "0:reduce_scatter", (p - 1) / p * t},
      {S(0), B, "0:all_gather", (p - 1) / p * t},
      {S(0), S(1), "0:all_to_all", (p - 1) / (p * p) * t},
      {B, S(1), "0:slice", 0},
      {B, P, "0:keep_on_first", 0},
      {S(0), P, "0:pad_with_neutral", 0},
      {B, Pmax, "0:relabel", 0},
      {Pmax, B, "0:all_reduce", 2 * (p - 1) / p * t},
  };
  for (const Row &row : rows) {
    BoxingPlan plan = plan1d(row.from, row.to);
    EXPECT_EQ(kinds(plan), row.kind);
    EXPECT_DOUBLE_EQ(plan.bytes, row.bytes);
  }
}

TEST(BoxingTable, SameLayoutIsFree) {
  EXPECT_TRUE(plan1d(S(0), S(0)).steps.empty());
  EXPECT_EQ(getBoxingBytes({S(0), P}, {S(0), P}, {8, 8}, 4, {2, 2}), 0);
}

TEST(BoxingTable, PartialKindsChangeThroughBroadcast) {
  EXPECT_EQ(kinds(plan1d(P, Pmax)), "0:all_reduce 0:relabel");
}

TEST(BoxingPlan, AxesWorkOnTheirGroupsPiece) {
  // [S(0), P] -> [S(0), B] all-reduces over axis 1 the half held per row of
  // the mesh: T = 512 bytes, p = 4.
  BoxingPlan plan = planBoxing({S(0), P}, {S(0), B}, {16, 16}, 4, {2, 4});
  EXPECT_EQ(kinds(plan), "1:all_reduce");
  EXPECT_DOUBLE_EQ(plan.bytes, 2.0 * 3 / 4 * 512);
}

TEST(BoxingPlan, InnermostSplitGathersFirst) {
  // Both axes split dim 0: only axis 1's pieces are contiguous, so it goes
  // first.
  BoxingPlan plan = planBoxing({S(0), S(0)}, {B, B}, {16, 16}, 4, {2, 4});
  EXPECT_EQ(kinds(plan), "1:all_gather 0:all_gather");
}

TEST(BoxingPlan, ChoosesTheCheaperOrder) {
  // Reducing over axis 0 before gathering over axis 1 reduces a quarter of
  // the tensor (2 * 1/2 * 256 bytes, then 3/4 * 1024); the other order
  // gathers first and reduces all of it (3/4 * 1024, then 2 * 1/2 * 1024).
  BoxingPlan plan = planBoxing({P, S(0)}, {B, B}, {16, 16}, 4, {2, 4});
  EXPECT_EQ(kinds(plan), "0:all_reduce 1:all_gather");
  EXPECT_DOUBLE_EQ(plan.bytes, 256 + 768);
}

TEST(BoxingPlan, SkipsOrdersThatBreakContiguity) {
  // The all-to-all over axis 1 first would be cheaper, but then axis 0 could
  // not reduce-scatter dim 1 (axis 1 splits it after axis 0).
  BoxingPlan plan = planBoxing({P, S(0)}, {S(1), S(1)}, {16, 16}, 4, {2, 4});
  EXPECT_EQ(kinds(plan), "0:reduce_scatter 1:all_to_all");
  EXPECT_DOUBLE_EQ(plan.bytes, 128 + 96);
}

TEST(BoxingPlan, SwappedSplitsGoThroughBroadcast) {
  // [S(0), S(1)] -> [S(1), S(0)]: no direct order keeps pieces contiguous.
  BoxingPlan plan = planBoxing({S(0), S(1)}, {S(1), S(0)}, {8, 8}, 4, {2, 2});
  EXPECT_EQ(kinds(plan), "1:all_gather 0:all_gather 0:slice 1:slice");
}

TEST(BoxingPlan, InnerSplitsOfTheSameDimensionAreRedone) {
  // Axis 0 cannot re-split while axis 1 still splits dim 0 inside it:
  // axis 1 is gathered and split again around it.
  BoxingPlan plan = planBoxing({S(0), S(0)}, {S(1), S(0)}, {8, 12}, 4, {2, 2});
  EXPECT_EQ(kinds(plan), "1:all_gather 0:all_gather 0:slice 1:slice");
}

TEST(BoxingPlan, UnevenPiecesCountAtTheirLargest) {
  // 10 rows over 4: the gather works on the whole 10x1 column group.
  BoxingPlan plan = planBoxing({S(0)}, {B}, {10, 1}, 4, {4});
  EXPECT_DOUBLE_EQ(plan.bytes, 3.0 / 4 * 40);
}

} // namespace
