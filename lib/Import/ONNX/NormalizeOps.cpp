//===- NormalizeOps.cpp - ONNX LRN and Hardmax ----------------------------===//
//
// LRN (a sum of squares over neighbouring channels) and Hardmax, as
// structured ops: a window over channels is a reduction loop read at
// `c + k` of the zero-padded squares, as a convolution's, so its SBP rules
// and gradient come from its indexing maps.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// `x / (bias + alpha / size * sum of x^2 over the channels [c - (size-1)/2,
/// c + size/2])^beta`, the channels beyond the edges counting as zero.
LogicalResult convertLrn(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  int64_t size = n.intAttr("size", 0);
  if (!type || !isFloat(type.getElementType()) || type.getRank() < 3 ||
      !type.hasStaticShape())
    return n.error("needs a floating-point input [N, C, D...] of static shape");
  if (size < 1)
    return n.error("needs a positive size");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = type.getElementType();
  int64_t rank = type.getRank(), before = (size - 1) / 2;
  Value squares =
      buildElementwise(b, loc, {n.input(0)}, element,
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::MulFOp::create(nb, l, a[0], a[0]);
                       });
  SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0)),
      high(rank, b.getIndexAttr(0));
  low[1] = b.getIndexAttr(before);
  high[1] = b.getIndexAttr(size - 1 - before);
  SmallVector<int64_t> paddedShape(type.getShape());
  paddedShape[1] += size - 1;
  Value padded = tensor::PadOp::create(
      b, loc, RankedTensorType::get(paddedShape, element), squares, low, high,
      createScalar(b, loc, element, 0));
  // Loops: the output's, then k over the window.
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> read, written;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr loop = getAffineDimExpr(d, ctx);
    read.push_back(d == 1 ? loop + getAffineDimExpr(rank, ctx) : loop);
    written.push_back(loop);
  }
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value window = createEmpty(b, loc, {size}, element);
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{type}, ValueRange{padded, window},
          ValueRange{createFilled(b, loc, type.getShape(), element, 0)},
          SmallVector<AffineMap>{
              AffineMap::get(rank + 1, 0, read, ctx),
              AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, ctx)),
              AffineMap::get(rank + 1, 0, written, ctx)},
          iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, args[2], args[0]).getResult());
          })
          .getResult(0);
  double alpha = n.floatAttr("alpha", 1e-4f), beta = n.floatAttr("beta", 0.75f),
         bias = n.floatAttr("bias", 1.0f);
  n.setOutput(0, buildElementwise(
                     b, loc, {n.input(0), sum}, element,
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value scaled = arith::MulFOp::create(
                           nb, l, a[1],
                           createScalar(nb, l, element, alpha / size));
                       Value base = arith::AddFOp::create(
                           nb, l, scaled, createScalar(nb, l, element, bias));
                       Value power = math::PowFOp::create(
                           nb, l, base, createScalar(nb, l, element, beta));
                       return arith::DivFOp::create(nb, l, a[0], power);
                     }));
  return success();
}

/// 1 at the first maximum along `axis`, 0 elsewhere; before opset 13 over
/// the input taken as [prod(shape[:axis]), prod(shape[axis:])].
LogicalResult convertHardmax(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || !isFloat(type.getElementType()) || !type.hasStaticShape())
    return n.error("needs a floating-point input of static shape");
  bool flattened = n.getOpset() < 13;
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", flattened ? 1 : -1), type.getRank());
  if (!axis)
    return n.error("axis out of range");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = type.getElementType(), index = b.getI64Type();
  Value x = n.input(0);
  if (flattened) {
    int64_t outer = 1;
    for (int64_t d = 0; d < *axis; ++d)
      outer *= type.getDimSize(d);
    x = buildReshape(b, loc, x, {outer, type.getNumElements() / outer});
    axis = 1;
  }
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t rank = shape.size();
  Value max =
      buildReduction(b, loc, x, {*axis}, /*keepDims=*/true, -INFINITY,
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return arith::MaximumFOp::create(nb, l, a[0], a[1]);
                     });
  // The first position of the maximum: the least index where x equals it.
  SmallVector<int64_t> keptShape(shape);
  keptShape[*axis] = 1;
  AffineMap all = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineExpr> keptExprs(all.getResults());
  keptExprs[*axis] = b.getAffineConstantExpr(0);
  AffineMap kept = AffineMap::get(rank, 0, keptExprs, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[*axis] = utils::IteratorType::reduction;
  Value first =
      linalg::GenericOp::create(
          b, loc, TypeRange{RankedTensorType::get(keptShape, index)},
          ValueRange{x, max},
          ValueRange{createFilled(b, loc, keptShape, index, shape[*axis])},
          SmallVector<AffineMap>{all, kept, kept}, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value position = arith::IndexCastOp::create(
                nb, l, index, linalg::IndexOp::create(nb, l, *axis));
            Value at = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                             args[0], args[1]);
            Value candidate =
                arith::SelectOp::create(nb, l, at, position, args[2]);
            linalg::YieldOp::create(
                nb, l,
                arith::MinSIOp::create(nb, l, candidate, args[2]).getResult());
          })
          .getResult(0);
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{x.getType()}, ValueRange{first},
          ValueRange{createEmpty(b, loc, shape, element)},
          SmallVector<AffineMap>{kept, all},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value position = arith::IndexCastOp::create(
                nb, l, index, linalg::IndexOp::create(nb, l, *axis));
            Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                              position, args[0]);
            linalg::YieldOp::create(
                nb, l,
                arith::SelectOp::create(nb, l, hit,
                                        createScalar(nb, l, element, 1),
                                        createScalar(nb, l, element, 0))
                    .getResult());
          })
          .getResult(0);
  if (flattened)
    result = buildReshape(b, loc, result, type.getShape());
  n.setOutput(0, result);
  return success();
}

} // namespace

void onnx_import::addNormalizeConverters(ConverterTable &table) {
  table["LRN"] = convertLrn;
  table["Hardmax"] = convertHardmax;
}
