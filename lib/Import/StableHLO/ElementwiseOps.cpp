//===- ElementwiseOps.cpp - StableHLO element-wise ops --------------------===//
//
// Every element-wise op has one scalar form, used both for the payload of
// the `linalg.generic` that replaces it and for the combiner regions of
// reduce, reduce_window and scatter.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "sbp/Import/SortBuilders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using arith::CmpFPredicate;
using arith::CmpIPredicate;

template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange operands) {
  if (isa<FloatType>(operands[0].getType()))
    return FloatOp::create(b, loc, operands);
  return IntOp::create(b, loc, operands);
}

Value buildCompare(OpBuilder &b, Location loc, shlo::CompareOp op, Value lhs,
                   Value rhs) {
  shlo::ComparisonDirection direction = op.getComparisonDirection();
  if (isa<FloatType>(lhs.getType()) &&
      op.getCompareType() == shlo::ComparisonType::TOTALORDER) {
    lhs = sort_builders::buildTotalOrderKey(b, loc, lhs);
    rhs = sort_builders::buildTotalOrderKey(b, loc, rhs);
  }
  if (isa<FloatType>(lhs.getType())) {
    // Ordered comparisons, except NE: NaN != NaN is true.
    CmpFPredicate predicate;
    switch (direction) {
    case shlo::ComparisonDirection::EQ:
      predicate = CmpFPredicate::OEQ;
      break;
    case shlo::ComparisonDirection::NE:
      predicate = CmpFPredicate::UNE;
      break;
    case shlo::ComparisonDirection::GE:
      predicate = CmpFPredicate::OGE;
      break;
    case shlo::ComparisonDirection::GT:
      predicate = CmpFPredicate::OGT;
      break;
    case shlo::ComparisonDirection::LE:
      predicate = CmpFPredicate::OLE;
      break;
    case shlo::ComparisonDirection::LT:
      predicate = CmpFPredicate::OLT;
      break;
    }
    return arith::CmpFOp::create(b, loc, predicate, lhs, rhs);
  }
  bool isUnsigned = lhs.getType().isInteger(1) ||
                    op.getCompareType() == shlo::ComparisonType::UNSIGNED ||
                    op->hasAttr(kUnsignedOperands);
  CmpIPredicate predicate;
  switch (direction) {
  case shlo::ComparisonDirection::EQ:
    predicate = CmpIPredicate::eq;
    break;
  case shlo::ComparisonDirection::NE:
    predicate = CmpIPredicate::ne;
    break;
  case shlo::ComparisonDirection::GE:
    predicate = isUnsigned ? CmpIPredicate::uge : CmpIPredicate::sge;
    break;
  case shlo::ComparisonDirection::GT:
    predicate = isUnsigned ? CmpIPredicate::ugt : CmpIPredicate::sgt;
    break;
  case shlo::ComparisonDirection::LE:
    predicate = isUnsigned ? CmpIPredicate::ule : CmpIPredicate::sle;
    break;
  case shlo::ComparisonDirection::LT:
    predicate = isUnsigned ? CmpIPredicate::ult : CmpIPredicate::slt;
    break;
  }
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

/// The inverse error function: Giles' single-precision approximation
/// ("Approximating the erfinv function", GPU Computing Gems, 2011), a
/// polynomial in w = -log(1 - x^2) or in its square root, then for f64 three
/// Newton steps on erf; +-1 give +-inf.
Value buildErfInv(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  auto c = [&](double v) { return createScalar(b, loc, type, v); };
  auto poly = [&](Value w, ArrayRef<double> coefficients) {
    Value p = c(coefficients[0]);
    for (double coefficient : coefficients.drop_front())
      p = arith::AddFOp::create(b, loc, c(coefficient),
                                arith::MulFOp::create(b, loc, p, w));
    return p;
  };
  Value one = c(1);
  Value w = arith::NegFOp::create(
      b, loc,
      math::LogOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, one, x),
                                arith::AddFOp::create(b, loc, one, x))));
  Value central = poly(arith::SubFOp::create(b, loc, w, c(2.5)),
                       {2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                        -4.39150654e-06, 0.00021858087, -0.00125372503,
                        -0.00417768164, 0.246640727, 1.50140941});
  Value tail = poly(
      arith::SubFOp::create(b, loc, math::SqrtOp::create(b, loc, w), c(3)),
      {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
       0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  Value isCentral = arith::CmpFOp::create(b, loc, CmpFPredicate::OLT, w, c(5));
  Value y = arith::MulFOp::create(
      b, loc, arith::SelectOp::create(b, loc, isCentral, central, tail), x);
  // Newton on |x| and |y|. Near 1 on log(erfc(y)) = log(1 - x): 1 - x is
  // exact there, where erf(y) - x would lose the digits below 1, and the
  // logarithm, nearly quadratic in y, converges from further away.
  Value xa = math::AbsFOp::create(b, loc, x);
  Value nearOne = arith::CmpFOp::create(b, loc, CmpFPredicate::OGT, xa, c(0.5));
  Value gap = arith::SubFOp::create(b, loc, one, xa);
  for (int step = 0; type.isF64() && step < 3; ++step) {
    Value ya = math::AbsFOp::create(b, loc, y);
    Value tail = math::ErfcOp::create(b, loc, ya);
    Value residual = arith::SelectOp::create(
        b, loc, nearOne,
        arith::MulFOp::create(
            b, loc, tail,
            arith::SubFOp::create(b, loc, math::LogOp::create(b, loc, gap),
                                  math::LogOp::create(b, loc, tail))),
        arith::SubFOp::create(b, loc, math::ErfOp::create(b, loc, ya), xa));
    Value slope = arith::MulFOp::create(
        b, loc, c(1.1283791670955126),
        math::ExpOp::create(
            b, loc,
            arith::NegFOp::create(b, loc,
                                  arith::MulFOp::create(b, loc, ya, ya))));
    y = math::CopySignOp::create(
        b, loc,
        arith::SubFOp::create(b, loc, ya,
                              arith::DivFOp::create(b, loc, residual, slope)),
        x);
  }
  Value isEdge = arith::CmpFOp::create(b, loc, CmpFPredicate::OEQ, xa, one);
  Value infinity = arith::MulFOp::create(
      b, loc, x, c(std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, isEdge, infinity, y);
}

/// A shift by `amount`, `shifted`, or `beyond` where the amount (unsigned)
/// is the width or more: StableHLO defines those (0, or the sign for an
/// arithmetic right shift), arith does not.
Value buildShift(OpBuilder &b, Location loc, Value shifted, Value amount,
                 Value beyond) {
  Type type = amount.getType();
  Value inRange = arith::CmpIOp::create(
      b, loc, CmpIPredicate::ult, amount,
      createScalar(b, loc, type, type.getIntOrFloatBitWidth()));
  return arith::SelectOp::create(b, loc, inRange, shifted, beyond);
}

/// max/min of two elements; on i1 they are or/and.
Value buildMax(OpBuilder &b, Location loc, Value x, Value y) {
  if (x.getType().isInteger(1))
    return arith::OrIOp::create(b, loc, x, y);
  return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, loc, {x, y});
}

Value buildMin(OpBuilder &b, Location loc, Value x, Value y) {
  if (x.getType().isInteger(1))
    return arith::AndIOp::create(b, loc, x, y);
  return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, loc, {x, y});
}

