//===- Entry.h - A compiled entry function, without MLIR --------*- C++ -*-===//
//
// What sbp-run and sbp-exec share: the entry function's tensors with their
// layouts, its calling convention (the packed wrapper MLIR's
// ExecutionEngine generates, `_mlir_<entry>(void **)`: one pointer per
// memref descriptor field of each argument, then one to the storage of
// the returned descriptors), the comparison with a reference, and the
// manifest of a saved program. Nothing here links MLIR or LLVM, so that
// sbp-exec runs saved programs where neither is installed.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUN_ENTRY_H
#define SBP_RUN_ENTRY_H

#include "sbp/Runtime/Shards.h"
#include "sbp/Runtime/sbp_program.h"
#include <optional>
#include <random>
#include <string>
#include <vector>

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
  /// For integers: the smallest dimension the program indexes with them
  /// (0: none), which random values stay below.
  int64_t indexBound = 0;
  /// For floats: the program takes their square root or logarithm, so
  /// random values are positive.
  bool positive = false;
};

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

/// A compiled entry function: JIT-compiled (sbp-run) or loaded from a
/// saved library (sbp-exec).
class EntryPoint {
public:
  virtual ~EntryPoint() = default;

  /// Calls the entry function on dense row-major buffers `data` of shapes
  /// `shapes` (device buffers for CUDA programs); the caller owns what
  /// `returned` receives.
  void invoke(const std::vector<void *> &data,
              const std::vector<const std::vector<int64_t> *> &shapes,
              const std::vector<TensorSpec> &resultSpecs,
              std::vector<ReturnedBuffer> &returned) const;

  /// Calls the entry function with `args` (row-major, of the argument's
  /// local shape) on the calling thread; fills `results`. Host programs
  /// only.
  void call(const std::vector<runtime::NpyArray *> &args,
            const std::vector<TensorSpec> &resultSpecs,
            std::vector<runtime::NpyArray> &results) const;

  Backend getBackend() const { return backend; }

protected:
  void (*packed)(void **) = nullptr;
  Backend backend = Backend::Cpu;
};

/// Random values for `spec` of `shape`: uniform in [-1, 1) for floats
/// ([0.5, 1.5) for `spec.positive`), 0 or 1 for i1, and 0..3 for other
/// integers, below `spec.indexBound` where that is smaller (valid indices
/// of every dimension the program reads with them).
runtime::NpyArray randomArray(const TensorSpec &spec,
                              const std::vector<int64_t> &shape,
                              std::mt19937_64 &rng);

/// "[2, ?, 4]".
std::string formatShape(const std::vector<int64_t> &shape);
const char *dtypeName(sbp_dtype dtype);

/// How results differ from a reference.
struct Comparison {
  double maxAbs = 0, maxRel = 0;
  /// Elements of the reference that are NaN (compared by place only).
  int64_t nans = 0;
  bool hasF64 = false;
  /// Set when a shape differs: "result0: shape [2] but the reference is
  /// [3]".
  std::string shapeError;
};

/// max |a - b| and, normwise, that over max |b|: partial sums in another
/// order move every element by a fraction of the largest magnitude, not of
/// its own. NaN against a number is an infinite error.
Comparison compareResults(const std::vector<runtime::NpyArray> &results,
                          const std::vector<runtime::NpyArray> &expected);

/// A program saved by `sbp-run --save-program DIR`: DIR/program.so,
/// DIR/program.json (this), DIR/argN.npy (global inputs) and, with a
/// reference, DIR/expectedN.npy (global results).
struct Manifest {
  std::string entry;
  Backend backend = Backend::Cpu;
  std::vector<int64_t> mesh;
  std::vector<TensorSpec> args, results;
  /// The global (logical) shape of each argument: of DIR/argN.npy, or of
  /// the random inputs sbp-exec makes when that file is absent.
  std::vector<std::vector<int64_t>> argShapes;
  /// Whether DIR holds the reference's results (and, for a training step,
  /// its loss curve after them).
  bool hasExpected = false;
  /// A training step runs this many steps, its first `carried` results
  /// (the updated parameters and optimizer state) being the next step's
  /// first arguments; 0 for one call.
  int64_t trainSteps = 0;
  int64_t carried = 0;
};

/// The losses of a run's steps as one array of `dtype` (f32 or f64), which
/// is how runs compare their loss curves.
sbp::runtime::NpyArray makeLossCurve(const std::vector<double> &losses,
                                     sbp_dtype dtype);

/// Writes `manifest` as JSON to `path`; false with `error` set on failure.
bool writeManifest(const std::string &path, const Manifest &manifest,
                   std::string &error);
/// Reads a manifest; nothing, with `error` naming the file and field, when
/// it is missing or malformed.
std::optional<Manifest> readManifest(const std::string &path,
                                     std::string &error);

} // namespace sbp::run

#endif // SBP_RUN_ENTRY_H
