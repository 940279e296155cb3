//===- ElementwiseOps.cpp - ONNX element-wise, normalization, reductions --===//
//
// Element-wise ops become one broadcasting `linalg.generic` each, so that
// their SBP rules follow from the indexing maps; softmax and layer
// normalization are built from reductions and element-wise steps rather
// than fused, for the same reason.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Import/SortBuilders.h"
#include <cfloat>

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

using BinaryFn = std::function<Value(OpBuilder &, Location, Value, Value)>;
using UnaryFn =
    std::function<Value(NodeImporter &, OpBuilder &, Location, Value)>;

/// Checks that inputs [0, count) exist, are tensors and broadcast together.
LogicalResult checkBroadcastInputs(NodeImporter &n, unsigned count) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (unsigned i = 0; i < count; ++i) {
    RankedTensorType type = n.inputType(i);
    if (!type)
      return n.error("input " + Twine(i) + " is missing or not a tensor");
    shapes.push_back(type.getShape());
  }
  if (failed(broadcastShapes(shapes)))
    return n.error("the input shapes do not broadcast together");
  return success();
}

using IntFold =
    std::function<std::optional<APInt>(const APInt &, const APInt &)>;

/// Small integer constants broadcast and combined with `fold` at import
/// time, as the shape computations of exported models need (a rank minus
/// an axis feeding ConstantOfShape); null where an input is not such a
/// constant or `fold` declines (a division by zero).
DenseElementsAttr foldIntBinary(NodeImporter &n, const IntFold &fold) {
  if (!fold)
    return nullptr;
  DenseElementsAttr values[2] = {foldableInput(n, 0), foldableInput(n, 1)};
  if (!values[0] || !values[1])
    return nullptr;
  RankedTensorType types[2] = {n.inputType(0), n.inputType(1)};
  Type element = types[0].getElementType();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({types[0].getShape(), types[1].getShape()});
  if (failed(shape))
    return nullptr;
  auto resultType = RankedTensorType::get(*shape, element);
  SmallVector<APInt> operands[2] = {
      SmallVector<APInt>(values[0].getValues<APInt>()),
      SmallVector<APInt>(values[1].getValues<APInt>())};
  SmallVector<APInt> results;
  int64_t rank = shape->size();
  for (int64_t flat = 0; flat < resultType.getNumElements(); ++flat) {
    // Each input's element at this position, its missing leading and size-1
    // dimensions broadcast.
    int64_t offsets[2] = {0, 0}, strides[2] = {1, 1};
    for (int64_t d = rank - 1, rest = flat; d >= 0; --d) {
      int64_t index = rest % (*shape)[d];
      rest /= (*shape)[d];
      for (int k = 0; k < 2; ++k) {
        int64_t dim = d - (rank - types[k].getRank());
        if (dim < 0)
          continue;
        int64_t size = types[k].getDimSize(dim);
        offsets[k] += (size == 1 ? 0 : index) * strides[k];
        strides[k] *= size;
      }
    }
    std::optional<APInt> value =
        fold(operands[0][offsets[0]], operands[1][offsets[1]]);
    if (!value)
      return nullptr;
    results.push_back(*value);
  }
  return DenseElementsAttr::get(resultType, results);
}

/// A binary op with numpy broadcasting, of one type per element kind.
NodeConverter binary(BinaryFn floatFn, BinaryFn intFn, bool comparison = false,
                     IntFold fold = nullptr) {
  return [=](NodeImporter &n) -> LogicalResult {
    if (failed(checkBroadcastInputs(n, 2)))
      return failure();
    Type element = n.inputType(0).getElementType();
    if (n.inputType(1).getElementType() != element)
      return n.error("the inputs have different element types");
    if (DenseElementsAttr folded = foldIntBinary(n, fold)) {
      n.setConstantOutput(0, folded);
      return success();
    }
    BinaryFn fn = isFloat(element) ? floatFn : intFn;
    if (!fn)
      return n.error("element type not supported by this op");
    Type result = comparison ? n.builder().getI1Type() : element;
    n.setOutput(0, buildElementwise(
                       n.builder(), n.getLoc(), {n.input(0), n.input(1)},
                       result, [&](OpBuilder &b, Location loc, ValueRange a) {
                         return fn(b, loc, a[0], a[1]);
                       }));
    return success();
  };
}

template <typename FloatOp, typename IntOp>
NodeConverter arithBinary(IntFold fold = nullptr) {
  return binary([](OpBuilder &b, Location loc, Value x,
                   Value y) -> Value { return FloatOp::create(b, loc, x, y); },
                [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
                  return IntOp::create(b, loc, x, y);
                },
                /*comparison=*/false, fold);
}

NodeConverter compare(arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
  return binary(
      [=](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::CmpFOp::create(b, loc, fp, x, y);
      },
      [=](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::CmpIOp::create(b, loc, ip, x, y);
      },
      /*comparison=*/true);
}

/// Min, Max, Sum and Mean: any number of inputs with numpy broadcasting,
/// folded left to right with `floatFn` (`intFn` on integers); Mean divides
/// the sum by the count.
NodeConverter variadic(BinaryFn floatFn, BinaryFn intFn, bool mean = false) {
  return [=](NodeImporter &n) -> LogicalResult {
    unsigned count = n.getNumInputs();
    if (count == 0)
      return n.error("needs at least one input");
    if (failed(checkBroadcastInputs(n, count)))
      return failure();
    Type element = n.inputType(0).getElementType();
    SmallVector<Value> inputs;
    for (unsigned i = 0; i < count; ++i) {
      if (n.inputType(i).getElementType() != element)
        return n.error("the inputs have different element types");
      inputs.push_back(n.input(i));
    }
    BinaryFn fn = isFloat(element) ? floatFn : intFn;
    if (!fn)
      return n.error("element type not supported by this op");
    n.setOutput(0,
                buildElementwise(n.builder(), n.getLoc(), inputs, element,
                                 [&](OpBuilder &b, Location loc, ValueRange a) {
                                   Value result = a[0];
                                   for (Value operand : a.drop_front())
                                     result = fn(b, loc, result, operand);
                                   if (mean)
                                     result = arith::DivFOp::create(
                                         b, loc, result,
                                         createScalar(b, loc, element, count));
                                   return result;
                                 }));
    return success();
  };
}

