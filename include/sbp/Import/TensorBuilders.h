//===- TensorBuilders.h - IR building blocks of the importers ---*- C++ -*-===//
//
// Element-wise ops with numpy broadcasting, reductions, reshapes and
// contractions, built as linalg and tensor ops whose SBP rules sbp derives
// (from indexing maps) or knows (reassociations). Shared by the ONNX and
// StableHLO importers.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_IMPORT_TENSORBUILDERS_H
#define SBP_IMPORT_TENSORBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace sbp {
namespace tensor_builders {

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

/// Converts a scalar between element types (ONNX Cast and StableHLO convert
/// semantics: to i1 is `!= 0`, float to integer truncates).
Value castScalar(OpBuilder &b, Location loc, Value value, Type to);

} // namespace tensor_builders
} // namespace sbp
} // namespace mlir

#endif // SBP_IMPORT_TENSORBUILDERS_H
