//===- Tensors.cpp - Copying and reducing boxes of dense tensors ----------===//

#include "Tensors.h"
#include "sbp/Runtime/Float16.h"
#include <algorithm>
#include <cstring>

using namespace sbp::runtime;

extern "C" int64_t sbp_dtype_size(sbp_dtype dtype) {
  switch (dtype) {
  case SBP_F32:
  case SBP_I32:
    return 4;
  case SBP_F64:
  case SBP_I64:
    return 8;
  case SBP_I8:
    return 1;
  case SBP_F16:
  case SBP_BF16:
    return 2;
  }
  return 0;
}

namespace {

/// Calls `row(srcIndex, dstIndex, length)` for every innermost row of the
/// box, with element indices into the two tensors.
template <typename Fn>
void forEachRow(const sbp_tensor &src, const std::vector<int64_t> &from,
                const sbp_tensor &dst, const std::vector<int64_t> &to,
                const std::vector<int64_t> &size, Fn row) {
  int64_t rank = static_cast<int64_t>(size.size());
  if (rank == 0) {
    row(0, 0, 1);
    return;
  }
  for (int64_t extent : size)
    if (extent == 0)
      return;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (int64_t i = 0; i < rank; ++i) {
      s = s * src.shape[i] + from[i] + index[i];
      d = d * dst.shape[i] + to[i] + index[i];
    }
    row(s, d, size[rank - 1]);
    // Next row: odometer over all but the last dimension.
    int64_t i = rank - 2;
    while (i >= 0 && ++index[i] == size[i])
      index[i--] = 0;
    if (i < 0)
      return;
  }
}

template <typename T>
void reduceRow(const T *src, T *dst, int64_t n, sbp_reduction kind) {
  switch (kind) {
  case SBP_SUM:
    for (int64_t i = 0; i < n; ++i)
      dst[i] += src[i];
    return;
  case SBP_MAX:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::max(dst[i], src[i]);
    return;
  case SBP_MIN:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::min(dst[i], src[i]);
    return;
  }
}

template <typename T>
void reduceBoxAs(const sbp_tensor &src, const std::vector<int64_t> &from,
                 sbp_tensor &dst, const std::vector<int64_t> &to,
                 const std::vector<int64_t> &size, sbp_reduction kind) {
  const T *s = static_cast<const T *>(src.data);
  T *d = static_cast<T *>(dst.data);
  forEachRow(src, from, dst, to, size, [&](int64_t si, int64_t di, int64_t n) {
    reduceRow(s + si, d + di, n, kind);
  });
}

/// What an all-reduce of `T` accumulates in: 16-bit floats in float, so
/// that the ranks' values are rounded once.
template <typename T> struct Accumulator {
  using type = T;
};
template <> struct Accumulator<Half> {
  using type = float;
};
template <> struct Accumulator<BFloat16> {
  using type = float;
};

template <typename T, typename Op>
void reduceToAllAs(const std::vector<const sbp_tensor *> &inputs,
                   const std::vector<sbp_tensor *> &outputs, int64_t begin,
                   int64_t count, Op op) {
  using Acc = typename Accumulator<T>::type;
  // Blocks small enough to stay in cache between the reduction and the
  // copies to the other outputs.
  constexpr int64_t kBlock = 4096;
  std::vector<Acc> acc(std::min(count, kBlock));
  for (int64_t start = begin; start < begin + count; start += kBlock) {
    int64_t n = std::min(kBlock, begin + count - start);
    const T *first = static_cast<const T *>(inputs[0]->data) + start;
    std::copy(first, first + n, acc.begin());
    for (size_t j = 1; j < inputs.size(); ++j) {
      const T *in = static_cast<const T *>(inputs[j]->data) + start;
      for (int64_t i = 0; i < n; ++i)
        acc[i] = op(acc[i], Acc(in[i]));
    }
    for (sbp_tensor *out : outputs)
      std::copy(acc.begin(), acc.begin() + n,
                static_cast<T *>(out->data) + start);
  }
}

