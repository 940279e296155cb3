//===- SelectionOps.cpp - StableHLO sort, top_k, select_and_scatter -------===//
//
// Ops that choose elements by a comparator, as structured ops. A sort
// ranks every element of its rows and writes each at its rank
// (SortBuilders.h); top_k keeps the first k.
//
// A select_and_scatter (JAX's gradient of max pooling) is a reduction over
// each window that keeps the selected element's position, then a sum over
// the windows of the source into the positions they selected.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "sbp/Dialect/Sbp/Utils/MaskedReduction.h"
#include "sbp/Import/SortBuilders.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
using namespace mlir::sbp::tensor_builders;
using namespace mlir::sbp::sort_builders;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

Result convertSort(Operation *op, OpBuilder &b) {
  auto sort = cast<shlo::SortOp>(op);
  ValueRange inputs = sort.getInputs();
  if (inputs.empty()) {
    op->emitError("a sort needs at least one input");
    return failure();
  }
  RankedTensorType type = getStaticType(op, inputs[0]);
  if (!type)
    return failure();
  for (Value input : inputs.drop_front())
    if (!getStaticType(op, input))
      return failure();
  int64_t rank = type.getRank(), dim = sort.getDimension();
  if (dim < 0)
    dim += rank;
  Block &comparator = sort.getComparator().front();
  if (dim < 0 || dim >= rank ||
      comparator.getNumArguments() != 2 * inputs.size()) {
    op->emitError() << "a sort of rank " << rank << " needs a dimension in ["
                    << -rank << ", " << rank << ") and a comparator of "
                    << 2 * inputs.size() << " arguments";
    return failure();
  }
  // The comparator takes each input's two elements side by side.
  auto before = [&](OpBuilder &nb, Location l, ValueRange lhs,
                    ValueRange rhs) -> FailureOr<Value> {
    SmallVector<Value> arguments;
    for (auto [x, y] : llvm::zip(lhs, rhs))
      arguments.append({x, y});
    FailureOr<SmallVector<Value>> result =
        buildScalarRegion(nb, sort.getComparator(), arguments);
    if (failed(result))
      return failure();
    return (*result)[0];
  };
  Location loc = op->getLoc();
  FailureOr<Value> ranks = buildRanks(b, loc, inputs, dim, before);
  if (failed(ranks))
    return failure();
  SmallVector<Value> results;
  for (Value input : inputs)
    results.push_back(buildPermuted(b, loc, *ranks, input,
                                    getElementTypeOrSelf(input), dim,
                                    type.getDimSize(dim)));
  return results;
}

Result convertTopK(Operation *op, OpBuilder &b) {
  auto topK = cast<chlo::TopKOp>(op);
  RankedTensorType type = getStaticType(op, topK.getOperand());
  RankedTensorType indicesType = getStaticType(op, topK.getIndices());
  if (!type || !indicesType)
    return failure();
  int64_t rank = type.getRank(), k = topK.getK();
  Type elementType = type.getElementType();
  if (rank == 0 || k < 0 || k > type.getDimSize(rank - 1) ||
      !isa<FloatType, IntegerType>(elementType) ||
      !isa<IntegerType>(indicesType.getElementType())) {
    op->emitError() << "top_k needs k in [0, " << type.getDimSize(rank - 1)
                    << "] of a float or integer row and integer indices";
    return failure();
  }
  return sort_builders::buildTopK(b, op->getLoc(), topK.getOperand(), rank - 1,
                                  k, /*largest=*/true,
                                  indicesType.getElementType());
}

/// The position of the window loops `first`.. in a window of `sizes`,
/// row-major.
Value buildWindowPosition(OpBuilder &b, Location l, ArrayRef<int64_t> sizes,
                          unsigned first) {
  Value position = arith::ConstantIndexOp::create(b, l, 0);
  for (auto [d, size] : llvm::enumerate(sizes))
    position = arith::AddIOp::create(
        b, l,
        arith::MulIOp::create(b, l, position,
                              arith::ConstantIndexOp::create(b, l, size)),
        linalg::IndexOp::create(b, l, first + d));
  return arith::IndexCastOp::create(b, l, b.getI64Type(), position);
}

