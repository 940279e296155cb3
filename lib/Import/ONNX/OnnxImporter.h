//===- OnnxImporter.h - Shared state of the ONNX importer -------*- C++ -*-===//
//
// The importer walks the graph once, in its (topological) order. Each node
// is converted by a function registered for its op type, which reads the
// node's inputs and attributes through a NodeImporter and defines its
// outputs. Values known at import time (initializers, Constant nodes, shape
// computations) are kept as attributes as well, so that the inputs ONNX
// gives as tensors but that must be static here (a Reshape's shape, a
// Slice's bounds) can be read.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H
#define SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "onnx/onnx_pb.h"
#include "llvm/ADT/StringMap.h"
#include <functional>

namespace mlir {
namespace sbp {
namespace onnx_import {

class GraphImporter;

/// One node being converted.
class NodeImporter {
public:
  /// `label` names the node in errors.
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               std::string label, int64_t opset, Location loc);

  OpBuilder &builder();
  Location getLoc() const { return loc; }
  int64_t getOpset() const { return opset; }
  const onnx::NodeProto &getNode() const { return node; }

  /// Whether input `i` is given (ONNX marks absent optional inputs with an
  /// empty name).
  bool hasInput(unsigned i) const;
  unsigned getNumInputs() const { return node.input_size(); }
  /// Input `i` as a ranked tensor value.
  Value input(unsigned i);
  RankedTensorType inputType(unsigned i);
  /// Input `i`'s value when it is known at import time.
  DenseElementsAttr constantInput(unsigned i);
  /// Input `i` as integers, when it is known at import time.
  std::optional<SmallVector<int64_t>> intsInput(unsigned i);

  bool hasAttr(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t defaultValue) const;
  float floatAttr(StringRef name, float defaultValue) const;
  std::string stringAttr(StringRef name, StringRef defaultValue) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;
  std::optional<SmallVector<float>> floatsAttr(StringRef name) const;
  const onnx::AttributeProto *attr(StringRef name) const;

  unsigned getNumOutputs() const { return node.output_size(); }
  /// Whether output `i` is used (named).
  bool hasOutput(unsigned i) const;
  void setOutput(unsigned i, Value value);
  /// Defines output `i` as a value known at import time; a weight (a
  /// Constant node's tensor) may become an argument.
  void setConstantOutput(unsigned i, DenseElementsAttr value,
                         bool isWeight = false);

  /// Reports an error on this node; returns failure for convenience.
  LogicalResult error(const Twine &message);

private:
  GraphImporter &graph;
  const onnx::NodeProto &node;
  std::string label;
  int64_t opset;
  Location loc;
};

using NodeConverter = std::function<LogicalResult(NodeImporter &)>;
using ConverterTable = llvm::StringMap<NodeConverter>;

void addElementwiseConverters(ConverterTable &table);
void addShapeConverters(ConverterTable &table);
void addContractionConverters(ConverterTable &table);
void addWindowConverters(ConverterTable &table);
void addResizeConverters(ConverterTable &table);

/// The MLIR element type of an ONNX element type, or null.
Type getElementType(MLIRContext *context, int32_t onnxType);
/// Row-major little-endian bytes (one byte a bool) as an attribute of
/// `type`; null when the size does not match.
DenseElementsAttr getRawAttr(RankedTensorType type, StringRef bytes);
/// The value of a TensorProto as an attribute; null (with `error` set) for
/// types or storage the importer does not read.
DenseElementsAttr getTensorAttr(MLIRContext *context,
                                const onnx::TensorProto &tensor,
                                std::string &error);

//===----------------------------------------------------------------------===//
// Builders shared by the converters.
//===----------------------------------------------------------------------===//

inline bool isFloat(Type type) { return isa<FloatType>(type); }

/// `tensor.empty` of the given shape.
Value createEmpty(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);
/// A tensor of the given shape filled with `value`.
Value createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, double value);
/// A scalar constant of `type` (float, integer or index).
Value createScalar(OpBuilder &b, Location loc, Type type, double value);

/// The multidirectional (numpy) broadcast of the shapes; failure when they
/// are incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<ArrayRef<int64_t>>);

using ScalarBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// An element-wise `linalg.generic` on the broadcast of the inputs' shapes
/// (or `shape` where given): a dimension of size 1 against a larger one is
/// read at index 0, missing leading dimensions are not read.
Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       Type resultElementType, ScalarBuilder body,
                       std::optional<ArrayRef<int64_t>> shape = std::nullopt);

/// Reduces `input` over `axes` (sorted, non-negative) with `combine`,
/// starting from `init`; keeps the reduced dimensions with size 1 when
/// `keepDims`.
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool keepDims, double init,
                     ScalarBuilder combine);

/// Reshapes a static tensor with `tensor.collapse_shape` and
/// `tensor.expand_shape` (whose SBP rules are known), through one dimension
/// when no single reassociation fits.
Value buildReshape(OpBuilder &b, Location loc, Value input,
                   ArrayRef<int64_t> shape);

/// `x + y` and `x * y` on floats or integers.
Value createAdd(OpBuilder &b, Location loc, Value x, Value y);
Value createMul(OpBuilder &b, Location loc, Value x, Value y);

/// `sum(product of inputs)` over the loops missing from `outLabels`: each
/// operand dimension is labelled with its loop; a dimension of size 1
/// against a larger loop is broadcast. Fails when sizes disagree.
FailureOr<Value> buildContraction(OpBuilder &b, Location loc, ValueRange inputs,
                                  ArrayRef<SmallVector<int64_t>> labels,
                                  ArrayRef<int64_t> outLabels);

/// Converts a scalar between element types with ONNX Cast semantics.
Value castScalar(OpBuilder &b, Location loc, Value value, Type to);

/// A negative axis counted from the back; std::nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace onnx_import
} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H
