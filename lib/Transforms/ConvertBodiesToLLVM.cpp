//===- ConvertBodiesToLLVM.cpp - One conversion of a function's body ------===//
//
// Lowers the vector, ub, arith, cf and index ops of one function to the LLVM
// dialect in a single dialect conversion, where upstream's passes take five:
// each of those walks every op of the function, and each leaves casts at its
// boundary with the next for the next to fold.
//
//===----------------------------------------------------------------------===//

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPCONVERTBODIESTOLLVMPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Rewrites the vector ops that have no direct LLVM counterpart into those
/// that have, as upstream's convert-vector-to-llvm does before it converts.
LogicalResult lowerVectorOps(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  vector::populateVectorToVectorCanonicalizationPatterns(patterns);
  vector::populateVectorBitCastLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  // Outer products: register tiles of FMAs, not dot products' reductions.
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorInterleaveLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  // Transfers of a higher rank were unrolled by convert-vector-to-scf.
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorMaskMaterializationPatterns(
      patterns, /*force32BitVectorIndices=*/true);
  vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
  vector::populateVectorStepLoweringPatterns(patterns);
  vector::populateVectorRankReducingFMAPattern(patterns);
  vector::populateVectorGatherLoweringPatterns(patterns);
  // Only the vector ops and what their rewrites create: the greedy driver
  // would otherwise visit and try to fold every op of the function.
  SmallVector<Operation *> vectorOps;
  func.walk([&](Operation *op) {
    if (isa<vector::VectorDialect>(op->getDialect()))
      vectorOps.push_back(op);
  });
  if (vectorOps.empty())
    return success();
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  return applyOpPatternsGreedily(vectorOps, std::move(patterns), config);
}

/// Folds the extracts from memref descriptors and other aggregates that
/// finalize-memref-to-llvm and the conversion left (an `llvm.extractvalue`
/// of a field that an `llvm.insertvalue` wrote is that value) and erases
/// the ops that become dead, as the greedy rewrite of upstream's
/// convert-vector-to-llvm did over the whole function. The glue is compiled
/// unoptimized, so what is not folded here costs code generation time and
/// run time. One walk suffices: an op comes after the ops it reads.
void foldAggregates(func::FuncOp func) {
  SmallVector<Operation *> aggregateOps;
  func.walk([&](Operation *op) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(op);
    if (!extract) {
      if (isa<LLVM::InsertValueOp>(op))
        aggregateOps.push_back(op);
      return;
    }
    // A fold that returns the op itself moved it up the chain of inserts:
    // fold again from there.
    SmallVector<OpFoldResult> folded;
    while (succeeded(extract->fold(folded)) && folded.size() == 1) {
      auto value = dyn_cast<Value>(folded.front());
      if (!value)
        break; // A constant: left to LLVM.
      if (value != extract.getResult()) {
        extract.getResult().replaceAllUsesWith(value);
        extract->erase();
        return;
      }
      folded.clear();
    }
    aggregateOps.push_back(op);
  });
  // An op that reads an aggregate comes after the op that wrote it: erase
  // the unused ones from the back.
  for (Operation *op : llvm::reverse(aggregateOps))
    if (op->use_empty())
      op->erase();
}

struct SbpConvertBodiesToLLVMPass
    : public sbp::impl::SbpConvertBodiesToLLVMPassBase<
          SbpConvertBodiesToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (failed(lowerVectorOps(func)))
      return signalPassFailure();

    MLIRContext *context = &getContext();
    LLVMTypeConverter converter(context, LowerToLLVMOptions(context));
    RewritePatternSet patterns(context);
    vector::populateVectorTransferLoweringPatterns(patterns);
    populateVectorToLLVMConversionPatterns(
        converter, patterns, /*reassociateFPReductions=*/false,
        /*force32BitVectorIndices=*/true, /*useVectorAlignment=*/false);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    // What convert-arith-to-llvm does first: ceil and floor divisions in
    // terms of the divisions LLVM has.
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    // Not cf.assert: its lowering declares abort in the module, which a
    // pass on one function of many converted in parallel must not touch.
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);

    LLVMConversionTarget target(*context);
    target.addLegalOp<UnrealizedConversionCastOp, cf::AssertOp>();
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      return signalPassFailure();
    foldAggregates(func);
  }
};

} // namespace