Value buildSign(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value zero = createScalar(b, loc, type, 0);
  if (isa<FloatType>(type)) {
    Value one = createScalar(b, loc, type, 1);
    Value sign = math::CopySignOp::create(b, loc, one, x);
    Value isZero = arith::CmpFOp::create(b, loc, CmpFPredicate::OEQ, x, zero);
    return arith::SelectOp::create(b, loc, isZero, zero, sign);
  }
  Value positive = arith::CmpIOp::create(b, loc, CmpIPredicate::sgt, x, zero);
  Value negative = arith::CmpIOp::create(b, loc, CmpIPredicate::slt, x, zero);
  return arith::SubIOp::create(b, loc,
                               arith::ExtUIOp::create(b, loc, type, positive),
                               arith::ExtUIOp::create(b, loc, type, negative));
}
} // namespace

FailureOr<Value> stablehlo_import::buildScalarOp(OpBuilder &b, Location loc,
                                                 Operation *op,
                                                 ValueRange operands) {
  auto elementOf = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
  };
  Type resultType =
      op->getNumResults() == 1 ? elementOf(op->getResult(0)) : Type();
  Value x = operands.empty() ? Value() : operands[0];
  bool isFloatOp = x && isa<FloatType>(x.getType());
  bool unsignedOperands = op->hasAttr(kUnsignedOperands),
       unsignedResults = op->hasAttr(kUnsignedResults);
  auto floatOnly = [&](auto build) -> FailureOr<Value> {
    if (!isFloatOp)
      return failure();
    return Value(build());
  };
  return TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](shlo::AddOp) -> Value {
        if (x.getType().isInteger(1))
          return arith::OrIOp::create(b, loc, operands);
        return createAdd(b, loc, operands[0], operands[1]);
      })
      .Case([&](shlo::SubtractOp) {
        return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, operands);
      })
      .Case([&](shlo::MultiplyOp) -> Value {
        if (x.getType().isInteger(1))
          return arith::AndIOp::create(b, loc, operands);
        return createMul(b, loc, operands[0], operands[1]);
      })
      .Case([&](shlo::DivideOp) {
        if (unsignedOperands)
          return Value(arith::DivUIOp::create(b, loc, operands));
        return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, operands);
      })
      .Case([&](shlo::RemainderOp) {
        if (unsignedOperands)
          return Value(arith::RemUIOp::create(b, loc, operands));
        return floatOrInt<arith::RemFOp, arith::RemSIOp>(b, loc, operands);
      })
      .Case([&](shlo::MaximumOp) {
        if (unsignedOperands && !x.getType().isInteger(1))
          return Value(arith::MaxUIOp::create(b, loc, operands));
        return buildMax(b, loc, operands[0], operands[1]);
      })
      .Case([&](shlo::MinimumOp) {
        if (unsignedOperands && !x.getType().isInteger(1))
          return Value(arith::MinUIOp::create(b, loc, operands));
        return buildMin(b, loc, operands[0], operands[1]);
      })
      .Case([&](shlo::PowerOp) -> Value {
        if (isFloatOp)
          return math::PowFOp::create(b, loc, operands);
        return math::IPowIOp::create(b, loc, operands);
      })
      .Case(
          [&](shlo::AndOp) { return arith::AndIOp::create(b, loc, operands); })
      .Case([&](shlo::OrOp) { return arith::OrIOp::create(b, loc, operands); })
      .Case(
          [&](shlo::XorOp) { return arith::XOrIOp::create(b, loc, operands); })
      .Case([&](shlo::ShiftLeftOp) {
        return buildShift(b, loc, arith::ShLIOp::create(b, loc, operands),
                          operands[1], createScalar(b, loc, x.getType(), 0));
      })
      .Case([&](shlo::ShiftRightArithmeticOp) {
        Value signs = arith::ShRSIOp::create(
            b, loc, x,
            createScalar(b, loc, x.getType(),
                         x.getType().getIntOrFloatBitWidth() - 1));
        return buildShift(b, loc, arith::ShRSIOp::create(b, loc, operands),
                          operands[1], signs);
      })
      .Case([&](shlo::ShiftRightLogicalOp) {
        return buildShift(b, loc, arith::ShRUIOp::create(b, loc, operands),
                          operands[1], createScalar(b, loc, x.getType(), 0));
      })
      .Case([&](shlo::Atan2Op) {
        return floatOnly(
            [&] { return math::Atan2Op::create(b, loc, operands); });
      })
      .Case([&](shlo::AbsOp) {
        return floatOrInt<math::AbsFOp, math::AbsIOp>(b, loc, x);
      })
      .Case([&](shlo::NegateOp) -> Value {
        if (isFloatOp)
          return arith::NegFOp::create(b, loc, x);
        return arith::SubIOp::create(b, loc,
                                     createScalar(b, loc, x.getType(), 0), x);
      })
      .Case([&](shlo::NotOp) -> Value {
        Value ones = x.getType().isInteger(1)
                         ? createScalar(b, loc, x.getType(), 1)
                         : createScalar(b, loc, x.getType(), -1);
        return arith::XOrIOp::create(b, loc, x, ones);
      })
      .Case([&](shlo::SignOp) { return buildSign(b, loc, x); })
      .Case([&](shlo::ExponentialOp) {
        return floatOnly([&] { return math::ExpOp::create(b, loc, x); });
      })
      .Case([&](shlo::ExponentialMinusOneOp) {
        return floatOnly([&] { return math::ExpM1Op::create(b, loc, x); });
      })
      .Case([&](shlo::LogOp) {
        return floatOnly([&] { return math::LogOp::create(b, loc, x); });
      })
      .Case([&](shlo::LogPlusOneOp) {
        return floatOnly([&] { return math::Log1pOp::create(b, loc, x); });
      })
      .Case([&](shlo::SqrtOp) {
        return floatOnly([&] { return math::SqrtOp::create(b, loc, x); });
      })
      .Case([&](shlo::RsqrtOp) {
        return floatOnly([&] { return math::RsqrtOp::create(b, loc, x); });
      })
      .Case([&](shlo::CbrtOp) {
        return floatOnly([&] { return math::CbrtOp::create(b, loc, x); });
      })
      .Case([&](shlo::TanhOp) {
        return floatOnly([&] { return math::TanhOp::create(b, loc, x); });
      })
      .Case([&](shlo::TanOp) {
        return floatOnly([&] { return math::TanOp::create(b, loc, x); });
      })
      .Case([&](shlo::CosineOp) {
        return floatOnly([&] { return math::CosOp::create(b, loc, x); });
      })
      .Case([&](shlo::SineOp) {
        return floatOnly([&] { return math::SinOp::create(b, loc, x); });
      })
      .Case([&](shlo::FloorOp) {
        return floatOnly([&] { return math::FloorOp::create(b, loc, x); });
      })
      .Case([&](shlo::CeilOp) {
        return floatOnly([&] { return math::CeilOp::create(b, loc, x); });
      })
      .Case([&](shlo::RoundNearestEvenOp) {
        return floatOnly([&] { return math::RoundEvenOp::create(b, loc, x); });
      })
      .Case([&](shlo::RoundNearestAfzOp) {
        return floatOnly([&] { return math::RoundOp::create(b, loc, x); });
      })
      .Case([&](shlo::LogisticOp) {
        return floatOnly([&]() -> Value {
          Value one = createScalar(b, loc, x.getType(), 1);
          Value e =
              math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
          return arith::DivFOp::create(b, loc, one,
                                       arith::AddFOp::create(b, loc, one, e));
        });
      })
      .Case([&](shlo::IsFiniteOp) {
        return floatOnly([&]() -> Value {
          Value inf = arith::ConstantOp::create(
              b, loc,
              b.getFloatAttr(
                  x.getType(),
                  APFloat::getInf(
                      cast<FloatType>(x.getType()).getFloatSemantics())));
          return arith::CmpFOp::create(b, loc, CmpFPredicate::ONE,
                                       math::AbsFOp::create(b, loc, x), inf);
        });
      })
      .Case([&](shlo::ConvertOp) -> Value {
        // Unsigned integers were made signless (markUnsigned): their values
        // widen with zeros and convert to and from floats as unsigned.
        Type from = x.getType();
        bool fromInt = isa<IntegerType>(from) && !from.isInteger(1);
        bool toInt = isa<IntegerType>(resultType) && !resultType.isInteger(1);
        if (unsignedOperands && fromInt && isa<FloatType>(resultType))
          return arith::UIToFPOp::create(b, loc, resultType, x);
        if (unsignedOperands && fromInt && toInt &&
            from.getIntOrFloatBitWidth() < resultType.getIntOrFloatBitWidth())
          return arith::ExtUIOp::create(b, loc, resultType, x);
        if (unsignedResults && isa<FloatType>(from) && toInt)
          return arith::FPToUIOp::create(b, loc, resultType, x);
        return castScalar(b, loc, x, resultType);
      })
      .Case([&](shlo::BitcastConvertOp) -> FailureOr<Value> {
        // Element types of one width only: other widths change the shape.
        if (!resultType.isIntOrFloat() ||
            resultType.getIntOrFloatBitWidth() !=
                x.getType().getIntOrFloatBitWidth())
          return failure();
        if (resultType == x.getType())
          return x;
        return arith::BitcastOp::create(b, loc, resultType, x).getResult();
      })
      .Case([&](chlo::ErfOp) {
        return floatOnly([&] { return math::ErfOp::create(b, loc, x); });
      })
      .Case([&](chlo::SquareOp) { return createMul(b, loc, x, x); })
      .Case([&](chlo::ErfcOp) {
        return floatOnly([&] { return math::ErfcOp::create(b, loc, x); });
      })
      .Case([&](chlo::ErfInvOp) {
        return floatOnly([&] { return buildErfInv(b, loc, x); });
      })
      .Case([&](shlo::CompareOp compare) {
        return buildCompare(b, loc, compare, operands[0], operands[1]);
      })
      .Case([&](shlo::SelectOp) {
        return arith::SelectOp::create(b, loc, operands[0], operands[1],
                                       operands[2]);
      })
      .Case([&](shlo::ClampOp) {
        return buildMin(b, loc, buildMax(b, loc, operands[1], operands[0]),
                        operands[2]);
      })
      .Default([](Operation *) { return failure(); });
}

