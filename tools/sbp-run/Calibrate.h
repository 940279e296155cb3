//===- Calibrate.h - Measuring this host for the cost model -----*- C++ -*-===//

#ifndef SBP_RUN_CALIBRATE_H
#define SBP_RUN_CALIBRATE_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace sbp::run {

/// Measures this host as sbp-run runs programs on it — the FLOP/s of
/// JIT-compiled matmuls and of other loops, memory bandwidth, and the
/// latency and bandwidth of the threads backend's all-reduce — and writes
/// a `cpu-local` cluster description with these figures to `path`. Logs
/// each figure to `log`. Returns sbp-run's exit code.
int calibrate(mlir::MLIRContext &context, const std::string &path, bool useBlas,
              llvm::raw_ostream &log);

} // namespace sbp::run

#endif // SBP_RUN_CALIBRATE_H
