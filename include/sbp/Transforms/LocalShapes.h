//===- LocalShapes.h - Per-device shapes and boxing lowering ----*- C++ -*-===//
//
// What partitioning needs to turn global tensors into the pieces a device
// holds: local types, the sizes and offsets of a device's piece computed
// from its mesh coordinates, and the lowering of a change of layout into
// sbp collectives and local slicing.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_LOCALSHAPES_H
#define SBP_TRANSFORMS_LOCALSHAPES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"

namespace mlir {
namespace sbp {

/// The type every device holds for a value of `type` laid out as `entries`:
/// dimensions whose pieces differ between devices are dynamic.
RankedTensorType getLocalType(RankedTensorType type, ArrayRef<SbpEntry> entries,
                              MeshOp mesh);

/// The sizes of the executing device's piece of a tensor of static shape
/// `global` laid out as `entries`: constants where every device's piece has
/// the same size, values computed from `sbp.axis_index` otherwise.
SmallVector<OpFoldResult> getLocalSizes(OpBuilder &builder, Location loc,
                                        MeshOp mesh, ArrayRef<int64_t> global,
                                        ArrayRef<SbpEntry> entries);

/// The offsets, in the whole tensor, of the executing device's piece of a
/// tensor of static shape `global` laid out as `entries`.
SmallVector<OpFoldResult> getLocalOffsets(OpBuilder &builder, Location loc,
                                          MeshOp mesh, ArrayRef<int64_t> global,
                                          ArrayRef<SbpEntry> entries);

/// Converts `value`, the local piece of a tensor of global type `global`
/// laid out as `src`, into its piece under `dst`, following `planBoxing`.
Value lowerBoxing(OpBuilder &builder, Location loc, MeshOp mesh, Value value,
                  RankedTensorType global, ArrayRef<SbpEntry> src,
                  ArrayRef<SbpEntry> dst);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_LOCALSHAPES_H
