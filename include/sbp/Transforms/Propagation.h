//===- Propagation.h - Layout choice shared by the searches -----*- C++ -*-===//
//
// What sbp-propagate and sbp-auto-parallel share: which ops take part in the
// choice, with which signatures, and the propagation that settles what a
// search leaves (loops, uninitialized tensors) around signatures recorded
// on ops.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_PROPAGATION_H
#define SBP_TRANSFORMS_PROPAGATION_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"

namespace mlir {
namespace sbp {

/// Whether the layouts of `op` are chosen: it computes on tensors and is
/// not an annotation, a boxing, an `scf.for` or a terminator.
bool isLayoutDecision(Operation *op);

/// The signatures `op` may take on `mesh`: the one recorded on it when
/// there is one (an error when it is not among the op's), else its rule's,
/// else running whole (`B` in, `B` out, with a remark).
FailureOr<SmallVector<NdSbpSignature>> getCandidateSignatures(Operation *op,
                                                              MeshOp mesh);

/// The mesh a function's annotations name; null when it has none. Fails,
/// with an error, when they name more than one.
FailureOr<MeshOp> findAnnotatedMesh(FunctionOpInterface func);

/// Producers whose result is the same whatever its layout and costs
/// nothing to make again: an uninitialized tensor, a splat constant and a
/// fill of one with a constant.
bool isFreeToRepeat(Operation *op);

/// Gives every user of a value computed from constants alone (free
/// producers, iotas, masks, RoPE tables) its own copy of the ops that
/// compute it; returns how many ops were added (see
/// `sbp-clone-cheap-values`). CSE shares one between unrelated ops (every
/// matmul's zero accumulator), and JAX hoists one out of a scan for every
/// layer; copies keep the layouts of unrelated ops independent (CSE merges
/// those whose layouts agree again after partitioning).
unsigned cloneCheapValues(FunctionOpInterface func);

/// Runs sbp-propagate's choice on `func`: ops with a recorded signature
/// keep it, the others improve in sweeps; records every layout.
LogicalResult propagateLayouts(FunctionOpInterface func, MeshOp mesh,
                               unsigned maxSweeps);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PROPAGATION_H
