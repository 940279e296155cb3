//===- MatmulToBlas.cpp - Matmuls as OpenBLAS calls -----------------------===//

#include "RuntimeCalls.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPMATMULTOBLASPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

struct SbpMatmulToBlasPass
    : public sbp::impl::SbpMatmulToBlasPassBase<SbpMatmulToBlasPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp matmul) {
      if (matmul.hasPureTensorSemantics() && !matmul.hasUserDefinedMaps())
        matmuls.push_back(matmul);
    });
    RuntimeCallBuilder calls(getOperation());
    for (linalg::MatmulOp matmul : matmuls) {
      auto type = cast<RankedTensorType>(matmul.getResultTypes()[0]);
      Type element = type.getElementType();
      if (!element.isF32() && !element.isF64())
        continue;
      // Transposes or casts inside the body are not a plain GEMM.
      if (!llvm::all_of(matmul.getOperandTypes(), [&](Type t) {
            return cast<RankedTensorType>(t).getElementType() == element;
          }))
        continue;
      calls.setInsertionPoint(matmul);
      Value a = matmul.getDpsInputs()[0], b = matmul.getDpsInputs()[1];
      Value c = matmul.getDpsInits()[0];
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(calls.dim(c, d));
      Value out = calls.alloc(type, sizes);
      // A zero-filled C is not read: GEMM overwrites the result.
      calls.call(element.isF32() ? "sbp_rt_matmul_f32" : "sbp_rt_matmul_f64",
                 {calls.toBuffer(a), calls.toBuffer(b), calls.toBuffer(c),
                  calls.unranked(out), calls.i64(isZeroFill(c) ? 0 : 1)});
      matmul->getResult(0).replaceAllUsesWith(calls.toTensor(out, type));
      matmul->erase();
    }
  }
};

} // namespace
