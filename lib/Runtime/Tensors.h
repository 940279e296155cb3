//===- Tensors.h - Copying and reducing boxes of dense tensors --*- C++ -*-===//
//
// The data movement every backend needs: copy or reduce an n-d box of one
// row-major tensor into a box of another, and balanced pieces.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_TENSORS_H
#define SBP_RUNTIME_TENSORS_H

#include "sbp/Runtime/sbp_runtime.h"
#include <cstdint>
#include <vector>

namespace sbp::runtime {

/// A box: `size` elements per dimension starting at `offset`.
struct Box {
  std::vector<int64_t> offset;
  std::vector<int64_t> size;
};

/// The whole of a tensor as a box.
Box wholeBox(const sbp_tensor &t);

/// Number of elements of `t`.
int64_t numElements(const sbp_tensor &t);

/// Offset and size of piece `index` of a balanced split of `size` into
/// `parts` (the first `size % parts` pieces are one larger).
int64_t pieceOffset(int64_t size, int64_t parts, int64_t index);
int64_t pieceSize(int64_t size, int64_t parts, int64_t index);

/// The box of `t` that is piece `index` of a balanced split of dimension
/// `dim` into `parts`: whole along every other dimension.
Box pieceBox(const sbp_tensor &t, int64_t dim, int64_t parts, int64_t index);

/// Copies box `from` of `src` to the box of the same size at `to` in `dst`.
void copyBox(const sbp_tensor &src, const std::vector<int64_t> &from,
             sbp_tensor &dst, const std::vector<int64_t> &to,
             const std::vector<int64_t> &size);

/// Reduces box `from` of `src` into the box of the same size at `to` in
/// `dst`, element-wise with `kind`.
void reduceBox(const sbp_tensor &src, const std::vector<int64_t> &from,
               sbp_tensor &dst, const std::vector<int64_t> &to,
               const std::vector<int64_t> &size, sbp_reduction kind);

/// Reduces box `from` of every one of `srcs` (tensors of one shape) with
/// `kind` into the box of the same size at `to` in `dst`, accumulating as
/// reduceToAll does (16-bit floats in f32, rounded once).
void reduceBoxes(const std::vector<const sbp_tensor *> &srcs,
                 const std::vector<int64_t> &from, sbp_tensor &dst,
                 const std::vector<int64_t> &to,
                 const std::vector<int64_t> &size, sbp_reduction kind);

/// Reduces elements [begin, begin + count) of the flattened `inputs` with
/// `kind` and writes the result to the same elements of every one of
/// `outputs`, in one pass; 16-bit floats are accumulated in f32 and rounded
/// once.
void reduceToAll(const std::vector<const sbp_tensor *> &inputs,
                 const std::vector<sbp_tensor *> &outputs, int64_t begin,
                 int64_t count, sbp_reduction kind);

} // namespace sbp::runtime

#endif // SBP_RUNTIME_TENSORS_H
