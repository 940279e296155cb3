//===- Recomputation.h - Recomputing activations in a training step -*- C++
//-*-===//
//
// A training step keeps every forward value its backward pass reads alive
// from the forward to the backward. Recomputing a forward segment (Chen et
// al. 2016) trades that memory for the segment's compute once more: its
// ops are copied right before the first backward op that reads one of its
// values, and the backward pass reads the copies. sbp-auto-parallel
// chooses the segments when no plan fits its memory limit.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_RECOMPUTATION_H
#define SBP_TRANSFORMS_RECOMPUTATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace sbp {

/// The forward pass of a training step cut into segments of balanced work.
struct ForwardSegments {
  /// The top-level ops that the loss (the last result) depends on.
  DenseSet<Operation *> forward;
  /// At most the requested number of segments, in program order; each
  /// holds its ops in program order.
  SmallVector<SmallVector<Operation *>> segments;
  /// Per segment, the bytes of its values that the backward pass reads.
  SmallVector<double> savedBytes;
};

/// Cuts the forward pass of `func` into at most `count` segments.
ForwardSegments getForwardSegments(func::FuncOp func, int64_t count);

/// Makes the backward ops of `func` read copies of the values of segment
/// `index` made right before the first of them; copies made for other
/// segments (`copies`, which gains these) read the originals, which are
/// therefore the checkpoints. Returns the number of ops copied.
int64_t recomputeSegment(func::FuncOp func, const ForwardSegments &segments,
                         int64_t index, DenseSet<Operation *> &copies);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_RECOMPUTATION_H
