//===- TensorBuilders.cpp - IR building blocks of the importers -----------===//

#include "sbp/Import/TensorBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::tensor_builders;

Value tensor_builders::createEmpty(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value tensor_builders::createScalar(OpBuilder &b, Location loc, Type type,
                                    double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(value));
  if (type.isInteger(1))
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(value != 0));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value tensor_builders::createFilled(OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> shape, Type elementType,
                                    double value) {
  Value scalar = createScalar(b, loc, elementType, value);
  Value empty = createEmpty(b, loc, shape, elementType);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

FailureOr<SmallVector<int64_t>>
tensor_builders::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, size] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (size == out || size == 1)
        continue;
      if (out != 1)
        return failure();
      out = size;
    }
  }
  return result;
}

Value tensor_builders::buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type resultElementType,
    ScalarBuilder body, std::optional<ArrayRef<int64_t>> shape) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value input : inputs)
    shapes.push_back(cast<RankedTensorType>(input.getType()).getShape());
  SmallVector<int64_t> outShape;
  if (shape) {
    outShape.assign(shape->begin(), shape->end());
  } else {
    FailureOr<SmallVector<int64_t>> broadcast = broadcastShapes(shapes);
    assert(succeeded(broadcast) && "callers check broadcastability");
    outShape = *broadcast;
  }
  unsigned rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (ArrayRef<int64_t> inShape : shapes) {
    SmallVector<AffineExpr> exprs;
    unsigned offset = rank - inShape.size();
    for (auto [i, size] : llvm::enumerate(inShape))
      exprs.push_back(size == 1 && outShape[offset + i] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(offset + i));
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = createEmpty(b, loc, outShape, resultElementType);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value tensor_builders::buildReduction(OpBuilder &b, Location loc, Value input,
                                      ArrayRef<int64_t> axes, bool keepDims,
                                      double initValue, ScalarBuilder combine) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  SmallVector<int64_t> reducedShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    reducedShape.push_back(type.getDimSize(d));
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  Value init =
      createFilled(b, loc, reducedShape, type.getElementType(), initValue);
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), input, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                combine(nested, nestedLoc, args));
      });
  Value result = generic.getResult(0);
  if (!keepDims)
    return result;
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t axis : axes)
    keptShape[axis] = 1;
  return buildReshape(b, loc, result, keptShape);
}

namespace {
/// Groups `from` into `to` when each dimension of `to` is a product of
/// consecutive dimensions of `from` (a collapse; an expand is the same with
/// the roles swapped). Size-1 dimensions join the group before them.
std::optional<SmallVector<ReassociationIndices>>
findReassociation(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<ReassociationIndices> groups;
  if (to.empty()) {
    if (llvm::all_of(from, [](int64_t s) { return s == 1; }))
      return groups;
    return std::nullopt;
  }
  size_t i = 0;
  for (int64_t size : to) {
    ReassociationIndices group;
    int64_t product = 1;
    while (i < from.size()) {
      product *= from[i];
      group.push_back(i++);
      if (product >= size)
        break;
    }
    if (product != size)
      return std::nullopt;
    groups.push_back(group);
  }
  // Trailing size-1 dimensions join the last group.
  while (i < from.size() && from[i] == 1)
    groups.back().push_back(i++);
  if (i != from.size())
    return std::nullopt;
  return groups;
}
} // namespace

Value tensor_builders::buildReshape(OpBuilder &b, Location loc, Value input,
                                    ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  // No data to keep.
  if (type.getNumElements() == 0)
    return createEmpty(b, loc, shape, type.getElementType());
  if (shape.size() <= static_cast<size_t>(type.getRank()))
    if (auto groups = findReassociation(type.getShape(), shape))
      return tensor::CollapseShapeOp::create(b, loc, resultType, input,
                                             *groups);
  if (shape.size() >= static_cast<size_t>(type.getRank()))
    if (auto groups = findReassociation(shape, type.getShape()))
      return tensor::ExpandShapeOp::create(b, loc, resultType, input, *groups);
  // Through one dimension (or a scalar, for one element).
  int64_t count = type.getNumElements();
  SmallVector<int64_t> flat =
      count == 1 ? SmallVector<int64_t>{} : SmallVector<int64_t>{count};
  Value collapsed = buildReshape(b, loc, input, flat);
  return buildReshape(b, loc, collapsed, shape);
}

Value tensor_builders::createAdd(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType())
             ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
}

Value tensor_builders::createMul(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType())
             ? Value(arith::MulFOp::create(b, loc, x, y))
             : Value(arith::MulIOp::create(b, loc, x, y));
}

FailureOr<Value>
tensor_builders::buildContraction(OpBuilder &b, Location loc, ValueRange inputs,
                                  ArrayRef<SmallVector<int64_t>> labels,
                                  ArrayRef<int64_t> outLabels) {
  int64_t numLoops = 0;
  for (const SmallVector<int64_t> &operand : labels)
    for (int64_t label : operand)
      numLoops = std::max(numLoops, label + 1);
  SmallVector<int64_t> sizes(numLoops, 1);
  for (auto [input, operand] : llvm::zip(inputs, labels)) {
    auto type = cast<RankedTensorType>(input.getType());
    for (auto [d, label] : llvm::enumerate(operand)) {
      int64_t size = type.getDimSize(d);
      if (size != 1 && sizes[label] != 1 && sizes[label] != size)
        return failure();
      if (size != 1)
        sizes[label] = size;
    }
  }
  SmallVector<AffineMap> maps;
  for (auto [input, operand] : llvm::zip(inputs, labels)) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<AffineExpr> exprs;
    for (auto [d, label] : llvm::enumerate(operand))
      exprs.push_back(type.getDimSize(d) == 1 && sizes[label] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(label));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, b.getContext()));
  }
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape;
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (int64_t label : outLabels) {
    outExprs.push_back(b.getAffineDimExpr(label));
    outShape.push_back(sizes[label]);
    iterators[label] = utils::IteratorType::parallel;
  }
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, b.getContext()));
  Type element = cast<RankedTensorType>(inputs[0].getType()).getElementType();
  Value init = createFilled(b, loc, outShape, element, 0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value product = args[0];
               for (Value arg : args.drop_front().drop_back())
                 product = createMul(nb, l, product, arg);
               linalg::YieldOp::create(nb, l,
                                       createAdd(nb, l, args.back(), product));
             })
      .getResult(0);
}

Value tensor_builders::castScalar(OpBuilder &b, Location loc, Value value,
                                  Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (to.isInteger(1)) {
    Value zero = createScalar(b, loc, from, 0);
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (from.isInteger(1)) {
    if (isa<FloatType>(to))
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::ExtUIOp::create(b, loc, to, value);
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, value))
               : Value(arith::TruncFOp::create(b, loc, to, value));
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, value);
  if (toFloat)
    return arith::SIToFPOp::create(b, loc, to, value);
  return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
             ? Value(arith::ExtSIOp::create(b, loc, to, value))
             : Value(arith::TruncIOp::create(b, loc, to, value));
}