template <typename T>
void reduceToAllAs(const std::vector<const sbp_tensor *> &inputs,
                   const std::vector<sbp_tensor *> &outputs, int64_t begin,
                   int64_t count, sbp_reduction kind) {
  using Acc = typename Accumulator<T>::type;
  switch (kind) {
  case SBP_SUM:
    return reduceToAllAs<T>(inputs, outputs, begin, count,
                            [](Acc a, Acc b) { return a + b; });
  case SBP_MAX:
    return reduceToAllAs<T>(inputs, outputs, begin, count,
                            [](Acc a, Acc b) { return std::max(a, b); });
  case SBP_MIN:
    return reduceToAllAs<T>(inputs, outputs, begin, count,
                            [](Acc a, Acc b) { return std::min(a, b); });
  }
}

} // namespace

void sbp::runtime::reduceToAll(const std::vector<const sbp_tensor *> &inputs,
                               const std::vector<sbp_tensor *> &outputs,
                               int64_t begin, int64_t count,
                               sbp_reduction kind) {
  if (count <= 0)
    return;
  switch (inputs[0]->dtype) {
  case SBP_F32:
    return reduceToAllAs<float>(inputs, outputs, begin, count, kind);
  case SBP_F64:
    return reduceToAllAs<double>(inputs, outputs, begin, count, kind);
  case SBP_I32:
    return reduceToAllAs<int32_t>(inputs, outputs, begin, count, kind);
  case SBP_I64:
    return reduceToAllAs<int64_t>(inputs, outputs, begin, count, kind);
  case SBP_I8:
    return reduceToAllAs<int8_t>(inputs, outputs, begin, count, kind);
  case SBP_F16:
    return reduceToAllAs<Half>(inputs, outputs, begin, count, kind);
  case SBP_BF16:
    return reduceToAllAs<BFloat16>(inputs, outputs, begin, count, kind);
  }
}

Box sbp::runtime::wholeBox(const sbp_tensor &t) {
  return {std::vector<int64_t>(t.rank, 0),
          std::vector<int64_t>(t.shape, t.shape + t.rank)};
}

int64_t sbp::runtime::numElements(const sbp_tensor &t) {
  int64_t n = 1;
  for (int64_t i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

int64_t sbp::runtime::pieceOffset(int64_t size, int64_t parts, int64_t index) {
  return index * (size / parts) + std::min(index, size % parts);
}

int64_t sbp::runtime::pieceSize(int64_t size, int64_t parts, int64_t index) {
  return size / parts + (index < size % parts ? 1 : 0);
}

Box sbp::runtime::pieceBox(const sbp_tensor &t, int64_t dim, int64_t parts,
                           int64_t index) {
  Box box = wholeBox(t);
  box.offset[dim] = pieceOffset(t.shape[dim], parts, index);
  box.size[dim] = pieceSize(t.shape[dim], parts, index);
  return box;
}

void sbp::runtime::copyBox(const sbp_tensor &src,
                           const std::vector<int64_t> &from, sbp_tensor &dst,
                           const std::vector<int64_t> &to,
                           const std::vector<int64_t> &size) {
  int64_t bytes = sbp_dtype_size(src.dtype);
  const char *s = static_cast<const char *>(src.data);
  char *d = static_cast<char *>(dst.data);
  forEachRow(src, from, dst, to, size, [&](int64_t si, int64_t di, int64_t n) {
    std::memcpy(d + di * bytes, s + si * bytes, n * bytes);
  });
}

void sbp::runtime::reduceBox(const sbp_tensor &src,
                             const std::vector<int64_t> &from, sbp_tensor &dst,
                             const std::vector<int64_t> &to,
                             const std::vector<int64_t> &size,
                             sbp_reduction kind) {
  switch (src.dtype) {
  case SBP_F32:
    return reduceBoxAs<float>(src, from, dst, to, size, kind);
  case SBP_F64:
    return reduceBoxAs<double>(src, from, dst, to, size, kind);
  case SBP_I32:
    return reduceBoxAs<int32_t>(src, from, dst, to, size, kind);
  case SBP_I64:
    return reduceBoxAs<int64_t>(src, from, dst, to, size, kind);
  case SBP_I8:
    return reduceBoxAs<int8_t>(src, from, dst, to, size, kind);
  case SBP_F16:
    return reduceBoxAs<Half>(src, from, dst, to, size, kind);
  case SBP_BF16:
    return reduceBoxAs<BFloat16>(src, from, dst, to, size, kind);
  }
}
