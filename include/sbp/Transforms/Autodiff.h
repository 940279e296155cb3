//===- Autodiff.h - Reverse-mode differentiation on tensors -----*- C++ -*-===//
//
// Gradients of a logical program, built op by op in reverse as more ops of
// the same kinds (linalg, tensor, arith, math, scf), so that the backward
// pass is searched, partitioned and lowered like the forward one.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_AUTODIFF_H
#define SBP_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace sbp {

/// Builds, at `builder`'s insertion point, which must follow every op of
/// `block` that `loss` depends on, the gradient of `loss` (a tensor of one
/// element) with respect to each of `wrt` (values of `block`). A value that
/// `loss` does not depend on gets zeros. Fails with an error at the first op
/// on the path from `wrt` to `loss` that has no gradient rule. The loops of
/// `block` that `loss` depends on are replaced by ones that also save their
/// iterations (saveLoopIterations), which the gradients read; `saved` gets
/// them, in block order.
FailureOr<SmallVector<Value>>
buildGradients(OpBuilder &builder, Block &block, Value loss,
               ArrayRef<Value> wrt,
               SmallVectorImpl<scf::ForOp> *saved = nullptr);

/// Replaces `loop` (static trip count, tensors of static shape carried) by
/// one that also yields, per carried value, the stack of its value at the
/// start of every iteration: what the loop's backward recomputes each
/// iteration from. Returns the new loop, or `loop` when it cannot.
scf::ForOp saveLoopIterations(OpBuilder &builder, scf::ForOp loop);

/// A tensor of `type` filled with `value` (`tensor.empty` and `linalg.fill`,
/// the init that structured ops accumulate into).
Value createFilledTensor(OpBuilder &builder, Location loc,
                         RankedTensorType type, double value);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_AUTODIFF_H
