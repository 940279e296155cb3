//===- MatrixProduct.h - Generic ops that are matrix products ---*- C++ -*-===//
//
// Which linalg.generic ops compute a (batched) matrix product, so that
// sbp-specialize-contractions can hand them to the tuned matmul paths and
// the cost model can price them at the contraction rate they then run at.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_UTILS_MATRIXPRODUCT_H
#define SBP_DIALECT_SBP_UTILS_MATRIXPRODUCT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include <optional>

namespace mlir {
namespace sbp {

/// The roles of the loops of `C[batch.., m.., n..] += A[batch.., m..,
/// k..] * B[batch.., k.., n..]`, each operand's dimensions in any order:
/// a matrix product once each group of loops is merged into one.
struct MatrixProductLoops {
  /// Loops every operand is indexed by, in the order of the output's
  /// dimensions.
  SmallVector<unsigned> batch;
  /// The rows (read by A and C) and columns (by B and C), in the output's
  /// order, and the reductions (by A and B), in A's.
  SmallVector<unsigned> m, n, k;
  /// The input that holds `m` (A), the one that holds the lowest-numbered
  /// row or column loop; the other holds `n` (B).
  unsigned lhs = 0;
};

/// Whether `op` has two inputs and one output of tensors and a payload that
/// is exactly `out + in0 * in1` (in either order) on floats.
bool isMultiplyAccumulate(linalg::GenericOp op);

/// The loops of a multiply-accumulate with these indexing maps (inputs, then
/// output) and iterators when it is a matrix product: indexing maps that are
/// permutations of their operand's loops, reduction loops read by both
/// inputs and not the output, parallel loops read by the output and one or
/// both inputs, at least one row, column and reduction.
std::optional<MatrixProductLoops>
matchMatrixProduct(ArrayRef<AffineMap> maps,
                   ArrayRef<utils::IteratorType> iterators);

/// The loops of `op` when it is a matrix product: a multiply-accumulate of
/// floats of one type whose maps and iterators are a matrix product's.
std::optional<MatrixProductLoops> matchMatrixProduct(linalg::GenericOp op);

/// Whether `expr` is a position in a window: a loop, or a sum of loops each
/// times a positive constant, plus a constant (`h * stride + kh *
/// dilation`).
bool isWindowPosition(AffineExpr expr);

/// Whether `op` is a multiply-accumulate that is not a matrix product but
/// becomes one once its loops of extent 1 are dropped and each operand it
/// reads or writes through window positions (a convolution's image, or the
/// image's gradient) is unfolded over the loops those positions use, as
/// sbp-unfold-convolutions does.
bool isUnfoldableProduct(linalg::GenericOp op);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_UTILS_MATRIXPRODUCT_H