/// A unary op on floats (and on integers where `allowInt`).
NodeConverter unary(UnaryFn fn, bool allowInt = false) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type)
      return n.error("input 0 is missing or not a tensor");
    if (!isFloat(type.getElementType()) && !allowInt)
      return n.error("needs a floating-point input");
    n.setOutput(0,
                buildElementwise(n.builder(), n.getLoc(), {n.input(0)},
                                 type.getElementType(),
                                 [&](OpBuilder &b, Location loc, ValueRange a) {
                                   return fn(n, b, loc, a[0]);
                                 }));
    return success();
  };
}

template <typename MathOp> NodeConverter mathUnary() {
  return unary([](NodeImporter &, OpBuilder &b, Location loc, Value x) {
    return Value(MathOp::create(b, loc, x));
  });
}

Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  return createScalar(b, loc, like.getType(), value);
}

LogicalResult convertPow(NodeImporter &n) {
  if (failed(checkBroadcastInputs(n, 2)))
    return failure();
  Type element = n.inputType(0).getElementType();
  Type exponentType = n.inputType(1).getElementType();
  n.setOutput(0,
              buildElementwise(
                  n.builder(), n.getLoc(), {n.input(0), n.input(1)}, element,
                  [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                    if (!isFloat(element) && !isFloat(exponentType))
                      return math::IPowIOp::create(
                          b, loc, a[0], castScalar(b, loc, a[1], element));
                    // Integer bases with float exponents: in f64, then
                    // truncated, as numpy does.
                    Type compute = isFloat(element) ? element : b.getF64Type();
                    Value base = castScalar(b, loc, a[0], compute);
                    Value exponent = castScalar(b, loc, a[1], compute);
                    Value power = math::PowFOp::create(b, loc, base, exponent);
                    return castScalar(b, loc, power, element);
                  }));
  return success();
}

LogicalResult convertWhere(NodeImporter &n) {
  if (failed(checkBroadcastInputs(n, 3)))
    return failure();
  if (!n.inputType(0).getElementType().isInteger(1))
    return n.error("the condition must be bool");
  n.setOutput(
      0, buildElementwise(
             n.builder(), n.getLoc(), {n.input(0), n.input(1), n.input(2)},
             n.inputType(1).getElementType(),
             [&](OpBuilder &b, Location loc, ValueRange a) {
               return Value(arith::SelectOp::create(b, loc, a[0], a[1], a[2]));
             }));
  return success();
}

/// Clip (ReLU6 in MobileNets): bounds from attributes before opset 11, from
/// optional scalar inputs since.
LogicalResult convertClip(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  Type element = type.getElementType();
  SmallVector<Value> operands = {n.input(0)};
  std::optional<double> low, high;
  if (n.getOpset() < 11) {
    low = n.floatAttr("min", -FLT_MAX);
    high = n.floatAttr("max", FLT_MAX);
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!n.hasInput(i))
        continue;
      RankedTensorType bound = n.inputType(i);
      if (!bound || bound.getRank() != 0 || bound.getElementType() != element)
        return n.error("min and max must be scalars of the input's type");
      operands.push_back(n.input(i));
    }
  }
  bool hasMin = low || n.hasInput(1), hasMax = high || n.hasInput(2);
  n.setOutput(0, buildElementwise(
                     n.builder(), n.getLoc(), operands, element,
                     [&](OpBuilder &b, Location loc, ValueRange a) {
                       unsigned next = 1;
                       Value lo = low ? createScalar(b, loc, element, *low)
                                      : (hasMin ? a[next++] : Value());
                       Value hi = high ? createScalar(b, loc, element, *high)
                                       : (hasMax ? a[next++] : Value());
                       Value x = a[0];
                       bool f = isFloat(element);
                       if (lo)
                         x = f ? Value(arith::MaximumFOp::create(b, loc, x, lo))
                               : Value(arith::MaxSIOp::create(b, loc, x, lo));
                       if (hi)
                         x = f ? Value(arith::MinimumFOp::create(b, loc, x, hi))
                               : Value(arith::MinSIOp::create(b, loc, x, hi));
                       return x;
                     },
                     type.getShape()));
  return success();
}

/// Cast to the `to` attribute's type, or CastLike to input 1's.
LogicalResult convertCast(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  bool like = n.getNode().op_type() == "CastLike";
  if (like && !n.inputType(1))
    return n.error("input 1 is missing or not a tensor");
  Type to = like ? n.inputType(1).getElementType()
                 : getElementType(n.builder().getContext(), n.intAttr("to", 0));
  if (!to)
    return n.error("casts to element type " + Twine(n.intAttr("to", 0)) +
                   " are not supported");
  // Small integer constants (shape computations) fold; the type is checked
  // before the value, which for a weight would be converted whole.
  DenseElementsAttr constant;
  if (type.getElementType().isInteger() && to.isInteger() && !to.isInteger(1) &&
      type.getNumElements() <= 64)
    constant = n.constantInput(0);
  if (constant) {
    SmallVector<APInt> values;
    for (const APInt &value : constant.getValues<APInt>())
      values.push_back(value.sextOrTrunc(to.getIntOrFloatBitWidth()));
    n.setConstantOutput(
        0, DenseElementsAttr::get(type.clone(to), ArrayRef<APInt>(values)));
    return success();
  }
  n.setOutput(0,
              buildElementwise(n.builder(), n.getLoc(), {n.input(0)}, to,
                               [&](OpBuilder &b, Location loc, ValueRange a) {
                                 return castScalar(b, loc, a[0], to);
                               }));
  return success();
}

