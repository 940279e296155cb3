//===- Cublas.cpp - GEMMs of compiled programs through cuBLAS -------------===//
//
// cuBLAS is column-major: the row-major C = A B is computed as the
// column-major C^T = B^T A^T, which reads the same memory without
// transposing anything.
//
//===----------------------------------------------------------------------===//

#include "CudaLibraries.h"
#include "sbp/Runtime/sbp_cuda.h"

using namespace sbp::cuda;

namespace {

/// An unranked memref's descriptor (see sbp_program.h).
struct Descriptor {
  int64_t rank;
  char *aligned;
  int64_t offset;
  const int64_t *sizes, *strides;

  Descriptor(int64_t rank, void *descriptor) : rank(rank) {
    auto *fields = static_cast<int64_t *>(descriptor);
    aligned = reinterpret_cast<char *>(fields[1]);
    offset = fields[2];
    sizes = fields + 3;
    strides = fields + 3 + rank;
  }
  void *data(int64_t elementBytes) const {
    return aligned + offset * elementBytes;
  }
};

int64_t getElementBytes(int64_t type) {
  return type == SBP_GEMM_F64 ? 8 : type == SBP_GEMM_F32 ? 4 : 2;
}

int getCudaType(int64_t type) {
  switch (type) {
  case SBP_GEMM_F64:
    return CUDA_R_64F;
  case SBP_GEMM_F16:
    return CUDA_R_16F;
  case SBP_GEMM_BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// The row pitch of a row-major matrix of `rows` x `cols` with strides
/// `rowStride`, `colStride`, or -1 when it is not row-major.
int64_t getPitch(int64_t rows, int64_t cols, int64_t rowStride,
                 int64_t colStride) {
  if (colStride != 1 && cols > 1)
    return -1;
  if (rows <= 1)
    return cols > 0 ? cols : 1;
  return rowStride >= cols && rowStride > 0 ? rowStride : -1;
}

} // namespace

extern "C" {

int sbp_cuda_gemm_shape(int64_t rank, const int64_t *aSizes,
                        const int64_t *aStrides, const int64_t *bSizes,
                        const int64_t *bStrides, const int64_t *cSizes,
                        const int64_t *cStrides, sbp_gemm_shape *shape,
                        const char **error) {
  if (rank != 2 && rank != 3) {
    *error = "GEMM operands must be matrices or batches of them";
    return -1;
  }
  int64_t r = rank - 2;
  shape->batch = rank == 3 ? cSizes[0] : 1;
  shape->m = aSizes[r];
  shape->k = aSizes[r + 1];
  shape->n = bSizes[r + 1];
  if (bSizes[r] != shape->k || cSizes[r] != shape->m ||
      cSizes[r + 1] != shape->n ||
      (rank == 3 && (aSizes[0] != shape->batch || bSizes[0] != shape->batch))) {
    *error = "GEMM operand shapes do not match";
    return -1;
  }
  shape->lda = getPitch(shape->m, shape->k, aStrides[r], aStrides[r + 1]);
  shape->ldb = getPitch(shape->k, shape->n, bStrides[r], bStrides[r + 1]);
  shape->ldc = getPitch(shape->m, shape->n, cStrides[r], cStrides[r + 1]);
  if (shape->lda < 0 || shape->ldb < 0 || shape->ldc < 0) {
    *error = "GEMM operands must be row-major";
    return -1;
  }
  shape->stride_a = rank == 3 ? aStrides[0] : 0;
  shape->stride_b = rank == 3 ? bStrides[0] : 0;
  shape->stride_c = rank == 3 ? cStrides[0] : 0;
  return 0;
}

void sbp_rt_cuda_matmul(int64_t aRank, void *a, int64_t bRank, void *b,
                        int64_t cRank, void *c, int64_t outRank, void *out,
                        int64_t accumulate, int64_t aType, int64_t cType,
                        int64_t tf32) {
  RankState &rank = getRank();
  if (rank.device < 0) {
    rank.fail("sbp_rt_cuda_matmul: no rank began on this thread");
    return;
  }
  // After a failure the rank only runs to its end.
  if (!rank.error.empty())
    return;
  if (!getCublasHandle(rank, rank.stream))
    return;
  const Cublas *cublas = getCublas();

  Descriptor da(aRank, a), db(bRank, b), dc(cRank, c), dout(outRank, out);
  if (aRank != bRank || aRank != cRank || aRank != outRank) {
    rank.fail("sbp_rt_cuda_matmul: operands of different ranks");
    return;
  }
  sbp_gemm_shape shape, outShape;
  const char *problem = nullptr;
  if (sbp_cuda_gemm_shape(aRank, da.sizes, da.strides, db.sizes, db.strides,
                          dout.sizes, dout.strides, &outShape, &problem) ||
      (accumulate &&
       sbp_cuda_gemm_shape(aRank, da.sizes, da.strides, db.sizes, db.strides,
                           dc.sizes, dc.strides, &shape, &problem))) {
    rank.fail(std::string("sbp_rt_cuda_matmul: ") + problem);
    return;
  }
  int64_t aBytes = getElementBytes(aType), cBytes = getElementBytes(cType);
  void *outData = dout.data(cBytes);
  // C + A B: the product accumulates onto a copy of C.
  if (accumulate && dc.data(cBytes) != outData) {
    for (int64_t i = 0; i < outShape.batch; ++i)
      if (!copy2D(static_cast<char *>(outData) + i * outShape.stride_c * cBytes,
                  outShape.ldc * cBytes,
                  static_cast<char *>(dc.data(cBytes)) +
                      i * shape.stride_c * cBytes,
                  shape.ldc * cBytes, outShape.n * cBytes, outShape.m))
        return;
  }
  if (outShape.m == 0 || outShape.n == 0 || outShape.batch == 0)
    return;
  bool isDouble = aType == SBP_GEMM_F64;
  double alpha64 = 1, beta64 = accumulate ? 1 : 0;
  float alpha32 = 1, beta32 = accumulate ? 1 : 0;
  int compute = isDouble                          ? CUBLAS_COMPUTE_64F
                : (tf32 && aType == SBP_GEMM_F32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
  int status = cublas->gemmStridedBatchedEx(
      rank.cublas, CUBLAS_OP_N, CUBLAS_OP_N, outShape.n, outShape.m, outShape.k,
      isDouble ? static_cast<void *>(&alpha64) : &alpha32, db.data(aBytes),
      getCudaType(aType), outShape.ldb, outShape.stride_b, da.data(aBytes),
      getCudaType(aType), outShape.lda, outShape.stride_a,
      isDouble ? static_cast<void *>(&beta64) : &beta32, outData,
      getCudaType(cType), outShape.ldc, outShape.stride_c, outShape.batch,
      compute, CUBLAS_GEMM_DEFAULT);
  if (status)
    rank.fail(std::string("cublasGemmStridedBatchedEx: ") +
              cublas->getStatusString(status));
}

#define SBP_CUDA_MATMUL(A, C, A_TYPE, C_TYPE)                                  \
  void sbp_rt_cuda_matmul_##A##_##C(                                           \
      int64_t aRank, void *a, int64_t bRank, void *b, int64_t cRank, void *c,  \
      int64_t outRank, void *out, int64_t accumulate, int64_t tf32) {          \
    sbp_rt_cuda_matmul(aRank, a, bRank, b, cRank, c, outRank, out, accumulate, \
                       A_TYPE, C_TYPE, tf32);                                  \
  }
SBP_CUDA_MATMUL(f32, f32, SBP_GEMM_F32, SBP_GEMM_F32)
SBP_CUDA_MATMUL(f64, f64, SBP_GEMM_F64, SBP_GEMM_F64)
SBP_CUDA_MATMUL(f16, f16, SBP_GEMM_F16, SBP_GEMM_F16)
SBP_CUDA_MATMUL(f16, f32, SBP_GEMM_F16, SBP_GEMM_F32)
SBP_CUDA_MATMUL(bf16, bf16, SBP_GEMM_BF16, SBP_GEMM_BF16)
SBP_CUDA_MATMUL(bf16, f32, SBP_GEMM_BF16, SBP_GEMM_F32)

} // extern "C"