Result convertSelectAndScatter(Operation *op, OpBuilder &b) {
  auto selectOp = cast<shlo::SelectAndScatterOp>(op);
  RankedTensorType in = getStaticType(op, selectOp.getOperand());
  RankedTensorType source = getStaticType(op, selectOp.getSource());
  if (!in || !source)
    return failure();
  int64_t rank = in.getRank();
  SmallVector<int64_t> sizes = getOrOnes(selectOp.getWindowDimensions(), rank),
                       strides = getOrOnes(selectOp.getWindowStrides(), rank);
  SmallVector<int64_t> low, high;
  bool valid = sizes.size() == static_cast<size_t>(rank) &&
               strides.size() == static_cast<size_t>(rank) &&
               source.getRank() == rank &&
               getPadding(selectOp.getPadding(), rank, low, high);
  // Each source element is one window of the padded operand.
  for (int64_t d = 0; valid && d < rank; ++d) {
    int64_t padded = in.getDimSize(d) + low[d] + high[d];
    valid &= sizes[d] >= 1 && strides[d] >= 1 && low[d] >= 0 && high[d] >= 0 &&
             padded >= sizes[d] &&
             source.getDimSize(d) == (padded - sizes[d]) / strides[d] + 1;
  }
  if (!valid) {
    op->emitError("select_and_scatter needs one window size, stride and "
                  "non-negative [low, high] padding per dimension, and a "
                  "source element per window");
    return failure();
  }
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Type element = in.getElementType();
  Value padded = buildPad(b, loc, selectOp.getOperand(),
                          createScalar(b, loc, element, 0), low, high);
  // Loops: the window's position in the source, then within the window.
  SmallVector<AffineExpr> windowed, outer, inner;
  for (int64_t d = 0; d < rank; ++d) {
    windowed.push_back(getAffineDimExpr(d, ctx) * strides[d] +
                       getAffineDimExpr(rank + d, ctx));
    outer.push_back(getAffineDimExpr(d, ctx));
    inner.push_back(getAffineDimExpr(rank + d, ctx));
  }
  AffineMap windowedMap = AffineMap::get(2 * rank, 0, windowed, ctx),
            outerMap = AffineMap::get(2 * rank, 0, outer, ctx),
            innerMap = AffineMap::get(2 * rank, 0, inner, ctx);
  // A shape-only operand gives the window loops their sizes.
  Value window = createEmpty(b, loc, sizes, b.getI1Type());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(rank, utils::IteratorType::reduction);
  // Per window, the element kept so far and its position (-1: none yet);
  // the padding is never selected.
  Value kept = createFilled(b, loc, source.getShape(), element, 0);
  Value positions = createFilled(b, loc, source.getShape(), b.getI64Type(), -1);
  bool failed = false;
  auto selection = linalg::GenericOp::create(
      b, loc, TypeRange{kept.getType(), positions.getType()},
      ValueRange{padded, window}, ValueRange{kept, positions},
      {windowedMap, innerMap, outerMap, outerMap}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value candidate = args[0], current = args[2], position = args[3];
        Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value at = arith::AddIOp::create(
              nb, l,
              arith::MulIOp::create(
                  nb, l, linalg::IndexOp::create(nb, l, d),
                  arith::ConstantIndexOp::create(nb, l, strides[d])),
              linalg::IndexOp::create(nb, l, rank + d));
          Value first = arith::ConstantIndexOp::create(nb, l, low[d]);
          Value end =
              arith::ConstantIndexOp::create(nb, l, low[d] + in.getDimSize(d));
          inside = arith::AndIOp::create(
              nb, l, inside,
              arith::AndIOp::create(
                  nb, l,
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, at,
                                        first),
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, at,
                                        end)));
        }
        FailureOr<SmallVector<Value>> keep = buildScalarRegion(
            nb, selectOp.getSelect(), ValueRange{current, candidate});
        if (mlir::failed(keep)) {
          failed = true;
          linalg::YieldOp::create(nb, l, ValueRange{current, position});
          return;
        }
        Value none = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::eq, position,
            arith::ConstantIntOp::create(nb, l, nb.getI64Type(), -1));
        Value moves = arith::XOrIOp::create(
            nb, l, (*keep)[0], arith::ConstantIntOp::create(nb, l, 1, 1));
        Value take = arith::AndIOp::create(
            nb, l, inside, arith::OrIOp::create(nb, l, none, moves));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, take, candidate, current),
                       arith::SelectOp::create(
                           nb, l, take, buildWindowPosition(nb, l, sizes, rank),
                           position)});
      });
  if (failed) {
    selection->erase();
    return failure();
  }
  // Each source element combined into the element its window selected.
  auto paddedType = cast<RankedTensorType>(padded.getType());
  Value init = linalg::FillOp::create(
                   b, loc, extractScalar(b, loc, selectOp.getInitValue()),
                   createEmpty(b, loc, paddedType.getShape(), element))
                   .getResult(0);
  SmallVector<utils::IteratorType> reductions(2 * rank,
                                              utils::IteratorType::reduction);
  auto scatter = linalg::GenericOp::create(
      b, loc, paddedType,
      ValueRange{selection.getResult(1), selectOp.getSource(), window}, init,
      {outerMap, outerMap, innerMap, windowedMap}, reductions,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value out = args.back();
        FailureOr<SmallVector<Value>> combined = buildScalarRegion(
            nb, selectOp.getScatter(), ValueRange{out, args[1]});
        if (mlir::failed(combined)) {
          failed = true;
          linalg::YieldOp::create(nb, l, out);
          return;
        }
        Value chosen =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, args[0],
                                  buildWindowPosition(nb, l, sizes, rank));
        linalg::YieldOp::create(
            nb, l,
            arith::SelectOp::create(nb, l, chosen, (*combined)[0], out)
                .getResult());
      });
  if (failed) {
    scatter->erase();
    return failure();
  }
  unmaskReductions(scatter);
  Value result = scatter.getResult(0);
  if (paddedType != in)
    result = tensor::ExtractSliceOp::create(
        b, loc, in, result, ValueRange(), ValueRange(), ValueRange(), low,
        in.getShape(), SmallVector<int64_t>(rank, 1));
  return SmallVector<Value>{result};
}
} // namespace

void stablehlo_import::addSelectionConverters(ConverterTable &table) {
  table["stablehlo.select_and_scatter"] = convertSelectAndScatter;
  table["stablehlo.sort"] = convertSort;
  table["chlo.top_k"] = convertTopK;
}