/// The identity element of a max (or min) reduction over `type`.
double lowest(Type type, bool max) {
  if (isFloat(type))
    return max ? -INFINITY : INFINITY;
  unsigned width = type.getIntOrFloatBitWidth();
  double bound = width >= 64 ? 9.2233720368547748e18 : std::ldexp(1, width - 1);
  return max ? -bound : bound - 1;
}

enum class Reduce { Sum, Mean, Max, Min, Prod };

Value combine(OpBuilder &b, Location loc, Reduce kind, Value x, Value acc) {
  bool f = isFloat(x.getType());
  switch (kind) {
  case Reduce::Sum:
  case Reduce::Mean:
    return f ? Value(arith::AddFOp::create(b, loc, x, acc))
             : Value(arith::AddIOp::create(b, loc, x, acc));
  case Reduce::Max:
    return f ? Value(arith::MaximumFOp::create(b, loc, x, acc))
             : Value(arith::MaxSIOp::create(b, loc, x, acc));
  case Reduce::Min:
    return f ? Value(arith::MinimumFOp::create(b, loc, x, acc))
             : Value(arith::MinSIOp::create(b, loc, x, acc));
  case Reduce::Prod:
    return f ? Value(arith::MulFOp::create(b, loc, x, acc))
             : Value(arith::MulIOp::create(b, loc, x, acc));
  }
  return nullptr;
}

/// Makes `value` a constant to differentiation: the row maximum that a
/// softmax or log-sum-exp subtracts, which its result does not depend on.
void stopGradient(OpBuilder &b, Value value) {
  value.getDefiningOp()->setAttr(SbpDialect::getStopGradientAttrName(),
                                 b.getUnitAttr());
}

/// Reduces over `axes` (any order, negative allowed), dividing by the count
/// for a mean.
Value reduce(OpBuilder &b, Location loc, Value input, SmallVector<int64_t> axes,
             bool keepDims, Reduce kind) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  llvm::sort(axes);
  double init = kind == Reduce::Max    ? lowest(element, true)
                : kind == Reduce::Min  ? lowest(element, false)
                : kind == Reduce::Prod ? 1
                                       : 0;
  Value result = buildReduction(
      b, loc, input, axes, keepDims, init,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return combine(nested, nestedLoc, kind, args[0], args[1]);
      });
  if (kind != Reduce::Mean)
    return result;
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= type.getDimSize(axis);
  return buildElementwise(
      b, loc, {result}, element,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange a) -> Value {
        Value divisor = createScalar(nested, nestedLoc, element, count);
        if (isFloat(element))
          return arith::DivFOp::create(nested, nestedLoc, a[0], divisor);
        return arith::DivSIOp::create(nested, nestedLoc, a[0], divisor);
      });
}

/// The reductions ONNX composes from a sum: of squares, of absolute
/// values, the L2 norm, the logarithm of a sum and of a sum of exponentials.
enum class Composite { None, SumSquare, L1, L2, LogSum, LogSumExp };

/// Applies `fn` to every element of `x`.
Value mapElements(OpBuilder &b, Location loc, Value x,
                  function_ref<Value(OpBuilder &, Location, Value)> fn) {
  return buildElementwise(
      b, loc, {x}, cast<RankedTensorType>(x.getType()).getElementType(),
      [&](OpBuilder &nb, Location l, ValueRange a) { return fn(nb, l, a[0]); });
}

/// The composite reduction of `input` over `axes`.
Value reduceComposite(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> axes, bool keepDims,
                      Composite composite) {
  SmallVector<int64_t> over(axes);
  switch (composite) {
  case Composite::None:
    break;
  case Composite::SumSquare:
  case Composite::L2: {
    Value squares =
        mapElements(b, loc, input, [](OpBuilder &nb, Location l, Value x) {
          return Value(arith::MulFOp::create(nb, l, x, x));
        });
    Value sum = reduce(b, loc, squares, over, keepDims, Reduce::Sum);
    if (composite == Composite::SumSquare)
      return sum;
    return mapElements(b, loc, sum, [](OpBuilder &nb, Location l, Value x) {
      return Value(math::SqrtOp::create(nb, l, x));
    });
  }
  case Composite::L1:
    return reduce(b, loc,
                  mapElements(b, loc, input,
                              [](OpBuilder &nb, Location l, Value x) {
                                return Value(math::AbsFOp::create(nb, l, x));
                              }),
                  over, keepDims, Reduce::Sum);
  case Composite::LogSum:
    return mapElements(b, loc,
                       reduce(b, loc, input, over, keepDims, Reduce::Sum),
                       [](OpBuilder &nb, Location l, Value x) {
                         return Value(math::LogOp::create(nb, l, x));
                       });
  case Composite::LogSumExp: {
    // log(sum(exp(x - max))) + max: no exponential overflows.
    Value max = reduce(b, loc, input, over, /*keepDims=*/true, Reduce::Max);
    stopGradient(b, max);
    Value exp = buildElementwise(
        b, loc, {input, max},
        cast<RankedTensorType>(input.getType()).getElementType(),
        [](OpBuilder &nb, Location l, ValueRange a) {
          return Value(math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, a[0], a[1])));
        });
    Value sum = reduce(b, loc, exp, over, /*keepDims=*/true, Reduce::Sum);
    Value result =
        buildElementwise(b, loc, {sum, max},
                         cast<RankedTensorType>(sum.getType()).getElementType(),
                         [](OpBuilder &nb, Location l, ValueRange a) {
                           return Value(arith::AddFOp::create(
                               nb, l, math::LogOp::create(nb, l, a[0]), a[1]));
                         });
    if (keepDims)
      return result;
    // The reduced dimensions (size 1 now) dropped, as the other reductions
    // do, without a second pass for the maximum.
    SmallVector<int64_t> shape;
    for (auto [dim, size] :
         llvm::enumerate(cast<RankedTensorType>(input.getType()).getShape()))
      if (!llvm::is_contained(over, int64_t(dim)))
        shape.push_back(size);
    return buildReshape(b, loc, result, shape);
  }
  }
  return nullptr;
}

