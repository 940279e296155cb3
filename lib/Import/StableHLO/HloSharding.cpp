//===- HloSharding.cpp - XLA sharding strings as nd-SBP -------------------===//
//
// An XLA tile assignment lists, for each tile of the tensor (a grid of
// `devices=[t0, t1, ...]`), the device holding it; JAX prints it as an iota
// `<=[r0, r1]T(1, 0)`: device ids 0..N-1 laid out row-major in the shape
// `[r0, r1]`, transposed, then read as the tile grid. Both are runs of the
// digits of the device id in some order. The mesh is the mixed radix that
// cuts the device id at every digit boundary any sharding uses; a tile
// dimension enumerating some mesh axes splits its tensor dimension over
// them (`S(d)`), and axes no tensor dimension uses replicate (`B`).
//
//===----------------------------------------------------------------------===//

#include "HloSharding.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <numeric>
#include <set>

using namespace llvm;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;

namespace {
/// Parses `[1, 2, 3]` (or `(1,0)`) at the front of `text`.
bool parseInts(StringRef &text, char open, char close,
               SmallVectorImpl<int64_t> &values) {
  text = text.ltrim();
  if (!text.consume_front(StringRef(&open, 1)))
    return false;
  auto [body, rest] = text.split(close);
  if (rest.data() == nullptr || body.size() == text.size())
    return false;
  text = rest;
  SmallVector<StringRef> parts;
  body.split(parts, ',', -1, false);
  for (StringRef part : parts) {
    int64_t value;
    if (part.trim().getAsInteger(10, value))
      return false;
    values.push_back(value);
  }
  return true;
}

int64_t product(ArrayRef<int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Finds an iota form (reshape dims and permutation) of an explicit
/// device list: the identity or a transposed 2-d layout.
bool findIota(ArrayRef<int64_t> list, SmallVectorImpl<int64_t> &dims,
              SmallVectorImpl<int64_t> &perm) {
  int64_t n = list.size();
  if (llvm::equal(list, llvm::seq<int64_t>(0, n))) {
    dims.assign({n});
    perm.assign({0});
    return true;
  }
  for (int64_t a = 2; a < n; ++a) {
    if (n % a)
      continue;
    int64_t b = n / a;
    // iota([a, b]) transposed: position (j, i) holds i * b + j.
    bool matches = true;
    for (int64_t j = 0; j < b && matches; ++j)
      for (int64_t i = 0; i < a && matches; ++i)
        matches = list[j * a + i] == i * b + j;
    if (matches) {
      dims.assign({a, b});
      perm.assign({1, 0});
      return true;
    }
  }
  return false;
}
} // namespace

int HloShardingSet::add(StringRef text, std::string &error) {
  StringRef body = text.trim();
  if (!body.consume_front("{") || !body.consume_back("}")) {
    error = "expected a sharding in braces, got '" + text.str() + "'";
    return -1;
  }
  body = body.trim();
  Sharding sharding;
  if (body.starts_with("replicated") || body.starts_with("maximal")) {
    sharding.replicated = true;
    shardings.push_back(sharding);
    return shardings.size() - 1;
  }
  if (!body.consume_front("devices=")) {
    error = "unsupported sharding '" + text.str() +
            "' (expected replicated or devices=[...])";
    return -1;
  }
  SmallVector<int64_t> tileDims, dims, perm;
  if (!parseInts(body, '[', ']', tileDims)) {
    error = "malformed tile dimensions in '" + text.str() + "'";
    return -1;
  }
  int64_t n = product(tileDims);
  body = body.ltrim();
  if (body.consume_front("<=")) {
    if (!parseInts(body, '[', ']', dims)) {
      error = "malformed iota dimensions in '" + text.str() + "'";
      return -1;
    }
    body = body.ltrim();
    if (body.consume_front("T") && !parseInts(body, '(', ')', perm)) {
      error = "malformed transpose in '" + text.str() + "'";
      return -1;
    }
  } else {
    SmallVector<int64_t> list;
    auto [listText, rest] = body.split(' ');
    SmallVector<StringRef> parts;
    listText.split(parts, ',');
    for (StringRef part : parts) {
      int64_t device;
      if (part.trim().getAsInteger(10, device))
        break;
      list.push_back(device);
    }
    body = rest;
    if (static_cast<int64_t>(list.size()) != n || !findIota(list, dims, perm)) {
      error = "the device order of '" + text.str() +
              "' is not a (transposed) row-major order sbp can express";
      return -1;
    }
  }
  if (perm.empty())
    perm.assign(llvm::to_vector(llvm::seq<int64_t>(0, dims.size())));
  SmallVector<int64_t> sortedPerm(perm);
  llvm::sort(sortedPerm);
  if (product(dims) != n || perm.size() != dims.size() ||
      !llvm::equal(sortedPerm, llvm::seq<int64_t>(0, dims.size()))) {
    error = "the device assignment of '" + text.str() +
            "' does not match its " + std::to_string(n) + " tiles";
    return -1;
  }
  if (numDevices && numDevices != n) {
    error = "sharding '" + text.str() + "' uses " + std::to_string(n) +
            " devices but an earlier one uses " + std::to_string(numDevices);
    return -1;
  }
  numDevices = n;
  sharding.replicateLast = body.contains("last_tile_dim_replicate") ||
                           body.contains("last_tile_dims={replicated}");
  if (body.contains("manual")) {
    error =
        "manual shardings (shard_map) are not supported: '" + text.str() + "'";
    return -1;
  }
  // The transposed iota's runs of digits, major first.
  SmallVector<Piece> pieces;
  for (int64_t axis : perm)
    pieces.push_back(
        {dims[axis], product(ArrayRef(dims).drop_front(axis + 1))});
  size_t next = 0;
  for (int64_t tile : tileDims) {
    SmallVector<Piece> &taken = sharding.tiles.emplace_back();
    while (tile > 1) {
      if (next == pieces.size()) {
        error = "tile dimensions of '" + text.str() + "' exceed the devices";
        return -1;
      }
      Piece &piece = pieces[next];
      if (piece.size == 1) {
        ++next;
        continue;
      }
      if (piece.size <= tile) {
        if (tile % piece.size) {
          error = "the tiles of '" + text.str() +
                  "' do not align with its device order";
          return -1;
        }
        tile /= piece.size;
        taken.push_back(piece);
        ++next;
        continue;
      }
      if (piece.size % tile) {
        error = "the tiles of '" + text.str() +
                "' do not align with its device order";
        return -1;
      }
      // The tile takes the major part of the run.
      int64_t minor = piece.size / tile;
      taken.push_back({tile, piece.stride * minor});
      piece.size = minor;
      tile = 1;
    }
  }
  shardings.push_back(std::move(sharding));
  return shardings.size() - 1;
}

bool HloShardingSet::buildMesh(std::string &error) {
  std::set<int64_t, std::greater<int64_t>> strides;
  for (const Sharding &sharding : shardings)
    for (const SmallVector<Piece> &tile : sharding.tiles)
      for (const Piece &piece : tile) {
        strides.insert(piece.stride);
        strides.insert(piece.stride * piece.size);
      }
  if (strides.empty())
    return true;
  strides.insert(numDevices);
  strides.insert(1);
  axisStrides.clear();
  meshShape.clear();
  int64_t previous = 0;
  for (int64_t stride : strides) {
    if (previous) {
      if (previous % stride) {
        error = "the shardings' device orders cannot share one mesh "
                "(digit boundaries " +
                std::to_string(previous) + " and " + std::to_string(stride) +
                ")";
        return false;
      }
      meshShape.push_back(previous / stride);
      axisStrides.push_back(stride);
    }
    previous = stride;
  }
  return true;
}

bool HloShardingSet::getEntries(int index, SmallVectorImpl<SbpEntry> &entries,
                                std::string &error) const {
  const Sharding &sharding = shardings[index];
  entries.assign(meshShape.size(), SbpEntry::broadcast());
  if (sharding.replicated)
    return true;
  size_t tensorDims = sharding.tiles.size() - (sharding.replicateLast ? 1 : 0);
  for (size_t dim = 0; dim < tensorDims; ++dim) {
    int64_t lastAxis = -1;
    for (const Piece &piece : sharding.tiles[dim])
      for (size_t axis = 0; axis < meshShape.size(); ++axis) {
        int64_t stride = axisStrides[axis];
        if (stride < piece.stride || stride >= piece.stride * piece.size)
          continue;
        if (static_cast<int64_t>(axis) < lastAxis) {
          error = "dimension " + std::to_string(dim) +
                  " is split over mesh axes out of order";
          return false;
        }
        lastAxis = axis;
        entries[axis] = SbpEntry::split(dim);
      }
  }
  return true;
}
