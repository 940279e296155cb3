//===- NdSbpAttrTest.cpp - nd-SBP attribute and mesh utilities ------------===//

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

class NdSbpAttrTest : public ::testing::Test {
protected:
  NdSbpAttrTest() { context.loadDialect<SbpDialect>(); }

  NdSbpAttr parse(StringRef text) {
    return dyn_cast_or_null<NdSbpAttr>(parseAttribute(text, &context));
  }

  std::string print(Attribute attr) {
    std::string result;
    llvm::raw_string_ostream os(result);
    attr.print(os);
    return result;
  }

  MLIRContext context;
};

TEST_F(NdSbpAttrTest, ParsesAndPrintsEveryEntry) {
  NdSbpAttr attr = parse("#sbp.nd<@m, [S(1), B, P, P(sum)]>");
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.size(), 4u);
  EXPECT_EQ(attr.getEntries()[0], SbpEntry::split(1));
  EXPECT_EQ(attr.getEntries()[2], SbpEntry::partial(ReductionKind::Sum));
  EXPECT_EQ(attr.getEntries()[2], attr.getEntries()[3]);
  EXPECT_EQ(print(attr), "#sbp.nd<@m, [S(1), B, P(sum), P(sum)]>");
  EXPECT_EQ(print(parse("#sbp.nd<@m, [P(max), B, P(max)]>")),
            "#sbp.nd<@m, [P(max), B, P(max)]>");
  EXPECT_EQ(print(parse("#sbp.nd<@m, [P(min)]>")), "#sbp.nd<@m, [P(min)]>");
}

TEST_F(NdSbpAttrTest, EqualAttributesAreUniqued) {
  EXPECT_EQ(parse("#sbp.nd<@m, [P, S(0)]>"),
            parse("#sbp.nd<@m, [P(sum), S(0)]>"));
  EXPECT_NE(parse("#sbp.nd<@m, [S(0), B]>"), parse("#sbp.nd<@m, [B, S(0)]>"));
  EXPECT_NE(parse("#sbp.nd<@m, [B]>"), parse("#sbp.nd<@n, [B]>"));
  EXPECT_NE(parse("#sbp.nd<@m, [P(max)]>"), parse("#sbp.nd<@m, [P(min)]>"));
}

TEST_F(NdSbpAttrTest, RejectsMalformedEntries) {
  // Diagnostics go to the context's handler; silence them.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  EXPECT_FALSE(parse("#sbp.nd<@m, [Q(1)]>"));
  EXPECT_FALSE(parse("#sbp.nd<@m, [S(-1)]>"));
  EXPECT_FALSE(parse("#sbp.nd<@m, [P(avg)]>"));
  EXPECT_FALSE(parse("#sbp.nd<@m, []>"));
  EXPECT_FALSE(parse("#sbp.nd<@m, [B"));
}

TEST_F(NdSbpAttrTest, Queries) {
  NdSbpAttr replicated = parse("#sbp.nd<@m, [B, B]>");
  NdSbpAttr mixed = parse("#sbp.nd<@m, [S(1), P(max), S(1)]>");
  EXPECT_TRUE(replicated.isReplicated());
  EXPECT_FALSE(replicated.hasPartial());
  EXPECT_FALSE(mixed.isReplicated());
  EXPECT_TRUE(mixed.hasPartial());
  EXPECT_EQ(mixed.getSplitAxes(1), (SmallVector<int64_t>{0, 2}));
  EXPECT_TRUE(mixed.getSplitAxes(0).empty());
}

TEST_F(NdSbpAttrTest, OneFlowNotation) {
  EXPECT_EQ(parse("#sbp.nd<@m, [S(0), B]>").toOneFlowString(), "(S(0), B)");
  EXPECT_EQ(parse("#sbp.nd<@m, [P, B]>").toOneFlowString(), "(P, B)");
  EXPECT_EQ(parse("#sbp.nd<@m, [P(max), P(max)]>").toOneFlowString(),
            "(P(max), P(max))");
}

TEST_F(NdSbpAttrTest, LocalShapeThroughTheAttribute) {
  NdSbpAttr attr = parse("#sbp.nd<@m, [S(0), S(1)]>");
  EXPECT_EQ(attr.getLocalShape({9, 16}, {2, 4}, {0, 2}),
            (SmallVector<int64_t>{5, 4}));
  EXPECT_EQ(attr.getLocalShape({9, 16}, {2, 4}, {1, 2}),
            (SmallVector<int64_t>{4, 4}));
  EXPECT_EQ(attr.getLocalShape({9, 16}, {2, 4}),
            (SmallVector<int64_t>{ShapedType::kDynamic, 4}));
}

TEST_F(NdSbpAttrTest, MeshCoordinatesAreRowMajor) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>("sbp.mesh @m shape = [2, 3, 4]", &context);
  ASSERT_TRUE(module);
  auto mesh = cast<MeshOp>(module->getBody()->front());
  EXPECT_EQ(mesh.getNumDevices(), 24);
  EXPECT_EQ(mesh.getCoords(0), (SmallVector<int64_t>{0, 0, 0}));
  EXPECT_EQ(mesh.getCoords(5), (SmallVector<int64_t>{0, 1, 1}));
  EXPECT_EQ(mesh.getCoords(23), (SmallVector<int64_t>{1, 2, 3}));
}

} // namespace
