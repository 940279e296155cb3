//===- Onnx.h - Importing ONNX models ---------------------------*- C++ -*-===//
//
// Turns an ONNX model into the logical program sbp works on: one public
// function on tensors in func/linalg/tensor/arith/math.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_IMPORT_ONNX_H
#define SBP_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBufferRef.h"
#include <string>
#include <vector>

namespace mlir {
namespace sbp {

struct OnnxImportOptions {
  /// Floating-point tensors of more than one element held by the model
  /// (initializers, Constant nodes) become function arguments, so that the
  /// search can shard weights; otherwise they are constants.
  bool weightsAsArguments = true;
  /// Shapes for graph inputs with symbolic or unknown dimensions.
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Values of graph inputs (row-major bytes of the input's type, owned by
  /// the caller during the import), read where an input must be known at
  /// import time: a Reshape's shape or a Slice's bounds given as graph
  /// inputs. The inputs stay arguments.
  llvm::StringMap<StringRef> inputValues;
  /// Shapes of the arrays given for graph inputs, which fix the symbolic or
  /// unknown dimensions of an input that `inputShapes` does not give.
  llvm::StringMap<SmallVector<int64_t>> valueShapes;
  /// The size of the symbolic or unknown dimensions nothing else fixes; 0
  /// makes them an error.
  int64_t dynamicSize = 0;
};

/// A weight that the imported function takes as an argument, with its value
/// (row-major, little-endian, of the argument's element type).
struct OnnxWeight {
  unsigned argument;
  std::string name;
  std::string bytes;
  /// Whether training updates it: a parameter of the framework's model, not
  /// a buffer or a constant the exporter folded (docs/onnx.md).
  bool trainable = true;
  /// The framework's name of the parameter (`model.layers.0.q_proj.weight`
  /// for an initializer holding its transpose), or why it is not trained.
  std::string parameter;
};

struct OnnxImport {
  OwningOpRef<ModuleOp> module;
  std::vector<OnnxWeight> weights;
  /// One line per input whose dynamic dimensions took `dynamicSize`.
  std::vector<std::string> notes;
};

/// Whether a tool input is an ONNX model: its extension is `.onnx`, or it
/// starts like a serialized ModelProto (field 1, `ir_version`, a varint).
bool isOnnxModel(StringRef filename, StringRef contents);

/// Parses, checks and shape-infers the model in `buffer`, then builds its
/// graph as the function `@main`. On failure returns a null module and
/// sets `error` to every problem found, one per line, each naming the file
/// and the node or input.
OnnxImport importOnnxModel(llvm::MemoryBufferRef buffer, MLIRContext *context,
                           const OnnxImportOptions &options,
                           std::string &error);

/// Parses `NAME=2x32` (a `--input-shape` flag) into `options`; false with
/// `error` set when it is malformed.
bool parseOnnxInputShape(StringRef flag, OnnxImportOptions &options,
                         std::string &error);

} // namespace sbp
} // namespace mlir

#endif // SBP_IMPORT_ONNX_H
