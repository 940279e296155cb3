//===- Blas.cpp - Matmuls through OpenBLAS --------------------------------===//
//
// `sbp-matmul-to-blas` turns f32/f64 matmuls into these calls. Every rank
// is one thread of the host (or one process), so OpenBLAS runs
// single-threaded: the ranks already use the cores.
//
//===----------------------------------------------------------------------===//

#include "sbp/Runtime/Memref.h"
#include <cblas.h>
#include <mutex>

using namespace sbp::runtime;

namespace {

void useOneThread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

/// out = c + a * b (out = a * b without `accumulate`), with `out` a fresh
/// row-major buffer.
template <typename T, typename Gemm>
void matmul(int64_t aRank, void *a, int64_t bRank, void *b, int64_t cRank,
            void *c, int64_t outRank, void *out, int64_t accumulate,
            sbp_dtype dtype, Gemm gemm) {
  useOneThread();
  MemrefView lhs(aRank, a, dtype), rhs(bRank, b, dtype), acc(cRank, c, dtype),
      result(outRank, out, dtype);
  int64_t m = lhs.tensor.shape[0], k = lhs.tensor.shape[1],
          n = rhs.tensor.shape[1];
  if (accumulate || k == 0)
    std::memcpy(result.tensor.data, acc.tensor.data, m * n * sizeof(T));
  if (m == 0 || n == 0 || k == 0)
    return;
  gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, T(1),
       static_cast<const T *>(lhs.tensor.data), k,
       static_cast<const T *>(rhs.tensor.data), n, T(accumulate ? 1 : 0),
       static_cast<T *>(result.tensor.data), n);
}

} // namespace

extern "C" {

void sbp_rt_matmul_f32(int64_t aRank, void *a, int64_t bRank, void *b,
                       int64_t cRank, void *c, int64_t outRank, void *out,
                       int64_t accumulate) {
  matmul<float>(aRank, a, bRank, b, cRank, c, outRank, out, accumulate, SBP_F32,
                cblas_sgemm);
}

void sbp_rt_matmul_f64(int64_t aRank, void *a, int64_t bRank, void *b,
                       int64_t cRank, void *c, int64_t outRank, void *out,
                       int64_t accumulate) {
  matmul<double>(aRank, a, bRank, b, cRank, c, outRank, out, accumulate,
                 SBP_F64, cblas_dgemm);
}

} // extern "C"
