//===- ShapeOps.cpp - StableHLO constants, broadcasts, reshapes, slices ---===//
//
// Data movement becomes the tensor and linalg ops whose SBP rules sbp knows:
// reshapes are collapse/expand, transposes linalg.transpose, slices and pads
// extract_slice/insert_slice, concatenation tensor.concat; broadcasts and
// reversals are generics whose indexing maps give their rules.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

Result single(Value value) { return SmallVector<Value>{value}; }

/// A generic reading `input` through `inputMap` into a tensor of `type`.
Value buildCopy(OpBuilder &b, Location loc, Value input, AffineMap inputMap,
                RankedTensorType type) {
  Value init = createEmpty(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = {inputMap,
                                 b.getMultiDimIdentityMap(type.getRank())};
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, input, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

Result convertConstant(Operation *op, OpBuilder &b) {
  auto constant = cast<shlo::ConstantOp>(op);
  auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!value) {
    op->emitError("only dense constants are supported; weights left out of "
                  "the file (dense_resource) must be function arguments");
    return failure();
  }
  return single(arith::ConstantOp::create(b, op->getLoc(), value));
}

Result convertIota(Operation *op, OpBuilder &b) {
  auto iota = cast<shlo::IotaOp>(op);
  RankedTensorType type = getStaticType(op, iota.getOutput());
  if (!type)
    return failure();
  int64_t dim = iota.getIotaDimension();
  if (dim < 0 || dim >= type.getRank()) {
    op->emitError() << "iota dimension " << dim << " out of range";
    return failure();
  }
  Location loc = op->getLoc();
  Value init = createEmpty(b, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return single(
      linalg::GenericOp::create(
          b, loc, type, ValueRange(), init,
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(type.getRank())},
          iterators,
          [&](OpBuilder &nb, Location l, ValueRange) {
            Value index = linalg::IndexOp::create(nb, l, dim);
            Type element = type.getElementType();
            Value value =
                arith::IndexCastOp::create(nb, l, nb.getI64Type(), index);
            linalg::YieldOp::create(nb, l, castScalar(nb, l, value, element));
          })
          .getResult(0));
}

Result convertBroadcastInDim(Operation *op, OpBuilder &b) {
  auto broadcast = cast<shlo::BroadcastInDimOp>(op);
  RankedTensorType in = getStaticType(op, broadcast.getOperand());
  RankedTensorType out = getStaticType(op, broadcast.getResult());
  if (!in || !out)
    return failure();
  ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
  if (static_cast<int64_t>(dims.size()) != in.getRank()) {
    op->emitError() << "expected " << in.getRank() << " broadcast dimensions";
    return failure();
  }
  if (in == out && llvm::equal(dims, llvm::seq<int64_t>(0, in.getRank())))
    return single(broadcast.getOperand());
  SmallVector<AffineExpr> exprs;
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= out.getRank() ||
        (in.getDimSize(i) != 1 && in.getDimSize(i) != out.getDimSize(dim))) {
      op->emitError() << "operand dimension " << i << " of size "
                      << in.getDimSize(i) << " cannot broadcast to result "
                      << "dimension " << dim << " of " << out;
      return failure();
    }
    exprs.push_back(in.getDimSize(i) == 1 && out.getDimSize(dim) != 1
                        ? b.getAffineConstantExpr(0)
                        : b.getAffineDimExpr(dim));
  }
  AffineMap map = AffineMap::get(out.getRank(), 0, exprs, b.getContext());
  return single(buildCopy(b, op->getLoc(), broadcast.getOperand(), map, out));
}

Result convertReshape(Operation *op, OpBuilder &b) {
  RankedTensorType in = getStaticType(op, op->getOperand(0));
  RankedTensorType out = getStaticType(op, op->getResult(0));
  if (!in || !out)
    return failure();
  if (in.getNumElements() != out.getNumElements()) {
    op->emitError() << "cannot reshape " << in << " into " << out;
    return failure();
  }
  return single(
      buildReshape(b, op->getLoc(), op->getOperand(0), out.getShape()));
}

Result convertTranspose(Operation *op, OpBuilder &b) {
  auto transpose = cast<shlo::TransposeOp>(op);
  RankedTensorType out = getStaticType(op, transpose.getResult());
  if (!out || !getStaticType(op, transpose.getOperand()))
    return failure();
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (!isPermutationVector(perm) ||
      static_cast<int64_t>(perm.size()) != out.getRank()) {
    op->emitError("dims must be a permutation of the operand's dimensions");
    return failure();
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, out.getRank())))
    return single(transpose.getOperand());
  Value init =
      createEmpty(b, op->getLoc(), out.getShape(), out.getElementType());
  return single(linalg::TransposeOp::create(b, op->getLoc(),
                                            transpose.getOperand(), init, perm)
                    .getResult()[0]);
}

Result convertReverse(Operation *op, OpBuilder &b) {
  auto reverse = cast<shlo::ReverseOp>(op);
  if (!getStaticType(op, reverse.getOperand()))
    return failure();
  return single(buildReverse(b, op->getLoc(), reverse.getOperand(),
                             reverse.getDimensions()));
}