FailureOr<SmallVector<Value>>
stablehlo_import::buildScalarRegion(OpBuilder &b, Region &region,
                                    ValueRange arguments) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), arguments);
  for (Operation &op : block) {
    Location loc = op.getLoc();
    if (auto ret = dyn_cast<shlo::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (Value value : ret.getResults())
        results.push_back(mapping.lookup(value));
      return results;
    }
    if (auto constant = dyn_cast<shlo::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat()) {
        op.emitError("only scalar constants are supported in a combiner");
        return failure();
      }
      mapping.map(
          constant.getResult(),
          arith::ConstantOp::create(
              b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>())));
      continue;
    }
    if (isa<shlo::BroadcastInDimOp, shlo::ReshapeOp>(op) &&
        cast<ShapedType>(op.getResult(0).getType()).getNumElements() == 1) {
      mapping.map(op.getResult(0), mapping.lookup(op.getOperand(0)));
      continue;
    }
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookup(operand));
    FailureOr<Value> result = buildScalarOp(b, loc, &op, operands);
    if (failed(result)) {
      op.emitError() << "'" << op.getName()
                     << "' is not supported in a combiner region";
      return failure();
    }
    mapping.map(op.getResult(0), *result);
  }
  region.getParentOp()->emitError("combiner region without a return");
  return failure();
}

