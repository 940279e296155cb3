//===- Shards.h - Cutting global tensors into shards and back ---*- C++ -*-===//
//
// How a host gives each rank its shard of a global tensor laid out by an
// nd-SBP, and rebuilds the global tensor from the ranks' shards: the
// runtime-side twin of the dialect's local shapes.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_SHARDS_H
#define SBP_RUNTIME_SHARDS_H

#include "sbp/Runtime/Npy.h"
#include <string>
#include <vector>

namespace sbp::runtime {

/// One mesh axis's entry of an nd-SBP.
struct LayoutEntry {
  enum Kind { Split, Broadcast, Partial } kind = Broadcast;
  int64_t dim = 0;                   ///< For Split.
  sbp_reduction reduction = SBP_SUM; ///< For Partial.

  bool operator==(const LayoutEntry &other) const {
    return kind == other.kind && (kind != Split || dim == other.dim) &&
           (kind != Partial || reduction == other.reduction);
  }
};

/// An nd-SBP over a mesh: one entry per mesh axis.
struct Layout {
  std::vector<int64_t> meshShape;
  std::vector<LayoutEntry> entries;
};

/// The row-major coordinates of device `rank` of `meshShape`.
std::vector<int64_t> getCoords(const std::vector<int64_t> &meshShape,
                               int64_t rank);

/// The box of the global tensor of shape `global` that the device at
/// `coords` holds: several axes splitting one dimension split it
/// hierarchically, in mesh axis order, with balanced pieces.
void getShardBox(const Layout &layout, const std::vector<int64_t> &global,
                 const std::vector<int64_t> &coords,
                 std::vector<int64_t> &offset, std::vector<int64_t> &size);

/// The shard of `global` for the device at `coords`. Along a `P` axis the
/// device with coordinate 0 holds the value and the others the reduction's
/// neutral element, so that reducing over the axis gives the value back.
NpyArray extractShard(const NpyArray &global, const Layout &layout,
                      const std::vector<int64_t> &coords);

/// Rebuilds the global tensor of shape `global` from every device's shard
/// (`shards[rank]`), reducing partial values. Returns false and sets
/// `error` when a shard does not have the shape its layout implies.
bool assembleShards(const std::vector<NpyArray> &shards, const Layout &layout,
                    const std::vector<int64_t> &global, NpyArray &result,
                    std::string &error);

} // namespace sbp::runtime

#endif // SBP_RUNTIME_SHARDS_H