NodeConverter reduction(Reduce kind, Composite composite = Composite::None) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type)
      return n.error("input 0 is missing or not a tensor");
    if (composite != Composite::None && !isFloat(type.getElementType()))
      return n.error("needs a floating-point input");
    // ReduceSum reads its axes from input 1 since opset 13; the others
    // from an attribute until opset 18.
    std::optional<SmallVector<int64_t>> axes = n.intsAttr("axes");
    if (kind == Reduce::Sum && composite == Composite::None &&
        n.getOpset() >= 13) {
      axes = std::nullopt;
      if (n.hasInput(1)) {
        axes = n.intsInput(1);
        if (!axes)
          return n.error("the axes must be known at import time");
      }
    }
    bool keepDims = n.intAttr("keepdims", 1) != 0;
    if (!axes || axes->empty()) {
      if (n.intAttr("noop_with_empty_axes", 0)) {
        n.setOutput(0, n.input(0));
        return success();
      }
      axes.emplace();
      for (int64_t d = 0; d < type.getRank(); ++d)
        axes->push_back(d);
    }
    for (int64_t &axis : *axes) {
      std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank());
      if (!normalized)
        return n.error("axis " + Twine(axis) + " is out of range");
      axis = *normalized;
    }
    n.setOutput(0, composite == Composite::None
                       ? reduce(n.builder(), n.getLoc(), n.input(0), *axes,
                                keepDims, kind)
                       : reduceComposite(n.builder(), n.getLoc(), n.input(0),
                                         *axes, keepDims, composite));
    return success();
  };
}

Value subtract(OpBuilder &b, Location loc, Value x, Value y) {
  return buildElementwise(
      b, loc, {x, y}, cast<RankedTensorType>(x.getType()).getElementType(),
      [](OpBuilder &nb, Location l, ValueRange a) {
        return Value(arith::SubFOp::create(nb, l, a[0], a[1]));
      });
}

/// TopK: the k largest (or smallest) elements along the axis, in order,
/// equal ones by position, and their positions (SortBuilders.h).
LogicalResult convertTopK(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || type.getRank() == 0 || !type.getElementType().isIntOrFloat())
    return n.error("needs a tensor of numbers of rank 1 or more");
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", -1), type.getRank());
  if (!axis)
    return n.error("axis out of range");
  std::optional<SmallVector<int64_t>> k = n.intsInput(1);
  int64_t size = type.getDimSize(*axis);
  if (!k || k->size() != 1 || (*k)[0] < 0 || (*k)[0] > size)
    return n.error("needs K, a constant in [0, " + std::to_string(size) + "]");
  if (n.intAttr("sorted", 1) == 0)
    return n.error("unsorted TopK (sorted=0) is not supported");
  FailureOr<SmallVector<Value>> results = sort_builders::buildTopK(
      n.builder(), n.getLoc(), n.input(0), *axis, (*k)[0],
      n.intAttr("largest", 1) != 0, n.builder().getI64Type());
  if (failed(results))
    return failure();
  n.setOutput(0, (*results)[0]);
  n.setOutput(1, (*results)[1]);
  return success();
}

/// ArgMax and ArgMin: one reduction over the axis carrying the extreme so
/// far and its index (int64); the first index of equal extremes, or the
/// last with select_last_index.
NodeConverter convertArgExtreme(bool max) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || !type.getElementType().isIntOrFloat())
      return n.error("needs a tensor of numbers");
    int64_t rank = type.getRank();
    std::optional<int64_t> axis = normalizeAxis(n.intAttr("axis", 0), rank);
    if (!axis)
      return n.error("axis out of range");
    bool keepDims = n.intAttr("keepdims", 1) != 0;
    bool last = n.intAttr("select_last_index", 0) != 0;
    OpBuilder &b = n.builder();
    Location loc = n.getLoc();
    Type element = type.getElementType(), index = b.getI64Type();
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + *axis);
    AffineMap all = b.getMultiDimIdentityMap(rank);
    AffineMap kept = all.dropResult(*axis);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[*axis] = utils::IteratorType::reduction;
    bool f = isFloat(element);
    auto generic = linalg::GenericOp::create(
        b, loc,
        TypeRange{RankedTensorType::get(shape, element),
                  RankedTensorType::get(shape, index)},
        ValueRange{n.input(0)},
        ValueRange{createFilled(b, loc, shape, element, lowest(element, max)),
                   createFilled(b, loc, shape, index, 0)},
        SmallVector<AffineMap>{all, kept, kept}, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value position = arith::IndexCastOp::create(
              nb, l, index, linalg::IndexOp::create(nb, l, *axis));
          Value better = f ? Value(arith::CmpFOp::create(
                                 nb, l,
                                 max ? (last ? arith::CmpFPredicate::OGE
                                             : arith::CmpFPredicate::OGT)
                                     : (last ? arith::CmpFPredicate::OLE
                                             : arith::CmpFPredicate::OLT),
                                 args[0], args[1]))
                           : Value(arith::CmpIOp::create(
                                 nb, l,
                                 max ? (last ? arith::CmpIPredicate::sge
                                             : arith::CmpIPredicate::sgt)
                                     : (last ? arith::CmpIPredicate::sle
                                             : arith::CmpIPredicate::slt),
                                 args[0], args[1]));
          linalg::YieldOp::create(
              nb, l,
              ValueRange{
                  arith::SelectOp::create(nb, l, better, args[0], args[1]),
                  arith::SelectOp::create(nb, l, better, position, args[2])});
        });
    Value result = generic.getResult(1);
    if (keepDims) {
      SmallVector<int64_t> keptShape(type.getShape());
      keptShape[*axis] = 1;
      result = buildReshape(b, loc, result, keptShape);
    }
    n.setOutput(0, result);
    return success();
  };
}

