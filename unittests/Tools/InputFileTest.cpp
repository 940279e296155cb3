//===- InputFileTest.cpp - Rewriting the sbp syntax before parsing --------===//

#include "sbp/Tools/InputFile.h"
#include "gtest/gtest.h"

using namespace mlir::sbp;

namespace {

TEST(NormalizeSbpSyntax, Annotate) {
  EXPECT_EQ(normalizeSbpSyntax(
                "%y = sbp.annotate %x #sbp.nd<@m, [S(0)]> : tensor<8xf32>"),
            "%y = sbp.annotate %x,       <@m, [S(0)]> : tensor<8xf32>");
}

TEST(NormalizeSbpSyntax, BoxingWithResultNumber) {
  EXPECT_EQ(
      normalizeSbpSyntax("sbp.boxing %r#1 #sbp.nd<@m, [P]> -> "
                         "#sbp.nd<@m, [B]> : tensor<8xf32>"),
      "sbp.boxing %r#1,       <@m, [P]> ->        <@m, [B]> : tensor<8xf32>");
}

TEST(NormalizeSbpSyntax, KeepsLineAndColumnNumbers) {
  std::string in = "%y = sbp.annotate %x\n    #sbp.nd<@m, [B]>\n    : "
                   "tensor<8xf32>\n%z = foo";
  std::string out = normalizeSbpSyntax(in);
  EXPECT_EQ(out, "%y = sbp.annotate %x,\n           <@m, [B]>\n    : "
                 "tensor<8xf32>\n%z = foo");
  // Every line after the first keeps its length.
  EXPECT_EQ(out.size(), in.size() + 1);
}

TEST(NormalizeSbpSyntax, LeavesOtherTextAlone) {
  for (const char *text :
       {"%y = sbp.annotate %x, <@m, [B]> : tensor<8xf32>",
        "\"sbp.annotate\"(%x) <{sharding = #sbp.nd<@m, [B]>}>",
        "func.func @f(%x: tensor<8xf32> {sbp.sharding = #sbp.nd<@m, [B]>})",
        "mysbp.annotate %x #sbp.nd<@m, [B]>", "sbp.annotated %x #foo",
        "sbp.annotate", "sbp.boxing %"})
    EXPECT_EQ(normalizeSbpSyntax(text), text);
}

} // namespace