Result convertConcatenate(Operation *op, OpBuilder &b) {
  auto concat = cast<shlo::ConcatenateOp>(op);
  RankedTensorType out = getStaticType(op, concat.getResult());
  if (!out)
    return failure();
  int64_t dim = concat.getDimension();
  if (dim < 0 || dim >= out.getRank()) {
    op->emitError() << "dimension " << dim << " out of range";
    return failure();
  }
  if (concat.getInputs().size() == 1)
    return single(concat.getInputs()[0]);
  return single(
      tensor::ConcatOp::create(b, op->getLoc(), dim, concat.getInputs()));
}

/// extract_slice of `input` (static) with `sizes` at `offsets`, `strides`.
Value buildSlice(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                 ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == sizes)
    return input;
  auto resultType = RankedTensorType::get(sizes, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, resultType, input, ValueRange(),
                                        ValueRange(), ValueRange(), offsets,
                                        sizes, strides);
}

Result convertSlice(Operation *op, OpBuilder &b) {
  auto slice = cast<shlo::SliceOp>(op);
  RankedTensorType in = getStaticType(op, slice.getOperand());
  RankedTensorType out = getStaticType(op, slice.getResult());
  if (!in || !out)
    return failure();
  ArrayRef<int64_t> start = slice.getStartIndices(),
                    limit = slice.getLimitIndices(),
                    strides = slice.getStrides();
  SmallVector<int64_t> sizes;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (d >= static_cast<int64_t>(start.size()) ||
        d >= static_cast<int64_t>(limit.size()) ||
        d >= static_cast<int64_t>(strides.size()) || start[d] < 0 ||
        limit[d] > in.getDimSize(d) || start[d] > limit[d] || strides[d] < 1) {
      op->emitError() << "slice bounds out of range for dimension " << d
                      << " of " << in;
      return failure();
    }
    sizes.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  if (ArrayRef<int64_t>(sizes) != out.getShape()) {
    op->emitError() << "the slice has shape " << out
                    << " but its bounds give another";
    return failure();
  }
  return single(
      buildSlice(b, op->getLoc(), slice.getOperand(), start, sizes, strides));
}

/// The offsets at which a dynamic slice or update of `sizes` starts in a
/// tensor of type `in`: constants where the indices follow from constants,
/// computed at run time otherwise; either way clamped so that the slice
/// lies in the tensor, as StableHLO specifies.
SmallVector<OpFoldResult> getClampedStarts(OpBuilder &b, Location loc,
                                           ValueRange indices,
                                           RankedTensorType in,
                                           ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> offsets;
  for (auto [d, index] : llvm::enumerate(indices)) {
    int64_t last = in.getDimSize(d) - sizes[d];
    if (std::optional<int64_t> start = evaluateIndex(index)) {
      offsets.push_back(b.getIndexAttr(std::clamp<int64_t>(*start, 0, last)));
      continue;
    }
    Value start = toIndex(b, loc, extractScalar(b, loc, index));
    start = arith::MaxSIOp::create(b, loc, start,
                                   arith::ConstantIndexOp::create(b, loc, 0));
    offsets.push_back(
        arith::MinSIOp::create(b, loc, start,
                               arith::ConstantIndexOp::create(b, loc, last))
            .getResult());
  }
  return offsets;
}

/// Whether `sizes` fit `in` with one start index per dimension; reports on
/// `op` otherwise.
LogicalResult checkStarts(Operation *op, RankedTensorType in,
                          ArrayRef<int64_t> sizes, ValueRange indices) {
  if (static_cast<int64_t>(sizes.size()) == in.getRank() &&
      static_cast<int64_t>(indices.size()) == in.getRank() &&
      llvm::all_of(llvm::zip(sizes, in.getShape()), [](auto pair) {
        return std::get<0>(pair) >= 0 && std::get<0>(pair) <= std::get<1>(pair);
      }))
    return success();
  return op->emitError() << "expected " << in.getRank()
                         << " start indices and sizes within the operand's";
}

Result convertDynamicSlice(Operation *op, OpBuilder &b) {
  auto slice = cast<shlo::DynamicSliceOp>(op);
  RankedTensorType in = getStaticType(op, slice.getOperand());
  ArrayRef<int64_t> sizes = slice.getSliceSizes();
  if (!in || failed(checkStarts(op, in, sizes, slice.getStartIndices())))
    return failure();
  if (in.getShape() == sizes)
    return single(slice.getOperand());
  SmallVector<OpFoldResult> offsets =
      getClampedStarts(b, op->getLoc(), slice.getStartIndices(), in, sizes);
  return single(tensor::ExtractSliceOp::create(
      b, op->getLoc(), RankedTensorType::get(sizes, in.getElementType()),
      slice.getOperand(), offsets,
      getAsIndexOpFoldResult(b.getContext(), sizes),
      SmallVector<OpFoldResult>(in.getRank(), b.getIndexAttr(1))));
}