/// Mod: with fmod, C's remainder (the dividend's sign); without, integers
/// take the divisor's sign (Python's %), which floats may not ask for.
LogicalResult convertMod(NodeImporter &n) {
  bool fmod = n.intAttr("fmod", 0) != 0;
  if (n.inputType(0) && isFloat(n.inputType(0).getElementType()) && !fmod)
    return n.error("floating-point Mod needs fmod=1");
  return binary(
      [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::RemFOp::create(b, loc, x, y);
      },
      [=](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        Value remainder = arith::RemSIOp::create(b, loc, x, y);
        if (fmod)
          return remainder;
        Value zero = createScalar(b, loc, x.getType(), 0);
        auto negative = [&](Value v) -> Value {
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v,
                                       zero);
        };
        Value nonzero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              remainder, zero);
        Value signs =
            arith::XOrIOp::create(b, loc, negative(remainder), negative(y));
        Value shift = arith::AndIOp::create(b, loc, nonzero, signs);
        return arith::SelectOp::create(
            b, loc, shift, arith::AddIOp::create(b, loc, remainder, y),
            remainder);
      })(n);
}

NodeConverter convertSoftmax(bool log) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || !isFloat(type.getElementType()))
      return n.error("needs a floating-point tensor");
    int64_t rank = type.getRank();
    bool coerce = n.getOpset() < 13;
    std::optional<int64_t> axis =
        normalizeAxis(n.intAttr("axis", coerce ? 1 : -1), rank);
    if (!axis)
      return n.error("axis out of range");
    OpBuilder &b = n.builder();
    if (!coerce) {
      n.setOutput(0, softmax(b, n.getLoc(), n.input(0), *axis, log));
      return success();
    }
    // Before opset 13 the input is seen as 2-d, split before `axis`.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= type.getDimSize(d);
    Value flat = buildReshape(b, n.getLoc(), n.input(0), {outer, inner});
    Value result = softmax(b, n.getLoc(), flat, 1, log);
    n.setOutput(0, buildReshape(b, n.getLoc(), result, type.getShape()));
    return success();
  };
}

/// The mean of `x` over `axes` (kept as size-1 dimensions), `x` minus it,
/// and the reciprocal standard deviation, as layer and instance
/// normalization compute them.
struct Moments {
  Value mean, centered, variance, invStdDev;
};

Moments getMoments(OpBuilder &b, Location loc, Value x,
                   SmallVector<int64_t> axes, float epsilon) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Moments m;
  m.mean = reduce(b, loc, x, axes, true, Reduce::Mean);
  m.centered = subtract(b, loc, x, m.mean);
  Value squares =
      buildElementwise(b, loc, {m.centered}, element,
                       [](OpBuilder &nb, Location l, ValueRange a) {
                         return Value(arith::MulFOp::create(nb, l, a[0], a[0]));
                       });
  m.variance = reduce(b, loc, squares, axes, true, Reduce::Mean);
  m.invStdDev =
      buildElementwise(b, loc, {m.variance}, element,
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         Value eps = createScalar(nb, l, element, epsilon);
                         return Value(math::RsqrtOp::create(
                             nb, l, arith::AddFOp::create(nb, l, a[0], eps)));
                       });
  return m;
}

/// `centered * invStdDev * scale (+ bias)`, broadcast to `shape`.
Value scaleAndShift(OpBuilder &b, Location loc, ValueRange operands,
                    ArrayRef<int64_t> shape) {
  Type element = cast<RankedTensorType>(operands[0].getType()).getElementType();
  return buildElementwise(
      b, loc, operands, element,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value y = arith::MulFOp::create(
            nb, l, arith::MulFOp::create(nb, l, a[0], a[1]), a[2]);
        if (a.size() == 4)
          y = arith::AddFOp::create(nb, l, y, a[3]);
        return y;
      },
      shape);
}

LogicalResult convertLayerNorm(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || !isFloat(type.getElementType()) || !n.inputType(1))
    return n.error("needs a floating-point input and a scale");
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", -1), type.getRank());
  if (!axis)
    return n.error("axis out of range");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < type.getRank(); ++d)
    axes.push_back(d);
  Moments m =
      getMoments(b, loc, n.input(0), axes, n.floatAttr("epsilon", 1e-5f));
  SmallVector<Value> operands = {m.centered, m.invStdDev, n.input(1)};
  if (n.hasInput(2))
    operands.push_back(n.input(2));
  if (failed(broadcastShapes({type.getShape(), n.inputType(1).getShape()})) ||
      (n.hasInput(2) &&
       failed(broadcastShapes({type.getShape(), n.inputType(2).getShape()}))))
    return n.error("the scale or bias does not broadcast to the input");
  n.setOutput(0, scaleAndShift(b, loc, operands, type.getShape()));
  n.setOutput(1, m.mean);
  n.setOutput(2, m.invStdDev);
  return success();
}

