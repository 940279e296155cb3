//===- Tensors.cpp - Copying and reducing boxes of dense tensors ----------===//

#include "Tensors.h"
#include "sbp/Runtime/Float16.h"
#include <algorithm>
#include <cstring>
#include <type_traits>

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

/// Reduces `count` elements of each of `ins` with `op` and writes the result
/// to each of `outs`, in blocks small enough to stay in cache between the
/// reduction and the copies; `acc` is scratch space.
template <typename T, typename Acc, typename Op>
void reduceRows(const std::vector<const T *> &ins, const std::vector<T *> &outs,
                int64_t count, std::vector<Acc> &acc, Op op) {
  constexpr int64_t kBlock = 4096;
  acc.resize(std::min(count, kBlock));
  for (int64_t start = 0; start < count; start += kBlock) {
    int64_t n = std::min(kBlock, count - start);
    std::copy(ins[0] + start, ins[0] + start + n, acc.begin());
    for (size_t j = 1; j < ins.size(); ++j)
      for (int64_t i = 0; i < n; ++i)
        acc[i] = op(acc[i], Acc(ins[j][start + i]));
    for (T *out : outs)
      std::copy(acc.begin(), acc.begin() + n, out + start);
  }
}

/// Calls `fn` with the combiner of `kind` on `T`'s accumulator type.
template <typename T, typename Fn>
void withCombiner(sbp_reduction kind, Fn fn) {
  using Acc = typename Accumulator<T>::type;
  switch (kind) {
  case SBP_SUM:
    return fn([](Acc a, Acc b) { return a + b; });
  case SBP_MAX:
    return fn([](Acc a, Acc b) { return std::max(a, b); });
  case SBP_MIN:
    return fn([](Acc a, Acc b) { return std::min(a, b); });
  }
}

template <typename T>
void reduceToAllAs(const std::vector<const sbp_tensor *> &inputs,
                   const std::vector<sbp_tensor *> &outputs, int64_t begin,
                   int64_t count, sbp_reduction kind) {
  std::vector<const T *> ins;
  for (const sbp_tensor *in : inputs)
    ins.push_back(static_cast<const T *>(in->data) + begin);
  std::vector<T *> outs;
  for (sbp_tensor *out : outputs)
    outs.push_back(static_cast<T *>(out->data) + begin);
  std::vector<typename Accumulator<T>::type> acc;
  withCombiner<T>(kind,
                  [&](auto op) { reduceRows(ins, outs, count, acc, op); });
}

template <typename T>
void reduceBoxesAs(const std::vector<const sbp_tensor *> &srcs,
                   const std::vector<int64_t> &from, sbp_tensor &dst,
                   const std::vector<int64_t> &to,
                   const std::vector<int64_t> &size, sbp_reduction kind) {
  std::vector<const T *> ins(srcs.size());
  std::vector<T *> outs(1);
  std::vector<typename Accumulator<T>::type> acc;
  withCombiner<T>(kind, [&](auto op) {
    forEachRow(*srcs[0], from, dst, to, size,
               [&](int64_t si, int64_t di, int64_t n) {
                 for (size_t j = 0; j < srcs.size(); ++j)
                   ins[j] = static_cast<const T *>(srcs[j]->data) + si;
                 outs[0] = static_cast<T *>(dst.data) + di;
                 reduceRows(ins, outs, n, acc, op);
               });
  });
}

template <typename T>
void reduceBoxAs(const sbp_tensor &src, const std::vector<int64_t> &from,
                 sbp_tensor &dst, const std::vector<int64_t> &to,
                 const std::vector<int64_t> &size, sbp_reduction kind) {
  std::vector<const T *> ins(2);
  std::vector<T *> outs(1);
  std::vector<typename Accumulator<T>::type> acc;
  withCombiner<T>(kind, [&](auto op) {
    forEachRow(src, from, dst, to, size,
               [&](int64_t si, int64_t di, int64_t n) {
                 outs[0] = static_cast<T *>(dst.data) + di;
                 ins = {outs[0], static_cast<const T *>(src.data) + si};
                 reduceRows(ins, outs, n, acc, op);
               });
  });
}

/// Calls `fn` with a null pointer of the element type of `dtype`.
template <typename Fn> void withElementType(sbp_dtype dtype, Fn fn) {
  switch (dtype) {
  case SBP_F32:
    return fn(static_cast<float *>(nullptr));
  case SBP_F64:
    return fn(static_cast<double *>(nullptr));
  case SBP_I32:
    return fn(static_cast<int32_t *>(nullptr));
  case SBP_I64:
    return fn(static_cast<int64_t *>(nullptr));
  case SBP_I8:
    return fn(static_cast<int8_t *>(nullptr));
  case SBP_F16:
    return fn(static_cast<Half *>(nullptr));
  case SBP_BF16:
    return fn(static_cast<BFloat16 *>(nullptr));
  }
}

} // namespace

void sbp::runtime::reduceToAll(const std::vector<const sbp_tensor *> &inputs,
                               const std::vector<sbp_tensor *> &outputs,
                               int64_t begin, int64_t count,
                               sbp_reduction kind) {
  if (count <= 0)
    return;
  withElementType(inputs[0]->dtype, [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    reduceToAllAs<T>(inputs, outputs, begin, count, kind);
  });
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
  withElementType(src.dtype, [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    reduceBoxAs<T>(src, from, dst, to, size, kind);
  });
}

void sbp::runtime::reduceBoxes(const std::vector<const sbp_tensor *> &srcs,
                               const std::vector<int64_t> &from,
                               sbp_tensor &dst, const std::vector<int64_t> &to,
                               const std::vector<int64_t> &size,
                               sbp_reduction kind) {
  withElementType(dst.dtype, [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    reduceBoxesAs<T>(srcs, from, dst, to, size, kind);
  });
}
