//===- MaskedReduction.h - Masked accumulations as reductions ---*- C++ -*-===//
//
// A payload that accumulates `select(c, combine(out, p), out)` (a StableHLO
// scatter's: the combiner applied where an update's index names the
// element) reduces, but not with a combiner that matchReduction, the SBP
// rules or the gradient rules recognise. The same value written as
// `combine(out, select(c, p, identity))` is a plain reduction.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_UTILS_MASKEDREDUCTION_H
#define SBP_DIALECT_SBP_UTILS_MASKEDREDUCTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace sbp {

/// Rewrites, in the payload of `op`, each output's masked accumulation
/// with an add, mul, max or min of floats as that combiner of the output
/// and the masked partial (`select(c, p, identity)`, identity -0, 1, -inf
/// or +inf): the same value, so the reduction's rules apply and its loop
/// may split as a partial of that kind. Other payloads are left alone.
void unmaskReductions(linalg::LinalgOp op);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_UTILS_MASKEDREDUCTION_H
