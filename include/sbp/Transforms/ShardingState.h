//===- ShardingState.h - Reading and writing chosen layouts -----*- C++ -*-===//
//
// After sbp-propagate the layout of every tensor value and the layout every
// use needs are recorded in attributes: `sbp.sharding` on function arguments
// and results, `sbp.operands` / `sbp.results` on ops. These helpers read and
// write them for the passes that follow.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_SHARDINGSTATE_H
#define SBP_TRANSFORMS_SHARDINGSTATE_H

#include "sbp/Dialect/Sbp/IR/Sbp.h"

namespace mlir {
namespace sbp {

/// The layout `value` is produced with; null when none is recorded (scalars,
/// values no pass has looked at) or when it is free.
NdSbpAttr getValueSharding(Value value);

/// The layout the use `use` needs its value in; null when it takes any.
NdSbpAttr getUseSharding(OpOperand &use);

/// Records the layouts of `op`'s operands and results (null entries are
/// written as `unit`: free).
void setOpShardings(Operation *op, ArrayRef<NdSbpAttr> operands,
                    ArrayRef<NdSbpAttr> results);

/// Removes the recorded layouts from `op`.
void clearOpShardings(Operation *op);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_SHARDINGSTATE_H
