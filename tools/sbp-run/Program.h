//===- Program.h - A compiled entry function and its calling ----*- C++ -*-===//
//
// sbp-run's view of a program: the entry function's tensors with their
// layouts, and the JIT-compiled code that each rank calls.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUN_PROGRAM_H
#define SBP_RUN_PROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "HostCode.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "sbp/Run/Entry.h"
#include "sbp/Run/Execution.h"
#include <memory>
#include <optional>

namespace sbp::run {

/// Describes argument and result `i` of `func`. Returns an error message
/// for types that sbp-run cannot pass.
std::optional<std::string> describeEntry(mlir::func::FuncOp func,
                                         const std::vector<int64_t> &mesh,
                                         std::vector<TensorSpec> &args,
                                         std::vector<TensorSpec> &results);

/// Reads the partitioned module's `sbp.pipeline` into `pipeline` (its
/// stages without their entries, whose names go to `stageNames`), the
/// stages' tensors laid out over the pipeline's mesh `mesh`. Returns an
/// error message for what sbp-run cannot pass.
std::optional<std::string>
describePipeline(mlir::ModuleOp module, const std::vector<int64_t> &mesh,
                 Pipeline &pipeline, std::vector<std::string> &stageNames);

/// A program JIT-compiled for the CPU or a GPU.
class CompiledProgram : public EntryPoint {
public:
  /// Lowers `module` with `--sbp-lower-cpu` (tiled and vectorized, or with
  /// BLAS, or plain loops when `optimize` is false) or `--sbp-lower-gpu`,
  /// compiles it for the host and links it into this process; with a
  /// `cache`, the object code of an equal module compiled before is
  /// reused. The steps are timed under `timing`. On failure the
  /// diagnostics were reported and `error` says which step failed.
  static std::unique_ptr<CompiledProgram>
  compile(mlir::ModuleOp module, llvm::StringRef entry, Backend backend,
          bool optimize, bool useBlas, std::string &error,
          const CompileCache *cache, mlir::TimingScope &timing);

  /// Links the object code into the shared library `path` (with the
  /// system's C compiler driver), which exports the packed entry
  /// `_mlir_<entry>`; false with `error` set on failure.
  bool save(const std::string &path, std::string &error) const;

  /// Function `name` of the same program (a pipeline's other stages).
  std::unique_ptr<EntryPoint> lookup(llvm::StringRef name,
                                     std::string &error) const;

private:
  ObjectFiles objects;
  std::unique_ptr<LinkedCode> code;
};

} // namespace sbp::run

#endif // SBP_RUN_PROGRAM_H
