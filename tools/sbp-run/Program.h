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
#include "sbp/Runtime/Shards.h"
#include "sbp/Runtime/sbp_program.h"
#include <memory>
#include <optional>

namespace sbp::run {

/// One tensor argument or result of the entry function.
struct TensorSpec {
  std::string name;
  sbp_dtype dtype = SBP_F32;
  /// i1, which moves as bytes (SBP_I8).
  bool isBool = false;
  /// The MLIR element type, for messages.
  std::string typeName;
  /// Shape on one rank; -1 for dynamic sizes.
  std::vector<int64_t> localShape;
  /// Layout over the mesh.
  runtime::Layout layout;
};

/// Describes argument and result `i` of `func`. Returns an error message
/// for types that sbp-run cannot pass.
std::optional<std::string> describeEntry(mlir::func::FuncOp func,
                                         const std::vector<int64_t> &mesh,
                                         std::vector<TensorSpec> &args,
                                         std::vector<TensorSpec> &results);

/// Where a program runs. EmulatedCuda lowers for the GPU but runs the
/// kernels as host loops (`--sbp-lower-gpu=emulate=1`), for testing.
enum class Backend { Cpu, Cuda, EmulatedCuda };

/// A buffer that the entry function returned.
struct ReturnedBuffer {
  /// What to free (the allocation), and where the elements start.
  void *allocated = nullptr;
  void *data = nullptr;
  std::vector<int64_t> shape;
};

/// A JIT-compiled program.
class CompiledProgram {
public:
  /// Lowers `module` with `--sbp-lower-cpu` (tiled and vectorized, or with
  /// BLAS, or plain loops when `optimize` is false) or `--sbp-lower-gpu`
  /// and JIT-compiles it. On failure the diagnostics were reported and
  /// `error` says which step failed.
  static std::unique_ptr<CompiledProgram>
  compile(mlir::ModuleOp module, llvm::StringRef entry, Backend backend,
          bool optimize, bool useBlas, std::string &error);

  /// Calls the entry function with `args` (row-major, of the argument's
  /// local shape) on the calling thread; fills `results`. CPU programs only.
  void call(const std::vector<runtime::NpyArray *> &args,
            const std::vector<TensorSpec> &resultSpecs,
            std::vector<runtime::NpyArray> &results) const;

  /// Calls the entry function on dense row-major buffers `data` of shapes
  /// `shapes` (device buffers for CUDA programs); the caller owns what
  /// `returned` receives.
  void invoke(const std::vector<void *> &data,
              const std::vector<const std::vector<int64_t> *> &shapes,
              const std::vector<TensorSpec> &resultSpecs,
              std::vector<ReturnedBuffer> &returned) const;

  Backend getBackend() const { return backend; }

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
  Backend backend = Backend::Cpu;
};

} // namespace sbp::run

#endif // SBP_RUN_PROGRAM_H
