//===- Program.h - A compiled entry function and its calling ----*- C++ -*-===//
//
// sbp-run's view of a program: the entry function's tensors with their
// layouts, and the JIT-compiled code that each rank calls.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUN_PROGRAM_H
#define SBP_RUN_PROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
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
  /// BLAS, or plain loops when `optimize` is false) or `--sbp-lower-gpu`
  /// and JIT-compiles it; `saveable` keeps the object code (position
  /// independent) for save(). On failure the diagnostics were reported and
  /// `error` says which step failed.
  static std::unique_ptr<CompiledProgram>
  compile(mlir::ModuleOp module, llvm::StringRef entry, Backend backend,
          bool optimize, bool useBlas, std::string &error,
          bool saveable = false);

  /// Links the object code into the shared library `path` (with the
  /// system's C compiler driver), which exports the packed entry
  /// `_mlir_<entry>`; false with `error` set on failure.
  bool save(const std::string &path, std::string &error) const;

  /// Function `name` of the same program (a pipeline's other stages).
  std::unique_ptr<EntryPoint> lookup(llvm::StringRef name,
                                     std::string &error) const;

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace sbp::run

#endif // SBP_RUN_PROGRAM_H
