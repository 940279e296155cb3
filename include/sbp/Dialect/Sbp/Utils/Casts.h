//===- Casts.h - Tensors copied into another element type -------*- C++ -*-===//
//
// Mixed-precision programs keep f32 master weights and cast each to the
// compute type where it is read: a copy that analyses of a weight's role
// (parameter or batch, its layout) look through.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_UTILS_CASTS_H
#define SBP_DIALECT_SBP_UTILS_CASTS_H

#include "mlir/IR/Operation.h"

namespace mlir {
namespace sbp {

/// Whether `op` is a `linalg.generic` that copies its one input into
/// another float type: identity maps, parallel loops, and a payload of one
/// `arith.extf` or `arith.truncf` of the input.
bool isElementTypeCopy(Operation *op);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_UTILS_CASTS_H