RankedTensorType stablehlo_import::getStaticType(Operation *op, Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) {
    op->emitError() << "expected a tensor of static shape, got "
                    << value.getType();
    return nullptr;
  }
  return type;
}

std::optional<int64_t>
stablehlo_import::evaluateIndex(Value value,
                                const llvm::DenseMap<Value, int64_t> *known) {
  if (known)
    if (auto it = known->find(value); it != known->end())
      return it->second;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = dyn_cast<shlo::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return std::nullopt;
    return dense.getSplatValue<APInt>().getSExtValue();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (dense && dense.isSplat())
      return dense.getSplatValue<APInt>().getSExtValue();
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getInt();
    return std::nullopt;
  }
  if (isa<shlo::ConvertOp, shlo::ReshapeOp, shlo::BroadcastInDimOp>(op))
    return evaluateIndex(op->getOperand(0), known);
  SmallVector<int64_t> operands;
  for (Value operand : op->getOperands()) {
    std::optional<int64_t> value = evaluateIndex(operand, known);
    if (!value)
      return std::nullopt;
    operands.push_back(*value);
  }
  return TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([&](shlo::AddOp) { return operands[0] + operands[1]; })
      .Case([&](shlo::SubtractOp) { return operands[0] - operands[1]; })
      .Case([&](shlo::MultiplyOp) { return operands[0] * operands[1]; })
      .Case([&](shlo::MaximumOp) { return std::max(operands[0], operands[1]); })
      .Case([&](shlo::MinimumOp) { return std::min(operands[0], operands[1]); })
      .Case([&](shlo::ClampOp) {
        return std::min(std::max(operands[1], operands[0]), operands[2]);
      })
      .Case([&](shlo::SelectOp) {
        return operands[0] ? operands[1] : operands[2];
      })
      .Case([&](shlo::CompareOp compare) -> std::optional<int64_t> {
        int64_t l = operands[0], r = operands[1];
        switch (compare.getComparisonDirection()) {
        case shlo::ComparisonDirection::EQ:
          return l == r;
        case shlo::ComparisonDirection::NE:
          return l != r;
        case shlo::ComparisonDirection::GE:
          return l >= r;
        case shlo::ComparisonDirection::GT:
          return l > r;
        case shlo::ComparisonDirection::LE:
          return l <= r;
        case shlo::ComparisonDirection::LT:
          return l < r;
        }
        return std::nullopt;
      })
      .Default([](Operation *) { return std::nullopt; });
}

