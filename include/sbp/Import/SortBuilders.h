//===- SortBuilders.h - Sorting as structured ops ---------------*- C++ -*-===//
//
// A sort as two kinds of generics: one counts, for each element, the
// elements of its row that sort before it (its rank; equal elements keep
// their order), and one per result writes each element at its rank, a
// reduction over the row that overwrites. The rows split like any loop and
// values reach the results through the overwrite, which autodiff
// differentiates; the work is quadratic in the sorted dimension. Shared by
// the ONNX (TopK) and StableHLO (sort, top_k) importers.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_IMPORT_SORTBUILDERS_H
#define SBP_IMPORT_SORTBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace sbp {
namespace sort_builders {

/// Whether the elements `lhs` (one per input) sort before `rhs`.
using Before = function_ref<FailureOr<Value>(OpBuilder &, Location,
                                             ValueRange lhs, ValueRange rhs)>;

/// A signless integer of the float scalar `x`'s width whose signed order is
/// the total order of floats: -NaN < -Inf < ... < -0 < +0 < ... < +Inf <
/// +NaN.
Value buildTotalOrderKey(OpBuilder &b, Location loc, Value x);

/// The rank (i64) of each element of `inputs` (of one shape) along `dim`:
/// the number of elements of its row that sort before it, or are equal and
/// come first. Fails where `before` does.
FailureOr<Value> buildRanks(OpBuilder &b, Location loc, ValueRange inputs,
                            int64_t dim, Before before);

/// The elements of `source` placed at their `ranks` along `dim`, the first
/// `count` of them; where `source` is null, their positions along `dim`
/// (as `elementType`) instead.
Value buildPermuted(OpBuilder &b, Location loc, Value ranks, Value source,
                    Type elementType, int64_t dim, int64_t count);

/// The `k` largest (or smallest) elements of `input` along `dim` in order,
/// and their positions as `indexType`.
FailureOr<SmallVector<Value>> buildTopK(OpBuilder &b, Location loc, Value input,
                                        int64_t dim, int64_t k, bool largest,
                                        Type indexType);

} // namespace sort_builders
} // namespace sbp
} // namespace mlir

#endif // SBP_IMPORT_SORTBUILDERS_H
