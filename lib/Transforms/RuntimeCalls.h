//===- RuntimeCalls.h - Calling the runtime from tensor programs -*- C++
//-*-===//
//
// Ops that the runtime implements (collectives, BLAS) are lowered on
// tensors, before bufferization, to calls of its C ABI: operands become
// read-only buffers, results fresh allocations that the call fills and
// that become tensors again. Buffers pass as unranked memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_TRANSFORMS_RUNTIMECALLS_H
#define SBP_LIB_TRANSFORMS_RUNTIMECALLS_H

#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {

/// Builds calls of the runtime's C ABI, declaring each function once.
class RuntimeCallBuilder {
public:
  explicit RuntimeCallBuilder(ModuleOp module)
      : module(module), builder(module.getContext()) {}

  /// Builds before `op`, at its location.
  void setInsertionPoint(Operation *op) {
    builder.setInsertionPoint(op);
    loc = op->getLoc();
  }

  Value i64(int64_t value);
  Value toI64(Value index);
  Value toIndex(Value value);
  Value dim(Value tensor, int64_t d);

  /// Calls runtime function `name`, declaring it on first use.
  ValueRange call(StringRef name, ValueRange args, TypeRange results = {});

  /// `tensor` as a read-only unranked buffer.
  Value toBuffer(Value tensor);
  /// A fresh buffer for a tensor of `type` with dynamic sizes `sizes`.
  Value alloc(RankedTensorType type, ValueRange sizes);
  /// `buffer` as an unranked memref.
  Value unranked(Value buffer);
  /// The tensor that the call filled `buffer` with.
  Value toTensor(Value buffer, RankedTensorType type);

private:
  ModuleOp module;
  OpBuilder builder;
  Location loc = builder.getUnknownLoc();
};

/// Whether `value` is a `linalg.fill` with the constant zero: a GEMM into it
/// need not read it.
bool isZeroFill(Value value);

} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_TRANSFORMS_RUNTIMECALLS_H
