//===- BoxingPlan.h - Converting between nd-SBP layouts ---------*- C++ -*-===//
//
// How a value is moved from one nd-SBP to another, one mesh axis at a time,
// and how many bytes that sends: the boxing table of the design reference.
// Propagation uses the byte counts as its cost; partitioning emits the steps
// as collectives.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_UTILS_BOXINGPLAN_H
#define SBP_DIALECT_SBP_UTILS_BOXINGPLAN_H

#include "sbp/Dialect/Sbp/IR/SbpAttrs.h"

namespace mlir {
namespace sbp {

/// What one step does over one mesh axis of `p` devices.
enum class BoxingKind {
  AllReduce,      ///< P -> B
  ReduceScatter,  ///< P -> S(i)
  AllGather,      ///< S(i) -> B
  AllToAll,       ///< S(i) -> S(j)
  Slice,          ///< B -> S(i), local
  KeepOnFirst,    ///< B -> P(sum): the first device keeps it, the others zero
  PadWithNeutral, ///< S(i) -> P: own piece in place, neutral elsewhere
  Relabel,        ///< B -> P(max) / P(min): identical copies, nothing to do
};

/// One step: mesh axis `axis` changes from `from` to `to`; every other axis
/// keeps its entry.
struct BoxingStep {
  int64_t axis;
  SbpEntry from;
  SbpEntry to;
  BoxingKind kind;
  /// Bytes each device sends in this step.
  double bytes;
};

/// The steps from `src` to `dst` (entries only; one per mesh axis) for a
/// tensor of shape `shape` with `elementBytes`-byte elements, and their
/// total bytes.
struct BoxingPlan {
  SmallVector<BoxingStep> steps;
  double bytes = 0;
};

/// The cheapest valid plan. Axes whose entries differ are converted one at a
/// time, in the order that sends the fewest bytes among those that are valid:
/// when several axes split one dimension, only the innermost (last) of them
/// can gather or re-split its pieces locally. When no direct order is valid,
/// every changed axis, and every axis splitting a dimension inside one of
/// them, goes through `B` first (innermost first) and then to its target
/// (outermost first), which always is.
BoxingPlan planBoxing(ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst,
                      ArrayRef<int64_t> shape, int64_t elementBytes,
                      ArrayRef<int64_t> meshShape);

/// Bytes sent per device by the cheapest plan; 0 when `src == dst`.
double getBoxingBytes(ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst,
                      ArrayRef<int64_t> shape, int64_t elementBytes,
                      ArrayRef<int64_t> meshShape);

/// Bytes per element of a tensor of `elementType`, as the plans count them:
/// 8 for element types without a fixed bit width (index).
int64_t getElementBytes(Type elementType);

/// Name of a step kind, for reports and tests.
StringRef stringifyBoxingKind(BoxingKind kind);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_UTILS_BOXINGPLAN_H