Value stablehlo_import::extractScalar(OpBuilder &b, Location loc,
                                      Value tensor) {
  Attribute value;
  if (matchPattern(tensor, m_Constant(&value)))
    if (auto dense = dyn_cast<DenseElementsAttr>(value);
        dense && dense.isSplat())
      return arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, zeros);
}

namespace {
/// An element-wise op on tensors of one shape (scalar operands of clamp
/// and select broadcast).
FailureOr<SmallVector<Value>> convertElementwise(Operation *op, OpBuilder &b) {
  RankedTensorType type = getStaticType(op, op->getResult(0));
  if (!type)
    return failure();
  for (Value operand : op->getOperands()) {
    RankedTensorType operandType = getStaticType(op, operand);
    if (!operandType)
      return failure();
    if (operandType.getRank() != 0 &&
        operandType.getShape() != type.getShape()) {
      op->emitError() << "operand of shape " << operandType
                      << " does not match the result " << type;
      return failure();
    }
  }
  bool supported = true;
  Value result = buildElementwise(
      b, op->getLoc(), op->getOperands(), type.getElementType(),
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        FailureOr<Value> scalar = buildScalarOp(nb, loc, op, args);
        if (succeeded(scalar))
          return *scalar;
        supported = false;
        return args[0];
      },
      type.getShape());
  if (!supported) {
    result.getDefiningOp()->erase();
    op->emitError() << "'" << op->getName() << "' is not supported on "
                    << op->getOperand(0).getType();
    return failure();
  }
  return SmallVector<Value>{result};
}
} // namespace

void stablehlo_import::addElementwiseConverters(ConverterTable &table) {
  for (StringRef name : {"add",
                         "subtract",
                         "multiply",
                         "divide",
                         "remainder",
                         "maximum",
                         "minimum",
                         "power",
                         "and",
                         "or",
                         "xor",
                         "shift_left",
                         "shift_right_arithmetic",
                         "shift_right_logical",
                         "atan2",
                         "abs",
                         "negate",
                         "not",
                         "sign",
                         "exponential",
                         "exponential_minus_one",
                         "log",
                         "log_plus_one",
                         "sqrt",
                         "rsqrt",
                         "cbrt",
                         "tanh",
                         "tan",
                         "cosine",
                         "sine",
                         "floor",
                         "ceil",
                         "round_nearest_even",
                         "round_nearest_afz",
                         "logistic",
                         "is_finite",
                         "convert",
                         "bitcast_convert",
                         "compare",
                         "select",
                         "clamp"})
    table[("stablehlo." + name).str()] = convertElementwise;
  table["chlo.erf"] = convertElementwise;
  table["chlo.erfc"] = convertElementwise;
  table["chlo.erf_inv"] = convertElementwise;
  table["chlo.square"] = convertElementwise;
}
