//===- ProgressLine.h - One status line for long work -----------*- C++ -*-===//
//
// What a long search shows while it runs: like a tool, not a log.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_PROGRESSLINE_H
#define SBP_TRANSFORMS_PROGRESSLINE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <string>

namespace mlir {
namespace sbp {

/// Seconds before a ProgressLine shows anything, and between two statuses
/// it shows on a terminal and otherwise.
struct ProgressTiming {
  double first = 1, terminalEvery = 0.1, logEvery = 5;
};

/// One status line, `<prefix><elapsed> s, <status>`: rewritten in place on
/// a terminal (at most ten times a second), a line every five seconds
/// otherwise, nothing in the first second nor when quiet. Notes are lines
/// that stay, printed under the same conditions but unthrottled.
class ProgressLine {
public:
  /// Shows nothing when `quiet` or when the process is quiet.
  explicit ProgressLine(std::string prefix, bool quiet = false,
                        llvm::raw_ostream &os = llvm::errs(),
                        ProgressTiming timing = ProgressTiming());
  /// Clears the status line from a terminal.
  ~ProgressLine();

  /// Shows `status`, if its time has come.
  void update(const llvm::Twine &status);
  /// Prints `message` as a line of its own (after one second).
  void note(const llvm::Twine &message);

  /// Silences every progress line of the process (the tools' `--quiet`).
  static void setQuiet(bool quiet);
  static bool isQuiet();

private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;
  void clear();

  std::string prefix;
  bool quiet;
  llvm::raw_ostream &os;
  bool terminal;
  ProgressTiming timing;
  Clock::time_point start;
  /// When the status was last shown; whether one is on the terminal now.
  double shownAt = -1;
  bool showing = false;
};

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PROGRESSLINE_H
