//===- Shards.cpp - Cutting global tensors into shards and back -----------===//

#include "sbp/Runtime/Shards.h"
#include "Tensors.h"
#include "sbp/Runtime/Float16.h"
#include <cstring>
#include <limits>

using namespace sbp::runtime;

namespace {

sbp_tensor view(const NpyArray &array) {
  return {const_cast<char *>(array.data.data()),
          static_cast<int64_t>(array.shape.size()), array.shape.data(),
          array.dtype};
}

template <typename T> T neutral(sbp_reduction kind) {
  if (kind == SBP_MAX)
    return std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  if (kind == SBP_MIN)
    return std::numeric_limits<T>::has_infinity
               ? std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::max();
  return T(0);
}

template <typename T> void fill(NpyArray &array, sbp_reduction kind) {
  T value = neutral<T>(kind);
  T *data = reinterpret_cast<T *>(array.data.data());
  std::fill(data, data + array.numElements(), value);
}

/// Fills `array` with the neutral element of `kind`.
void fillNeutral(NpyArray &array, sbp_reduction kind) {
  switch (array.dtype) {
  case SBP_F32:
    return fill<float>(array, kind);
  case SBP_F64:
    return fill<double>(array, kind);
  case SBP_I32:
    return fill<int32_t>(array, kind);
  case SBP_I64:
    return fill<int64_t>(array, kind);
  case SBP_I8:
    return fill<int8_t>(array, kind);
  case SBP_F16:
    return fill<Half>(array, kind);
  case SBP_BF16:
    return fill<BFloat16>(array, kind);
  }
}

} // namespace

std::vector<int64_t>
sbp::runtime::getCoords(const std::vector<int64_t> &meshShape, int64_t rank) {
  std::vector<int64_t> coords(meshShape.size());
  for (int64_t a = static_cast<int64_t>(meshShape.size()) - 1; a >= 0; --a) {
    coords[a] = rank % meshShape[a];
    rank /= meshShape[a];
  }
  return coords;
}

void sbp::runtime::getShardBox(const Layout &layout,
                               const std::vector<int64_t> &global,
                               const std::vector<int64_t> &coords,
                               std::vector<int64_t> &offset,
                               std::vector<int64_t> &size) {
  offset.assign(global.size(), 0);
  size = global;
  for (size_t a = 0; a < layout.entries.size(); ++a) {
    const LayoutEntry &entry = layout.entries[a];
    if (entry.kind != LayoutEntry::Split)
      continue;
    int64_t d = entry.dim, parts = layout.meshShape[a];
    offset[d] += pieceOffset(size[d], parts, coords[a]);
    size[d] = pieceSize(size[d], parts, coords[a]);
  }
}

NpyArray sbp::runtime::extractShard(const NpyArray &global,
                                    const Layout &layout,
                                    const std::vector<int64_t> &coords) {
  NpyArray shard;
  shard.dtype = global.dtype;
  std::vector<int64_t> offset;
  getShardBox(layout, global.shape, coords, offset, shard.shape);
  shard.data.resize(shard.numElements() * sbp_dtype_size(shard.dtype));
  for (size_t a = 0; a < layout.entries.size(); ++a) {
    if (layout.entries[a].kind == LayoutEntry::Partial && coords[a] != 0) {
      fillNeutral(shard, layout.entries[a].reduction);
      return shard;
    }
  }
  sbp_tensor src = view(global), dst = view(shard);
  copyBox(src, offset, dst, std::vector<int64_t>(offset.size(), 0),
          shard.shape);
  return shard;
}

bool sbp::runtime::assembleShards(const std::vector<NpyArray> &shards,
                                  const Layout &layout,
                                  const std::vector<int64_t> &global,
                                  NpyArray &result, std::string &error) {
  result = NpyArray();
  result.dtype = shards.empty() ? SBP_F32 : shards[0].dtype;
  result.shape = global;
  result.data.resize(result.numElements() * sbp_dtype_size(result.dtype));
  sbp_tensor dst = view(result);
  // Ranks come in row-major order, so the first of the ranks that differ
  // only along P axes is the one with coordinate 0 on all of them: it
  // copies and the others reduce into its box.
  for (size_t rank = 0; rank < shards.size(); ++rank) {
    std::vector<int64_t> coords = getCoords(layout.meshShape, rank);
    bool skip = false, reduce = false;
    sbp_reduction kind = SBP_SUM;
    for (size_t a = 0; a < layout.entries.size(); ++a) {
      if (layout.entries[a].kind == LayoutEntry::Broadcast && coords[a] != 0)
        skip = true;
      if (layout.entries[a].kind == LayoutEntry::Partial && coords[a] != 0) {
        reduce = true;
        kind = layout.entries[a].reduction;
      }
    }
    if (skip)
      continue;
    std::vector<int64_t> offset, size;
    getShardBox(layout, global, coords, offset, size);
    const NpyArray &shard = shards[rank];
    if (shard.shape != size || shard.dtype != result.dtype) {
      error = "rank " + std::to_string(rank) +
              " returned a shard of another shape or type than its layout "
              "implies";
      return false;
    }
    sbp_tensor src = view(shard);
    std::vector<int64_t> zero(size.size(), 0);
    if (reduce)
      reduceBox(src, zero, dst, offset, size, kind);
    else
      copyBox(src, zero, dst, offset, size);
  }
  return true;
}