/// Normalizes each channel of each sample over its spatial dimensions
/// (layout [N, C, D...]), then scales and shifts per channel.
LogicalResult convertInstanceNorm(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  RankedTensorType scale = n.inputType(1), bias = n.inputType(2);
  if (!type || !isFloat(type.getElementType()) || type.getRank() < 3 ||
      !scale || !bias)
    return n.error("needs a floating-point input [N, C, D...], a scale and "
                   "a bias");
  int64_t channels = type.getDimSize(1);
  if (scale.getShape() != ArrayRef<int64_t>{channels} ||
      bias.getShape() != ArrayRef<int64_t>{channels})
    return n.error("the scale and bias need one element per channel");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  SmallVector<int64_t> axes, perChannel(type.getRank() - 1, 1);
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  perChannel[0] = channels;
  Moments m =
      getMoments(b, loc, n.input(0), axes, n.floatAttr("epsilon", 1e-5f));
  n.setOutput(0, scaleAndShift(b, loc,
                               {m.centered, m.invStdDev,
                                buildReshape(b, loc, n.input(1), perChannel),
                                buildReshape(b, loc, n.input(2), perChannel)},
                               type.getShape()));
  return success();
}

/// MeanVarianceNormalization: `(x - mean) / (sqrt(variance) + 1e-9)` over
/// `axes` (default [0, 2, 3]).
LogicalResult convertMeanVarianceNorm(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || !isFloat(type.getElementType()))
    return n.error("needs a floating-point input");
  SmallVector<int64_t> axes;
  for (int64_t axis :
       n.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3})) {
    std::optional<int64_t> normalized = normalizeAxis(axis, type.getRank());
    if (!normalized)
      return n.error("axis " + Twine(axis) + " out of range");
    if (!llvm::is_contained(axes, *normalized))
      axes.push_back(*normalized);
  }
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = type.getElementType();
  Moments m = getMoments(b, loc, n.input(0), axes, 0);
  n.setOutput(0, buildElementwise(
                     b, loc, {m.centered, m.variance}, element,
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value deviation = arith::AddFOp::create(
                           nb, l, math::SqrtOp::create(nb, l, a[1]),
                           createScalar(nb, l, element, 1e-9));
                       return arith::DivFOp::create(nb, l, a[0], deviation);
                     }));
  return success();
}

} // namespace

Value onnx_import::softmax(OpBuilder &b, Location loc, Value input,
                           int64_t axis, bool log) {
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  Value max = reduce(b, loc, input, {axis}, true, Reduce::Max);
  stopGradient(b, max);
  Value shifted = subtract(b, loc, input, max);
  Value exp = buildElementwise(b, loc, {shifted}, element,
                               [](OpBuilder &nb, Location l, ValueRange a) {
                                 return Value(math::ExpOp::create(nb, l, a[0]));
                               });
  Value sum = reduce(b, loc, exp, {axis}, true, Reduce::Sum);
  return buildElementwise(
      b, loc, {log ? shifted : exp, sum}, element,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        if (!log)
          return arith::DivFOp::create(nb, l, a[0], a[1]);
        return arith::SubFOp::create(nb, l, a[0],
                                     math::LogOp::create(nb, l, a[1]));
      });
}

namespace {

/// A binary op on booleans (i1), with numpy broadcasting.
template <typename IntOp> NodeConverter logicalBinary() {
  return [](NodeImporter &n) -> LogicalResult {
    if (failed(checkBroadcastInputs(n, 2)))
      return failure();
    if (!n.inputType(0).getElementType().isInteger(1) ||
        !n.inputType(1).getElementType().isInteger(1))
      return n.error("needs boolean inputs");
    n.setOutput(0, buildElementwise(
                       n.builder(), n.getLoc(), {n.input(0), n.input(1)},
                       n.builder().getI1Type(),
                       [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                         return IntOp::create(b, loc, a[0], a[1]);
                       }));
    return success();
  };
}

/// A test of each element of a floating-point input (IsNaN, IsInf).
NodeConverter classify(
    std::function<Value(NodeImporter &, OpBuilder &, Location, Value)> test) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || !isFloat(type.getElementType()))
      return n.error("needs a floating-point input");
    n.setOutput(0,
                buildElementwise(n.builder(), n.getLoc(), {n.input(0)},
                                 n.builder().getI1Type(),
                                 [&](OpBuilder &b, Location loc, ValueRange a) {
                                   return test(n, b, loc, a[0]);
                                 }));
    return success();
  };
}

} // namespace

