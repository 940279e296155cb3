//===- Calibrate.h - Measuring this host for the cost model -----*- C++ -*-===//

#ifndef SBP_RUN_CALIBRATE_H
#define SBP_RUN_CALIBRATE_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace sbp::run {

/// Measures this host as sbp-run runs programs on it — the FLOP/s of
/// JIT-compiled MLP layers and of other loops, memory bandwidth, and the
/// latency and bandwidth of an all-reduce over `ranks` ranks of the threads
/// backend, or of the MPI processes under mpirun when `useMpi` — and writes
/// a `cpu-local` cluster description with these figures to `path` (under
/// MPI, the first process writes). Logs each figure to `log`. Returns
/// sbp-run's exit code.
int calibrate(mlir::MLIRContext &context, const std::string &path, bool useBlas,
              bool useMpi, int64_t ranks, llvm::raw_ostream &log);

} // namespace sbp::run

#endif // SBP_RUN_CALIBRATE_H