Result convertDynamicUpdateSlice(Operation *op, OpBuilder &b) {
  auto update = cast<shlo::DynamicUpdateSliceOp>(op);
  RankedTensorType in = getStaticType(op, update.getOperand());
  RankedTensorType part = getStaticType(op, update.getUpdate());
  if (!in || !part ||
      failed(checkStarts(op, in, part.getShape(), update.getStartIndices())))
    return failure();
  if (in.getShape() == part.getShape())
    return single(update.getUpdate());
  SmallVector<OpFoldResult> offsets = getClampedStarts(
      b, op->getLoc(), update.getStartIndices(), in, part.getShape());
  return single(tensor::InsertSliceOp::create(
      b, op->getLoc(), update.getUpdate(), update.getOperand(), offsets,
      getAsIndexOpFoldResult(b.getContext(), part.getShape()),
      SmallVector<OpFoldResult>(in.getRank(), b.getIndexAttr(1))));
}

Result convertPad(Operation *op, OpBuilder &b) {
  auto pad = cast<shlo::PadOp>(op);
  RankedTensorType in = getStaticType(op, pad.getOperand());
  RankedTensorType out = getStaticType(op, pad.getResult());
  if (!in || !out)
    return failure();
  Location loc = op->getLoc();
  ArrayRef<int64_t> low = pad.getEdgePaddingLow(),
                    high = pad.getEdgePaddingHigh(),
                    interior = pad.getInteriorPadding();
  int64_t rank = in.getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank ||
      static_cast<int64_t>(interior.size()) != rank) {
    op->emitError() << "expected " << rank << " padding sizes per edge";
    return failure();
  }
  // Negative edges crop: pad by the positive part, then slice.
  SmallVector<int64_t> padLow, padHigh, cropOffsets;
  bool crops = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) {
      op->emitError("interior padding must not be negative");
      return failure();
    }
    padLow.push_back(std::max<int64_t>(low[d], 0));
    padHigh.push_back(std::max<int64_t>(high[d], 0));
    cropOffsets.push_back(std::max<int64_t>(-low[d], 0));
    crops |= low[d] < 0 || high[d] < 0;
  }
  Value result = buildPad(b, loc, pad.getOperand(),
                          extractScalar(b, loc, pad.getPaddingValue()), padLow,
                          padHigh, interior);
  if (crops) {
    SmallVector<int64_t> ones(rank, 1);
    result = buildSlice(b, loc, result, cropOffsets, out.getShape(), ones);
  }
  if (cast<RankedTensorType>(result.getType()) != out) {
    op->emitError() << "the padding gives a shape other than " << out;
    return failure();
  }
  return single(result);
}
} // namespace

Value stablehlo_import::buildPad(OpBuilder &b, Location loc, Value input,
                                 Value value, ArrayRef<int64_t> low,
                                 ArrayRef<int64_t> high,
                                 ArrayRef<int64_t> interior) {
  auto isZero = [](int64_t p) { return p == 0; };
  if (llvm::all_of(low, isZero) && llvm::all_of(high, isZero) &&
      llvm::all_of(interior, isZero))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t gap = interior.empty() ? 0 : interior[d];
    int64_t size = type.getDimSize(d);
    int64_t spread = size == 0 ? 0 : size + (size - 1) * gap;
    shape.push_back(low[d] + spread + high[d]);
    strides.push_back(gap + 1);
  }
  Value filled =
      linalg::FillOp::create(b, loc, value,
                             createEmpty(b, loc, shape, type.getElementType()))
          .getResult(0);
  return tensor::InsertSliceOp::create(b, loc, input, filled, ValueRange(),
                                       ValueRange(), ValueRange(), low,
                                       type.getShape(), strides);
}

Value stablehlo_import::buildReverse(OpBuilder &b, Location loc, Value input,
                                     ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < type.getRank(); ++d)
    exprs.push_back(llvm::is_contained(dims, d)
                        ? type.getDimSize(d) - 1 - b.getAffineDimExpr(d)
                        : b.getAffineDimExpr(d));
  AffineMap map = AffineMap::get(type.getRank(), 0, exprs, b.getContext());
  return buildCopy(b, loc, input, map, type);
}

void stablehlo_import::addShapeConverters(ConverterTable &table) {
  table["stablehlo.constant"] = convertConstant;
  table["stablehlo.iota"] = convertIota;
  table["stablehlo.broadcast_in_dim"] = convertBroadcastInDim;
  table["stablehlo.reshape"] = convertReshape;
  table["stablehlo.transpose"] = convertTranspose;
  table["stablehlo.reverse"] = convertReverse;
  table["stablehlo.concatenate"] = convertConcatenate;
  table["stablehlo.slice"] = convertSlice;
  table["stablehlo.dynamic_slice"] = convertDynamicSlice;
  table["stablehlo.dynamic_update_slice"] = convertDynamicUpdateSlice;
  table["stablehlo.pad"] = convertPad;
}
