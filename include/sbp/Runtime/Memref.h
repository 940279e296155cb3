//===- Memref.h - MLIR memref descriptors as sbp_tensors --------*- C++ -*-===//
//
// Compiled programs pass buffers as unranked memrefs: a rank and a pointer
// to the descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
// Inputs may be strided views, which are packed into a row-major
// temporary; the host reads returned memrefs the same way.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_MEMREF_H
#define SBP_RUNTIME_MEMREF_H

#include "sbp/Runtime/sbp_runtime.h"
#include <cstring>
#include <vector>

namespace sbp::runtime {

/// The ranked memref descriptor that an unranked memref points to.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  // Followed by sizes[rank] and strides[rank].
};

/// A memref as a row-major sbp_tensor: the memref itself when its strides
/// are row-major, else a packed copy (for reading only).
class MemrefView {
public:
  MemrefView(int64_t rank, void *memref, int64_t dtype)
      : shape(rank), descriptor(static_cast<Descriptor *>(memref)) {
    const auto *sizes = reinterpret_cast<const int64_t *>(descriptor + 1);
    const int64_t *strides = sizes + rank;
    shape.assign(sizes, sizes + rank);
    tensor.rank = rank;
    tensor.shape = shape.data();
    tensor.dtype = static_cast<sbp_dtype>(dtype);
    int64_t elementSize = sbp_dtype_size(tensor.dtype);
    char *base = descriptor->aligned + descriptor->offset * elementSize;
    tensor.data = base;
    if (isRowMajor(sizes, strides, rank))
      return;
    // Gather the strided elements into a row-major temporary.
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    packed.resize(count * elementSize);
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d)
        at += index[d] * strides[d];
      std::memcpy(&packed[i * elementSize], base + at * elementSize,
                  elementSize);
      for (int64_t d = rank - 1; d >= 0 && ++index[d] == sizes[d]; --d)
        index[d] = 0;
    }
    tensor.data = packed.data();
  }

  sbp_tensor tensor{};

private:
  static bool isRowMajor(const int64_t *sizes, const int64_t *strides,
                         int64_t rank) {
    int64_t expected = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }

  std::vector<int64_t> shape;
  Descriptor *descriptor;
  std::vector<char> packed;
};

} // namespace sbp::runtime

#endif // SBP_RUNTIME_MEMREF_H