void onnx_import::addElementwiseConverters(ConverterTable &table) {
  table["InstanceNormalization"] = convertInstanceNorm;
  table["MeanVarianceNormalization"] = convertMeanVarianceNorm;
  table["And"] = logicalBinary<arith::AndIOp>();
  table["Or"] = logicalBinary<arith::OrIOp>();
  table["Xor"] = logicalBinary<arith::XOrIOp>();
  table["Not"] = [](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || !type.getElementType().isInteger(1))
      return n.error("needs a boolean input");
    n.setOutput(
        0, buildElementwise(
               n.builder(), n.getLoc(), {n.input(0)}, type.getElementType(),
               [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 return arith::XOrIOp::create(
                     b, loc, a[0], arith::ConstantIntOp::create(b, loc, 1, 1));
               }));
    return success();
  };
  table["IsNaN"] = classify(
      [](NodeImporter &, OpBuilder &b, Location loc, Value x) -> Value {
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
      });
  table["IsInf"] = classify([](NodeImporter &n, OpBuilder &b, Location loc,
                               Value x) -> Value {
    bool positive = n.intAttr("detect_positive", 1);
    bool negative = n.intAttr("detect_negative", 1);
    Value isInf = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, x),
        createScalar(b, loc, x.getType(), INFINITY));
    if (positive == negative)
      return positive ? isInf
                      : Value(arith::ConstantIntOp::create(b, loc, 0, 1));
    Value sign = arith::CmpFOp::create(b, loc,
                                       positive ? arith::CmpFPredicate::OGT
                                                : arith::CmpFPredicate::OLT,
                                       x, createScalar(b, loc, x.getType(), 0));
    return arith::AndIOp::create(b, loc, isInf, sign);
  });
  // y = x + bias where x < -lambd, x - bias where x > lambd, else 0.
  table["Shrink"] =
      unary([](NodeImporter &n, OpBuilder &b, Location loc, Value x) -> Value {
        Type type = x.getType();
        Value lambd = createScalar(b, loc, type, n.floatAttr("lambd", 0.5f));
        Value bias = createScalar(b, loc, type, n.floatAttr("bias", 0));
        Value below =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                  arith::NegFOp::create(b, loc, lambd));
        Value above =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, lambd);
        return arith::SelectOp::create(
            b, loc, below, arith::AddFOp::create(b, loc, x, bias),
            arith::SelectOp::create(b, loc, above,
                                    arith::SubFOp::create(b, loc, x, bias),
                                    createScalar(b, loc, type, 0)));
      });
  table["Add"] = arithBinary<arith::AddFOp, arith::AddIOp>(
      [](const APInt &x, const APInt &y) -> std::optional<APInt> {
        return x + y;
      });
  table["Sub"] = arithBinary<arith::SubFOp, arith::SubIOp>(
      [](const APInt &x, const APInt &y) -> std::optional<APInt> {
        return x - y;
      });
  table["Mul"] = arithBinary<arith::MulFOp, arith::MulIOp>(
      [](const APInt &x, const APInt &y) -> std::optional<APInt> {
        return x * y;
      });
  table["Div"] = arithBinary<arith::DivFOp, arith::DivSIOp>(
      [](const APInt &x, const APInt &y) -> std::optional<APInt> {
        if (y.isZero())
          return std::nullopt;
        return x.sdiv(y);
      });
  table["Pow"] = convertPow;
  table["Mod"] = convertMod;
  table["TopK"] = convertTopK;
  table["ArgMax"] = convertArgExtreme(true);
  table["ArgMin"] = convertArgExtreme(false);
  table["Equal"] = compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq);
  table["Less"] = compare(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt);
  table["Greater"] =
      compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt);
  table["LessOrEqual"] =
      compare(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle);
  table["GreaterOrEqual"] =
      compare(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge);
  table["Where"] = convertWhere;
  table["Cast"] = convertCast;
  table["CastLike"] = convertCast;
  table["Clip"] = convertClip;

  table["Sqrt"] = mathUnary<math::SqrtOp>();
  table["Exp"] = mathUnary<math::ExpOp>();
  table["Log"] = mathUnary<math::LogOp>();
  table["Erf"] = mathUnary<math::ErfOp>();
  table["Tanh"] = mathUnary<math::TanhOp>();
  table["Reciprocal"] = unary([](NodeImporter &, OpBuilder &b, Location loc,
                                 Value x) {
    return Value(arith::DivFOp::create(b, loc, constantLike(b, loc, x, 1), x));
  });
  NodeConverter negate = unary(
      [](NodeImporter &, OpBuilder &b, Location loc, Value x) -> Value {
        if (isFloat(x.getType()))
          return arith::NegFOp::create(b, loc, x);
        return arith::SubIOp::create(b, loc, constantLike(b, loc, x, 0), x);
      },
      /*allowInt=*/true);
  table["Neg"] = [negate](NodeImporter &n) -> LogicalResult {
    // A negated axis or count in a shape computation is folded.
    DenseElementsAttr value = foldableInput(n, 0);
    if (!value)
      return negate(n);
    n.setConstantOutput(0, value.mapValues(value.getElementType(),
                                           [](const APInt &x) { return -x; }));
    return success();
  };
  table["Abs"] = unary(
      [](NodeImporter &, OpBuilder &b, Location loc, Value x) -> Value {
        if (isFloat(x.getType()))
          return math::AbsFOp::create(b, loc, x);
        return math::AbsIOp::create(b, loc, x);
      },
      /*allowInt=*/true);
  table["Sigmoid"] =
      unary([](NodeImporter &, OpBuilder &b, Location loc, Value x) {
        Value one = constantLike(b, loc, x, 1);
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return Value(arith::DivFOp::create(
            b, loc, one, arith::AddFOp::create(b, loc, one, e)));
      });
  table["Relu"] = unary(
      [](NodeImporter &, OpBuilder &b, Location loc, Value x) -> Value {
        Value zero = constantLike(b, loc, x, 0);
        if (isFloat(x.getType()))
          return arith::MaximumFOp::create(b, loc, x, zero);
        return arith::MaxSIOp::create(b, loc, x, zero);
      },
      /*allowInt=*/true);
  table["LeakyRelu"] =
      unary([](NodeImporter &n, OpBuilder &b, Location loc, Value x) {
        Value zero = constantLike(b, loc, x, 0);
        Value alpha = constantLike(b, loc, x, n.floatAttr("alpha", 0.01f));
        Value negative =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
        return Value(arith::SelectOp::create(
            b, loc, negative, arith::MulFOp::create(b, loc, x, alpha), x));
      });
  table["HardSigmoid"] =
      unary([](NodeImporter &n, OpBuilder &b, Location loc, Value x) {
        Value alpha = constantLike(b, loc, x, n.floatAttr("alpha", 0.2f));
        Value beta = constantLike(b, loc, x, n.floatAttr("beta", 0.5f));
        Value y = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, x, alpha), beta);
        y = arith::MinimumFOp::create(b, loc, y, constantLike(b, loc, x, 1));
        return Value(
            arith::MaximumFOp::create(b, loc, y, constantLike(b, loc, x, 0)));
      });

  table["Sin"] = mathUnary<math::SinOp>();
  table["Cos"] = mathUnary<math::CosOp>();
  table["Tan"] = mathUnary<math::TanOp>();
  table["Asin"] = mathUnary<math::AsinOp>();
  table["Acos"] = mathUnary<math::AcosOp>();
  table["Atan"] = mathUnary<math::AtanOp>();
  table["Sinh"] = mathUnary<math::SinhOp>();
  table["Cosh"] = mathUnary<math::CoshOp>();
  table["Asinh"] = mathUnary<math::AsinhOp>();
  table["Acosh"] = mathUnary<math::AcoshOp>();
  table["Atanh"] = mathUnary<math::AtanhOp>();
  table["Floor"] = mathUnary<math::FloorOp>();
  table["Ceil"] = mathUnary<math::CeilOp>();
  // ONNX rounds halves to even.
  table["Round"] = mathUnary<math::RoundEvenOp>();
  table["Sign"] =
      unary([](NodeImporter &, OpBuilder &b, Location loc, Value x) {
        Value zero = constantLike(b, loc, x, 0);
        Value positive =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
        Value negative =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
        Value sign = arith::SelectOp::create(b, loc, negative,
                                             constantLike(b, loc, x, -1), zero);
        return Value(arith::SelectOp::create(b, loc, positive,
                                             constantLike(b, loc, x, 1), sign));
      });
  table["Softplus"] = unary([](NodeImporter &, OpBuilder &b, Location loc,
                               Value x) {
    return Value(math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x)));
  });
  table["Softsign"] = unary([](NodeImporter &, OpBuilder &b, Location loc,
                               Value x) {
    Value one = constantLike(b, loc, x, 1);
    return Value(arith::DivFOp::create(
        b, loc, x,
        arith::AddFOp::create(b, loc, one, math::AbsFOp::create(b, loc, x))));
  });
  // Elu and Selu: `scale * (x > 0 ? x : alpha * (exp(x) - 1))`.
  auto elu = [](float alpha, float scale) {
    return unary([=](NodeImporter &n, OpBuilder &b, Location loc, Value x) {
      Value zero = constantLike(b, loc, x, 0);
      Value a = constantLike(b, loc, x, n.floatAttr("alpha", alpha));
      Value negative =
          arith::MulFOp::create(b, loc, a, math::ExpM1Op::create(b, loc, x));
      Value positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
      Value y = arith::SelectOp::create(b, loc, positive, x, negative);
      if (scale == 1)
        return y;
      return Value(arith::MulFOp::create(
          b, loc, constantLike(b, loc, x, n.floatAttr("gamma", scale)), y));
    });
  };
  table["ThresholdedRelu"] =
      unary([](NodeImporter &n, OpBuilder &b, Location loc, Value x) {
        Value alpha = constantLike(b, loc, x, n.floatAttr("alpha", 1.0f));
        Value above =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, alpha);
        return Value(arith::SelectOp::create(b, loc, above, x,
                                             constantLike(b, loc, x, 0)));
      });
  // HardSwish: x * max(0, min(1, x / 6 + 1 / 2)).
  table["HardSwish"] = unary([](NodeImporter &, OpBuilder &b, Location loc,
                                Value x) {
    Value gate = arith::AddFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, 1.0 / 6)),
        constantLike(b, loc, x, 0.5));
    gate = arith::MinimumFOp::create(b, loc, gate, constantLike(b, loc, x, 1));
    gate = arith::MaximumFOp::create(b, loc, gate, constantLike(b, loc, x, 0));
    return Value(arith::MulFOp::create(b, loc, x, gate));
  });
  // Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
  table["Celu"] = unary([](NodeImporter &n, OpBuilder &b, Location loc,
                           Value x) {
    Value alpha = constantLike(b, loc, x, n.floatAttr("alpha", 1.0f));
    Value zero = constantLike(b, loc, x, 0);
    Value negative = arith::MulFOp::create(
        b, loc, alpha,
        math::ExpM1Op::create(b, loc, arith::DivFOp::create(b, loc, x, alpha)));
    return Value(arith::AddFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, zero),
        arith::MinimumFOp::create(b, loc, negative, zero)));
  });
  // PRelu: x < 0 ? slope * x : x, the slope broadcast to x.
  table["PRelu"] = binary(
      [](OpBuilder &b, Location loc, Value x, Value slope) -> Value {
        Value zero = constantLike(b, loc, x, 0);
        Value negative =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
        return arith::SelectOp::create(
            b, loc, negative, arith::MulFOp::create(b, loc, x, slope), x);
      },
      nullptr);
  table["Elu"] = elu(1.0f, 1.0f);
  table["Selu"] = elu(1.67326319217681884765625f, 1.05070102214813232421875f);
  table["Min"] = variadic(
      [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::MinimumFOp::create(b, loc, x, y);
      },
      [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::MinSIOp::create(b, loc, x, y);
      });
  table["Max"] = variadic(
      [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::MaximumFOp::create(b, loc, x, y);
      },
      [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
        return arith::MaxSIOp::create(b, loc, x, y);
      });
  auto addF = [](OpBuilder &b, Location loc, Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  table["Sum"] = variadic(addF, nullptr);
  table["Mean"] = variadic(addF, nullptr, /*mean=*/true);

  table["Softmax"] = convertSoftmax(false);
  table["LogSoftmax"] = convertSoftmax(true);
  table["LayerNormalization"] = convertLayerNorm;
  table["ReduceSum"] = reduction(Reduce::Sum);
  table["ReduceMean"] = reduction(Reduce::Mean);
  table["ReduceMax"] = reduction(Reduce::Max);
  table["ReduceMin"] = reduction(Reduce::Min);
  table["ReduceProd"] = reduction(Reduce::Prod);
  table["ReduceSumSquare"] = reduction(Reduce::Sum, Composite::SumSquare);
  table["ReduceL1"] = reduction(Reduce::Sum, Composite::L1);
  table["ReduceL2"] = reduction(Reduce::Sum, Composite::L2);
  table["ReduceLogSum"] = reduction(Reduce::Sum, Composite::LogSum);
  table["ReduceLogSumExp"] = reduction(Reduce::Sum, Composite::LogSumExp);
}
