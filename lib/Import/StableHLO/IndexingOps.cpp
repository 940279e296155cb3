//===- IndexingOps.cpp - StableHLO gather and scatter ---------------------===//
//
// A gather is a generic over its result whose payload reads the operand
// with `tensor.extract` at the gathered position (the operand is captured,
// so partitioning keeps it whole; the index tensor is an input and splits
// with the result's batch). A scatter is a generic over the operand that
// reduces over the updates, applying the combiner where an update's index
// names the element (an add, mul, max or min to the update masked by that
// match, a plain reduction): the embedding-gradient pattern and every
// scatter whose update windows span the operand's other dimensions whole.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "sbp/Dialect/Sbp/Utils/MaskedReduction.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

/// The map from `loops` loops to the index tensor of rank `rank` reading
/// component `k` of the index vector at `indexVectorDim`; `batchLoops`
/// gives, in order, the loop of each other index dimension.
AffineMap indexComponentMap(OpBuilder &b, unsigned loops, int64_t rank,
                            int64_t indexVectorDim, int64_t k,
                            ArrayRef<unsigned> batchLoops) {
  SmallVector<AffineExpr> exprs;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(d == indexVectorDim
                        ? b.getAffineConstantExpr(k)
                        : b.getAffineDimExpr(batchLoops[next++]));
  return AffineMap::get(loops, 0, exprs, b.getContext());
}

/// The number of components of each index vector.
int64_t indexVectorLength(RankedTensorType indices, int64_t indexVectorDim) {
  return indexVectorDim >= 0 && indexVectorDim < indices.getRank()
             ? indices.getDimSize(indexVectorDim)
             : 1;
}

Result convertGather(Operation *op, OpBuilder &b) {
  auto gather = cast<shlo::GatherOp>(op);
  RankedTensorType operand = getStaticType(op, gather.getOperand());
  RankedTensorType indices = getStaticType(op, gather.getStartIndices());
  RankedTensorType out = getStaticType(op, gather.getResult());
  if (!operand || !indices || !out)
    return failure();
  shlo::GatherDimensionNumbersAttr dims = gather.getDimensionNumbers();
  ArrayRef<int64_t> offsetDims = dims.getOffsetDims(),
                    collapsed = dims.getCollapsedSliceDims(),
                    startIndexMap = dims.getStartIndexMap(),
                    sliceSizes = gather.getSliceSizes();
  ArrayRef<int64_t> operandBatching = dims.getOperandBatchingDims(),
                    indicesBatching = dims.getStartIndicesBatchingDims();
  int64_t indexVectorDim = dims.getIndexVectorDim();
  int64_t rank = out.getRank(), indexRank = indices.getRank();
  auto isOperandDim = [&](int64_t d) {
    return d >= 0 && d < operand.getRank();
  };
  if (static_cast<int64_t>(sliceSizes.size()) != operand.getRank() ||
      indexVectorDim < 0 || indexVectorDim > indexRank ||
      operandBatching.size() != indicesBatching.size() ||
      indexVectorLength(indices, indexVectorDim) !=
          static_cast<int64_t>(startIndexMap.size()) ||
      !llvm::all_of(startIndexMap, isOperandDim) ||
      !llvm::all_of(operandBatching, isOperandDim) ||
      llvm::any_of(indicesBatching, [&](int64_t d) {
        return d < 0 || d >= indexRank || d == indexVectorDim;
      })) {
    op->emitError("unsupported gather: dimension numbers that do not fit the "
                  "operands");
    return failure();
  }
  // Result loops: offset dims index the slice, the others the indices.
  SmallVector<unsigned> batchLoops;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(offsetDims, d))
      batchLoops.push_back(d);
  SmallVector<int64_t> windowDims;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    if (!llvm::is_contained(collapsed, d) &&
        !llvm::is_contained(operandBatching, d))
      windowDims.push_back(d);
  if (batchLoops.size() !=
          static_cast<size_t>(indexRank -
                              (indexVectorDim < indexRank ? 1 : 0)) ||
      windowDims.size() != offsetDims.size()) {
    op->emitError("gather dimension numbers do not match the result's rank");
    return failure();
  }
  // A batching dimension of the operand is read at the result loop of its
  // partner among the indices' dimensions.
  auto loopOfIndexDim = [&](int64_t d) {
    return batchLoops[d - (d > indexVectorDim ? 1 : 0)];
  };
  Location loc = op->getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (size_t k = 0; k < startIndexMap.size(); ++k) {
    inputs.push_back(gather.getStartIndices());
    maps.push_back(
        indexComponentMap(b, rank, indexRank, indexVectorDim, k, batchLoops));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = createEmpty(b, loc, out.getShape(), out.getElementType());
  Value table = gather.getOperand();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, out, inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> coords(operand.getRank(),
                                  arith::ConstantIndexOp::create(nb, l, 0));
        for (auto [k, dim] : llvm::enumerate(startIndexMap)) {
          // Starts are clamped so that the slice lies in the operand.
          Value start = toIndex(nb, l, args[k]);
          Value zero = arith::ConstantIndexOp::create(nb, l, 0);
          Value last = arith::ConstantIndexOp::create(
              nb, l, operand.getDimSize(dim) - sliceSizes[dim]);
          coords[dim] = arith::MinSIOp::create(
              nb, l, arith::MaxSIOp::create(nb, l, start, zero), last);
        }
        for (auto [window, resultDim] : llvm::zip(windowDims, offsetDims))
          coords[window] = arith::AddIOp::create(
              nb, l, coords[window], linalg::IndexOp::create(nb, l, resultDim));
        for (auto [dim, indexDim] : llvm::zip(operandBatching, indicesBatching))
          coords[dim] =
              linalg::IndexOp::create(nb, l, loopOfIndexDim(indexDim));
        linalg::YieldOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, table, coords).getResult());
      });
  return SmallVector<Value>{generic.getResult(0)};
}

