//===- ProgressLine.cpp - One status line for long work -------------------===//

#include "sbp/Transforms/ProgressLine.h"
#include "llvm/Support/FormatVariadic.h"
#include <atomic>

using namespace mlir::sbp;

namespace {
std::atomic<bool> quietFlag{false};
} // namespace

void ProgressLine::setQuiet(bool quiet) { quietFlag = quiet; }
bool ProgressLine::isQuiet() { return quietFlag; }

ProgressLine::ProgressLine(std::string prefix, bool quiet,
                           llvm::raw_ostream &os, ProgressTiming timing)
    : prefix(std::move(prefix)), quiet(quiet || isQuiet()), os(os),
      terminal(os.is_displayed()), timing(timing), start(Clock::now()) {}

ProgressLine::~ProgressLine() { clear(); }

double ProgressLine::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void ProgressLine::clear() {
  if (!showing)
    return;
  // Back to the line's start, erased to its end.
  os << "\r\x1b[K";
  os.flush();
  showing = false;
}

void ProgressLine::update(const llvm::Twine &status) {
  double now = elapsed();
  double every = terminal ? timing.terminalEvery : timing.logEvery;
  if (quiet || now < timing.first || (shownAt >= 0 && now - shownAt < every))
    return;
  shownAt = now;
  std::string text =
      llvm::formatv("{0}{1:F1} s, {2}", prefix, now, status.str()).str();
  if (!terminal) {
    os << text << "\n";
    return;
  }
  // One line: what does not fit a common terminal is cut.
  constexpr size_t kWidth = 119;
  if (text.size() > kWidth)
    text.resize(kWidth);
  os << "\r" << text << "\x1b[K";
  os.flush();
  showing = true;
}

void ProgressLine::note(const llvm::Twine &message) {
  double now = elapsed();
  if (quiet || now < timing.first)
    return;
  clear();
  os << prefix << message << llvm::formatv(" ({0:F1} s)\n", now);
}
