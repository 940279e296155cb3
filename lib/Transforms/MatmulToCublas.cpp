//===- MatmulToCublas.cpp - Matmuls as cuBLAS calls -----------------------===//
//
// One runtime entry point per pair of element types (A and B, C), so that
// a module declares each with its own memref types
// (include/sbp/Runtime/sbp_cuda.h).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPMATMULTOCUBLASPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// The name of `type` in the runtime's entry points, or an empty string.
StringRef getTypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  return "";
}

struct SbpMatmulToCublasPass
    : public sbp::impl::SbpMatmulToCublasPassBase<SbpMatmulToCublasPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      auto batched = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      if (!op.hasPureTensorSemantics() ||
          (matmul && matmul.hasUserDefinedMaps()) ||
          (batched && batched.hasUserDefinedMaps()) || (!matmul && !batched))
        return;
      gemms.push_back(op);
    });
    RuntimeCallBuilder calls(getOperation());
    for (linalg::LinalgOp gemm : gemms) {
      Value a = gemm.getDpsInputs()[0], b = gemm.getDpsInputs()[1];
      Value c = gemm.getDpsInits()[0];
      auto type = cast<RankedTensorType>(c.getType());
      Type input = getElementTypeOrSelf(a.getType());
      Type output = type.getElementType();
      StringRef inputName = getTypeName(input);
      // f16 and bf16 products may accumulate into f32; nothing else mixes.
      if (inputName.empty() || getElementTypeOrSelf(b.getType()) != input ||
          (output != input &&
           !(output.isF32() && input.getIntOrFloatBitWidth() == 16)))
        continue;
      calls.setInsertionPoint(gemm);
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(calls.dim(c, d));
      Value out = calls.alloc(type, sizes);
      // A zero C is not read: the fill that makes it goes away.
      bool accumulate = !isZeroFill(c);
      calls.call(
          ("sbp_rt_cuda_matmul_" + inputName + "_" + getTypeName(output)).str(),
          {calls.toBuffer(a), calls.toBuffer(b),
           accumulate ? calls.toBuffer(c) : calls.unranked(out),
           calls.unranked(out), calls.i64(accumulate),
           calls.i64(tf32 ? 1 : 0)});
      gemm->getResult(0).replaceAllUsesWith(calls.toTensor(out, type));
      gemm->erase();
    }
  }
};

} // namespace