Result convertScatter(Operation *op, OpBuilder &b) {
  auto scatter = cast<shlo::ScatterOp>(op);
  if (scatter.getInputs().size() != 1) {
    op->emitError("scatter of several operands is not supported");
    return failure();
  }
  RankedTensorType operand = getStaticType(op, scatter.getInputs()[0]);
  RankedTensorType indices = getStaticType(op, scatter.getScatterIndices());
  RankedTensorType updates = getStaticType(op, scatter.getUpdates()[0]);
  if (!operand || !indices || !updates)
    return failure();
  shlo::ScatterDimensionNumbersAttr dims = scatter.getScatterDimensionNumbers();
  ArrayRef<int64_t> windowDims = dims.getUpdateWindowDims(),
                    inserted = dims.getInsertedWindowDims(),
                    toOperand = dims.getScatterDimsToOperandDims();
  int64_t indexVectorDim = dims.getIndexVectorDim();
  int64_t rank = operand.getRank(), indexRank = indices.getRank();
  ArrayRef<int64_t> inputBatching = dims.getInputBatchingDims(),
                    indicesBatching = dims.getScatterIndicesBatchingDims();
  // Operand dims that update windows cover, in order.
  SmallVector<int64_t> covered;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(inserted, d) &&
        !llvm::is_contained(inputBatching, d))
      covered.push_back(d);
  bool supported =
      covered.size() == windowDims.size() && indexVectorDim >= 0 &&
      indexVectorDim <= indexRank &&
      inputBatching.size() == indicesBatching.size() &&
      llvm::all_of(inputBatching, [&](int64_t d) { return d < rank; }) &&
      llvm::all_of(indicesBatching, [&](int64_t d) {
        return d < indexRank && d != indexVectorDim;
      });
  supported &= llvm::all_of(toOperand, [&](int64_t d) { return d < rank; }) &&
               indexVectorLength(indices, indexVectorDim) ==
                   static_cast<int64_t>(toOperand.size()) &&
               updates.getRank() - static_cast<int64_t>(windowDims.size()) ==
                   indexRank - (indexVectorDim < indexRank ? 1 : 0);
  for (auto [window, dim] : llvm::zip(windowDims, covered))
    supported &= window >= 0 && window < updates.getRank() &&
                 updates.getDimSize(window) == operand.getDimSize(dim) &&
                 !llvm::is_contained(toOperand, dim);
  if (!supported) {
    op->emitError("unsupported scatter: update windows must span the "
                  "operand's non-inserted dimensions whole");
    return failure();
  }
  // Loops: the operand's, then the updates' scatter dimensions.
  SmallVector<int64_t> scatterDims;
  for (int64_t d = 0; d < updates.getRank(); ++d)
    if (!llvm::is_contained(windowDims, d))
      scatterDims.push_back(d);
  unsigned loops = rank + scatterDims.size();
  SmallVector<unsigned> scatterLoops;
  for (size_t i = 0; i < scatterDims.size(); ++i)
    scatterLoops.push_back(rank + i);
  SmallVector<AffineExpr> updateExprs(updates.getRank());
  for (auto [i, d] : llvm::enumerate(scatterDims))
    updateExprs[d] = b.getAffineDimExpr(rank + i);
  for (auto [window, dim] : llvm::zip(windowDims, covered))
    updateExprs[window] = b.getAffineDimExpr(dim);
  SmallVector<Value> inputs = {scatter.getUpdates()[0]};
  SmallVector<AffineMap> maps = {
      AffineMap::get(loops, 0, updateExprs, b.getContext())};
  for (size_t k = 0; k < toOperand.size(); ++k) {
    inputs.push_back(scatter.getScatterIndices());
    maps.push_back(indexComponentMap(b, loops, indexRank, indexVectorDim, k,
                                     scatterLoops));
  }
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  maps.push_back(AffineMap::get(loops, 0, outExprs, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(scatterDims.size(), utils::IteratorType::reduction);
  Location loc = op->getLoc();
  bool failed = false;
  auto generic = linalg::GenericOp::create(
      b, loc, operand, inputs, scatter.getInputs()[0], maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = args.back();
        Value match = arith::ConstantIntOp::create(nb, l, 1, 1);
        for (auto [k, dim] : llvm::enumerate(toOperand)) {
          Value equal = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, toIndex(nb, l, args[1 + k]),
              linalg::IndexOp::create(nb, l, dim));
          match = arith::AndIOp::create(nb, l, match, equal);
        }
        // A batching dimension of the operand matches the update loop of
        // its partner among the indices' dimensions.
        for (auto [dim, indexDim] : llvm::zip(inputBatching, indicesBatching)) {
          Value equal = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq,
              linalg::IndexOp::create(nb, l, dim),
              linalg::IndexOp::create(
                  nb, l,
                  scatterLoops[indexDim -
                               (indexDim > indexVectorDim ? 1 : 0)]));
          match = arith::AndIOp::create(nb, l, match, equal);
        }
        FailureOr<SmallVector<Value>> combined = buildScalarRegion(
            nb, scatter.getUpdateComputation(), ValueRange{acc, args[0]});
        if (mlir::failed(combined)) {
          failed = true;
          linalg::YieldOp::create(nb, l, acc);
          return;
        }
        linalg::YieldOp::create(
            nb, l,
            arith::SelectOp::create(nb, l, match, (*combined)[0], acc)
                .getResult());
      });
  if (failed) {
    generic->erase();
    return failure();
  }
  // A scatter-add is then a sum over the updates, which may split.
  unmaskReductions(generic);
  return SmallVector<Value>{generic.getResult(0)};
}
} // namespace

Value stablehlo_import::toIndex(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isInteger(64))
    value = arith::ExtSIOp::create(b, loc, b.getI64Type(), value);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

void stablehlo_import::addIndexingConverters(ConverterTable &table) {
  table["stablehlo.gather"] = convertGather;
  table["stablehlo.scatter"] = convertScatter;
}
