//===- ProgressLineTest.cpp - The search's status line --------------------===//

#include "sbp/Transforms/ProgressLine.h"
#include "gtest/gtest.h"

using namespace mlir::sbp;

namespace {

/// Shows at once and every time: what is shown depends on the stream and
/// the quiet flags only.
constexpr ProgressTiming kAlways = {0, 0, 0};

TEST(ProgressLine, LogsLinesOffTerminal) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    ProgressLine line("search: ", /*quiet=*/false, os, kAlways);
    line.update("@f: 92 nodes to place");
    line.note("@f: 2 stages");
  }
  // A string is no terminal: plain lines, no carriage returns or escapes.
  EXPECT_NE(text.find("search: 0.0 s, @f: 92 nodes to place\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("search: @f: 2 stages (0.0 s)\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
}

TEST(ProgressLine, ThrottlesAndWaits) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressLine line("search: ", /*quiet=*/false, os, {0, 0, 3600});
  line.update("first");
  line.update("second");
  EXPECT_NE(text.find("first"), std::string::npos);
  EXPECT_EQ(text.find("second"), std::string::npos) << text;
  ProgressLine later("search: ", /*quiet=*/false, os, {3600, 0, 0});
  later.update("too early");
  later.note("too early too");
  EXPECT_EQ(text.find("too early"), std::string::npos) << text;
}

TEST(ProgressLine, QuietShowsNothing) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    ProgressLine line("search: ", /*quiet=*/true, os, kAlways);
    line.update("status");
    line.note("note");
  }
  ProgressLine::setQuiet(true);
  {
    ProgressLine line("search: ", /*quiet=*/false, os, kAlways);
    line.update("status");
    line.note("note");
  }
  ProgressLine::setQuiet(false);
  EXPECT_EQ(text, "");
}

} // namespace
