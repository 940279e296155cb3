//===- Autodiff.cpp - Reverse-mode differentiation on tensors -------------===//
//
// Structured ops are differentiated once, generically, from their indexing
// maps and payload: the gradient of an input is a structured op over the
// same loops that recomputes the payload, differentiates it as a scalar
// program and accumulates into the input along its map; loops the map does
// not use become reductions. So the gradient of a matmul is a contraction,
// that of a broadcast a reduction, and every gradient gets its SBP rules
// from its maps like the forward ops. A tensor read inside a payload (an
// embedding lookup) gets a one-hot contraction over the tensor's
// dimensions. Explicit rules cover the ops that move data (reshapes,
// slices, padding, concatenation), softmax, element-wise arith and math ops
// on tensors, scf.for, whose carried values are saved at every iteration
// and whose body is recomputed from them in the backward loop (Chen et
// al.'s checkpointing at layer boundaries), and scf.while, whose trip count
// is not known when the backward is built, so nothing is saved and each
// iteration's start is recomputed from the first. No gradient flows
// through the results of an op marked `sbp.stop_gradient`.
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/Autodiff.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Dialect/Sbp/Utils/MaskedReduction.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace mlir;
using namespace mlir::sbp;

Value sbp::createFilledTensor(OpBuilder &builder, Location loc,
                              RankedTensorType type, double value) {
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  Value scalar = arith::ConstantOp::create(
      builder, loc, builder.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(builder, loc, scalar, empty).getResult(0);
}

namespace {

bool isFloatLike(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

/// A constant of `type` (a float or a tensor of floats) equal to `value`.
Value getConstant(OpBuilder &b, Location loc, Type type, double value) {
  auto attr = b.getFloatAttr(getElementTypeOrSelf(type), value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, attr));
  return arith::ConstantOp::create(b, loc, attr);
}

/// The zero adjoint of a value of `type`: a filled tensor, or a scalar.
Value createZeros(OpBuilder &b, Location loc, Type type) {
  if (auto tensorType = dyn_cast<RankedTensorType>(type))
    return createFilledTensor(b, loc, tensorType, 0);
  return getConstant(b, loc, type, 0);
}

/// Whether `op`, inside a payload or on tensors, has a rule below.
bool hasElementwiseRule(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
             arith::ExtFOp, arith::TruncFOp, math::ExpOp, math::LogOp,
             math::Log1pOp, math::TanhOp, math::ErfOp, math::SqrtOp,
             math::RsqrtOp, math::PowFOp, math::AbsFOp, math::SinOp,
             math::CosOp, math::TanOp, math::AtanOp, math::SinhOp, math::CoshOp,
             math::Exp2Op, math::ExpM1Op, math::Log2Op, math::Log10Op,
             math::ErfcOp, math::CbrtOp, math::FmaOp, math::AsinOp,
             math::AcosOp, math::AsinhOp, math::AcoshOp, math::AtanhOp,
             math::Atan2Op, arith::RemFOp, math::CopySignOp, math::ClampFOp,
             math::FPowIOp>(op) ||
         // No gradient flows through comparisons, integer and index
         // arithmetic, casts from integers, constants and roundings (zero
         // almost everywhere).
         llvm::none_of(op->getResultTypes(), isFloatLike) ||
         isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::BitcastOp, math::FloorOp, math::CeilOp, math::RoundOp,
             math::RoundEvenOp, math::TruncOp>(op);
}

/// The adjoints of the operands of the element-wise op `op` (on scalars or
/// tensors) from the adjoint `dy` of its result; null where an operand has
/// none. `op` must have a rule (hasElementwiseRule). With `strongZero`,
/// products with `dy` are exactly 0 where `dy` is.
SmallVector<Value> getElementwiseAdjoints(OpBuilder &b, Operation *op, Value dy,
                                          bool strongZero = true) {
  Location loc = op->getLoc();
  SmallVector<Value> adjoints(op->getNumOperands());
  if (!isFloatLike(dy.getType()) || isa<arith::ConstantOp>(op))
    return adjoints;
  Value y = op->getResult(0);
  auto mul = [&](Value x, Value z) -> Value {
    return arith::MulFOp::create(b, loc, x, z);
  };
  auto div = [&](Value x, Value z) -> Value {
    return arith::DivFOp::create(b, loc, x, z);
  };
  auto neg = [&](Value x) -> Value { return arith::NegFOp::create(b, loc, x); };
  auto constant = [&](double value) {
    return getConstant(b, loc, dy.getType(), value);
  };
  // `dy` times a partial derivative, exactly 0 where `dy` is: a zero
  // adjoint (the branch a select did not take) must not meet an infinite
  // partial there and make NaN (a "strong zero"). Imported programs take
  // such branches: an erf as a select between a series in x^2 and one in
  // 1/x^2, which overflows near 0.
  auto scale = [&](Value partial, bool divide = false) -> Value {
    Value product = divide ? div(dy, partial) : mul(dy, partial);
    if (!strongZero || matchPattern(partial, m_Constant()))
      return product;
    Value zero = constant(0);
    Value isZero =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, dy, zero);
    return arith::SelectOp::create(b, loc, isZero, zero, product);
  };
  auto select = [&](Value condition, bool toFirst) -> Value {
    Value zero = constant(0);
    return arith::SelectOp::create(b, loc, condition, toFirst ? dy : zero,
                                   toFirst ? zero : dy);
  };
  auto compare = [&](arith::CmpFPredicate predicate) -> Value {
    return arith::CmpFOp::create(b, loc, predicate, op->getOperand(0),
                                 op->getOperand(1));
  };
  Value x = op->getNumOperands() ? op->getOperand(0) : Value();
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](arith::AddFOp) { adjoints = {dy, dy}; })
      .Case([&](arith::SubFOp) { adjoints = {dy, neg(dy)}; })
      .Case([&](arith::MulFOp o) {
        adjoints = {scale(o.getRhs()), scale(o.getLhs())};
      })
      .Case([&](arith::DivFOp o) {
        adjoints = {scale(o.getRhs(), /*divide=*/true),
                    neg(scale(div(y, o.getRhs())))};
      })
      .Case([&](arith::NegFOp) { adjoints = {neg(dy)}; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
        Value first = compare(arith::CmpFPredicate::OGE);
        adjoints = {select(first, true), select(first, false)};
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
        Value first = compare(arith::CmpFPredicate::OLE);
        adjoints = {select(first, true), select(first, false)};
      })
      .Case([&](arith::SelectOp o) {
        adjoints = {Value(), select(o.getCondition(), true),
                    select(o.getCondition(), false)};
      })
      .Case([&](arith::ExtFOp) {
        adjoints = {arith::TruncFOp::create(b, loc, x.getType(), dy)};
      })
      .Case([&](arith::TruncFOp) {
        adjoints = {arith::ExtFOp::create(b, loc, x.getType(), dy)};
      })
      .Case([&](math::ExpOp) { adjoints = {scale(y)}; })
      .Case([&](math::LogOp) { adjoints = {scale(x, /*divide=*/true)}; })
      .Case([&](math::Log1pOp) {
        adjoints = {scale(arith::AddFOp::create(b, loc, x, constant(1)),
                          /*divide=*/true)};
      })
      .Case([&](math::TanhOp) {
        adjoints = {
            scale(arith::SubFOp::create(b, loc, constant(1), mul(y, y)))};
      })
      .Case([&](math::ErfOp) {
        // d erf(x) = 2/sqrt(pi) exp(-x^2)
        Value gauss = math::ExpOp::create(b, loc, neg(mul(x, x)));
        adjoints = {scale(mul(constant(2 / std::sqrt(M_PI)), gauss))};
      })
      .Case([&](math::SqrtOp) { adjoints = {scale(div(constant(0.5), y))}; })
      .Case([&](math::RsqrtOp) {
        adjoints = {scale(mul(constant(-0.5), mul(y, mul(y, y))))};
      })
      .Case([&](math::PowFOp o) {
        Value exponent = o.getRhs();
        Value lower = math::PowFOp::create(
            b, loc, x, arith::SubFOp::create(b, loc, exponent, constant(1)));
        adjoints = {scale(mul(exponent, lower)),
                    scale(mul(y, math::LogOp::create(b, loc, x)))};
      })
      .Case([&](math::AbsFOp) {
        Value negative = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLT, x, constant(0));
        adjoints = {arith::SelectOp::create(b, loc, negative, neg(dy), dy)};
      })
      .Case([&](math::SinOp) {
        adjoints = {scale(math::CosOp::create(b, loc, x))};
      })
      .Case([&](math::CosOp) {
        adjoints = {neg(scale(math::SinOp::create(b, loc, x)))};
      })
      .Case([&](math::TanOp) {
        adjoints = {
            scale(arith::AddFOp::create(b, loc, constant(1), mul(y, y)))};
      })
      .Case([&](math::AtanOp) {
        adjoints = {scale(arith::AddFOp::create(b, loc, constant(1), mul(x, x)),
                          /*divide=*/true)};
      })
      .Case([&](math::SinhOp) {
        adjoints = {scale(math::CoshOp::create(b, loc, x))};
      })
      .Case([&](math::CoshOp) {
        adjoints = {scale(math::SinhOp::create(b, loc, x))};
      })
      .Case([&](math::Exp2Op) { adjoints = {scale(mul(y, constant(M_LN2)))}; })
      .Case([&](math::ExpM1Op) {
        adjoints = {scale(arith::AddFOp::create(b, loc, y, constant(1)))};
      })
      .Case([&](math::Log2Op) {
        adjoints = {scale(mul(x, constant(M_LN2)), /*divide=*/true)};
      })
      .Case([&](math::Log10Op) {
        adjoints = {scale(mul(x, constant(M_LN10)), /*divide=*/true)};
      })
      .Case([&](math::ErfcOp) {
        Value gauss = math::ExpOp::create(b, loc, neg(mul(x, x)));
        adjoints = {scale(mul(constant(-2 / std::sqrt(M_PI)), gauss))};
      })
      .Case([&](math::CbrtOp) {
        adjoints = {scale(mul(constant(3), mul(y, y)), /*divide=*/true)};
      })
      .Case<math::AsinOp, math::AcosOp>([&](Operation *o) {
        // d asin(x) = 1 / sqrt(1 - x^2) = -d acos(x)
        Value root = math::SqrtOp::create(
            b, loc, arith::SubFOp::create(b, loc, constant(1), mul(x, x)));
        Value adjoint = scale(root, /*divide=*/true);
        adjoints = {isa<math::AcosOp>(o) ? neg(adjoint) : adjoint};
      })
      .Case<math::AsinhOp, math::AcoshOp>([&](Operation *o) {
        // d asinh(x) = 1 / sqrt(x^2 + 1), d acosh(x) = 1 / sqrt(x^2 - 1)
        Value root = math::SqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, mul(x, x),
                                  constant(isa<math::AsinhOp>(o) ? 1 : -1)));
        adjoints = {scale(root, /*divide=*/true)};
      })
      .Case([&](math::AtanhOp) {
        adjoints = {scale(arith::SubFOp::create(b, loc, constant(1), mul(x, x)),
                          /*divide=*/true)};
      })
      .Case([&](math::FmaOp o) {
        adjoints = {scale(o.getB()), scale(o.getA()), dy};
      })
      .Case([&](math::Atan2Op o) {
        // atan2(u, v): d/du = v / (u^2 + v^2), d/dv = -u / (u^2 + v^2)
        Value norm = arith::AddFOp::create(b, loc, mul(o.getLhs(), o.getLhs()),
                                           mul(o.getRhs(), o.getRhs()));
        adjoints = {scale(div(o.getRhs(), norm)),
                    neg(scale(div(o.getLhs(), norm)))};
      })
      .Case([&](arith::RemFOp o) {
        // fmod: u - trunc(u / v) * v
        Value quotient =
            math::TruncOp::create(b, loc, div(o.getLhs(), o.getRhs()));
        adjoints = {dy, neg(scale(quotient))};
      })
      .Case([&](math::CopySignOp o) {
        // |u| with the sign of v: the sign of u times that of v; none
        // flows into v (zero almost everywhere).
        auto sign = [&](Value v) -> Value {
          return math::CopySignOp::create(b, loc, constant(1), v);
        };
        adjoints = {scale(mul(sign(o.getLhs()), sign(o.getRhs()))), Value()};
      })
      .Case([&](math::ClampFOp o) {
        // maximumf(minimumf(value, max), min), as it is lowered, ties going
        // to the first operand as for those ops.
        Value belowMax = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLE, o.getValue(), o.getMax());
        Value clipped =
            arith::SelectOp::create(b, loc, belowMax, o.getValue(), o.getMax());
        Value aboveMin = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGE, clipped, o.getMin());
        Value toClipped = select(aboveMin, true);
        adjoints = {
            arith::SelectOp::create(b, loc, belowMax, toClipped, constant(0)),
            select(aboveMin, false),
            arith::SelectOp::create(b, loc, belowMax, constant(0), toClipped)};
      })
      .Case([&](math::FPowIOp o) {
        // n x^(n-1); the integer exponent takes none.
        Value n = o.getRhs();
        Value one = arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(b.getOneAttr(n.getType())));
        Value lower = math::FPowIOp::create(
            b, loc, x, arith::SubIOp::create(b, loc, n, one));
        adjoints = {
            scale(mul(arith::SIToFPOp::create(b, loc, x.getType(), n), lower))};
      })
      .Default([](Operation *) {});
  // Adjoints only flow into float operands.
  for (auto [adjoint, operand] : llvm::zip(adjoints, op->getOperands()))
    if (adjoint && !isFloatLike(operand.getType()))
      adjoint = Value();
  return adjoints;
}

/// Unit dimensions that an indexing map addresses by the constant 0 (an
/// operand broadcast along them) are left out of a gradient and put back by
/// `tensor.expand_shape`.
Value expandUnitDims(OpBuilder &b, Location loc, Value value,
                     RankedTensorType type, ArrayRef<bool> dropped) {
  if (!llvm::is_contained(dropped, true))
    return value;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (auto [dim, isDropped] : llvm::enumerate(dropped)) {
    pending.push_back(dim);
    if (!isDropped) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    llvm::append_range(groups.back(), pending);
  return tensor::ExpandShapeOp::create(b, loc, type, value, groups);
}

/// The adjoint of a softmax's input from its result `y` and the result's
/// adjoint `dy`: `y * (dy - sum(dy * y))`, the sum over `dim`.
Value buildSoftmaxAdjoint(OpBuilder &b, Location loc, Value y, Value dy,
                          int64_t dim) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(y.getType());
  int64_t rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rows = identity.dropResult(dim);
  SmallVector<int64_t> rowShape(type.getShape());
  rowShape.erase(rowShape.begin() + dim);
  auto rowType = RankedTensorType::get(rowShape, type.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[dim] = utils::IteratorType::reduction;
  Value dots =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowType}, ValueRange{dy, y},
          ValueRange{createFilledTensor(b, loc, rowType, 0)},
          SmallVector<AffineMap>{identity, identity, rows}, iterators,
          [](OpBuilder &nb, Location bodyLoc, ValueRange args) {
            Value product =
                arith::MulFOp::create(nb, bodyLoc, args[0], args[1]);
            linalg::YieldOp::create(nb, bodyLoc,
                                    ValueRange{arith::AddFOp::create(
                                        nb, bodyLoc, args[2], product)});
          })
          .getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{y, dy, dots},
             ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(),
                                                type.getElementType())},
             SmallVector<AffineMap>{identity, identity, rows, identity},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &nb, Location bodyLoc, ValueRange args) {
               Value centered =
                   arith::SubFOp::create(nb, bodyLoc, args[1], args[2]);
               linalg::YieldOp::create(nb, bodyLoc,
                                       ValueRange{arith::MulFOp::create(
                                           nb, bodyLoc, args[0], centered)});
             })
      .getResult(0);
}

/// Where a loop keeps the value of `type` that iteration `iteration`
/// started from: row `iteration` of a tensor with one more leading dimension.
struct IterationSlice {
  IterationSlice(OpBuilder &b, OpFoldResult iteration, RankedTensorType type)
      : offsets(type.getRank() + 1, b.getIndexAttr(0)),
        strides(type.getRank() + 1, b.getIndexAttr(1)) {
    offsets[0] = iteration;
    sizes.push_back(b.getIndexAttr(1));
    for (int64_t size : type.getShape())
      sizes.push_back(b.getIndexAttr(size));
  }
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

/// How a structured op's result accumulates: its combiner (`out + p`,
/// `max(out, p)`, `out * p`, the overwrite `select(c, p, out)`; null for an
/// output written once per iteration) and, for a product, per result
/// element, the count of zero partials and the product of the nonzero
/// ones, from which each partial's factor (the product of the others and
/// the init) is built; for an overwrite, per result element, the last
/// iteration that wrote it (-1 for none).
struct Reduction {
  Operation *combiner;
  Value zeros = {}, nonzeroProduct = {};
  Value lastWriter = {};
  /// For a max or min: per element, how many partials and inits equal it.
  Value ties = {};
};

/// The ops of the payload `body` that `root` is computed from.
llvm::SmallPtrSet<Operation *, 8> getPayloadSlice(Block *body, Value root) {
  llvm::SmallPtrSet<Operation *, 8> slice;
  if (Operation *def = root.getDefiningOp(); def && def->getBlock() == body)
    slice.insert(def);
  for (Operation &inner : llvm::reverse(body->without_terminator()))
    if (slice.contains(&inner))
      for (Value operand : inner.getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == body)
          slice.insert(def);
  return slice;
}

/// The one input argument of `op`'s payload that `index` is computed from,
/// with the payload ops computing it in `slice`; null where it reads the
/// loops' indices, another argument or a tensor, or is no op's result.
BlockArgument getSoleInput(linalg::LinalgOp op, Value index,
                           llvm::SmallPtrSet<Operation *, 8> &slice) {
  Block *body = op.getBlock();
  if (!index.getDefiningOp() || index.getDefiningOp()->getBlock() != body)
    return {};
  slice = getPayloadSlice(body, index);
  BlockArgument input;
  for (Operation *inner : slice) {
    if (isa<linalg::IndexOp, tensor::ExtractOp>(inner))
      return {};
    for (Value operand : inner->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != body)
        continue;
      if (arg.getArgNumber() >= op.getNumDpsInputs() || (input && arg != input))
        return {};
      input = arg;
    }
  }
  return input;
}

/// The position of the current iteration among the reduction loops of
/// `op`, in the order the loops run (row-major over them), as an i64.
Value buildReductionPosition(OpBuilder &b, Location loc, linalg::LinalgOp op) {
  Value position = arith::ConstantIntOp::create(b, loc, 0, 64);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::reduction)
      continue;
    Value index = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, loop));
    position = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, position,
            arith::ConstantIntOp::create(b, loc, ranges[loop], 64)),
        index);
  }
  return position;
}

/// Whether output `result` of `op` is overwritten where a condition holds
/// (`select(c, p, out)`, `p` not read from `out`: a StableHLO scatter that
/// sets), returning the select.
arith::SelectOp matchOverwrite(linalg::LinalgOp op, unsigned result) {
  BlockArgument out = op.getRegionOutputArgs()[result];
  auto select = op.getBlock()
                    ->getTerminator()
                    ->getOperand(result)
                    .getDefiningOp<arith::SelectOp>();
  if (!select || select.getFalseValue() != out || !out.hasOneUse() ||
      !isa<FloatType>(out.getType()))
    return {};
  // The condition is computed from the inputs and the indices alone.
  Value condition = select.getCondition();
  auto readsOutput = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == op.getBlock() &&
           arg.getArgNumber() >= op.getNumDpsInputs();
  };
  if (readsOutput(condition) ||
      llvm::any_of(getPayloadSlice(op.getBlock(), condition),
                   [&](Operation *inner) {
                     return llvm::any_of(inner->getOperands(), readsOutput);
                   }))
    return {};
  return select;
}

class Differentiator {
public:
  explicit Differentiator(OpBuilder &builder) : b(builder) {}

  /// Marks the values computed from `seeds` in `block` as varied (those
  /// whose adjoints are built), and makes the loops among them save what
  /// their backward loops recompute from.
  void prepare(ArrayRef<Value> seeds, Block &block);

  /// Builds the adjoints of the operands of `ops`, last to first, from the
  /// adjoints of their results.
  LogicalResult backpropagate(ArrayRef<Operation *> ops);

  void accumulate(Value value, Value adjoint);
  Value getAdjoint(Value value) const { return adjoints.lookup(value); }
  bool isVaried(Value value) const { return varied.contains(value); }
  bool savesIterations(Operation *loop) const {
    return savedIterations.contains(loop);
  }

private:
  void markVaried(ArrayRef<Value> seeds, Block &block);
  /// Makes `loop` also yield, per carried value, a tensor of its value at
  /// the start of every iteration; returns the new loop.
  scf::ForOp saveIterations(scf::ForOp loop);
  /// Replaces `loop`, `while (a = init) { f, c = before(a); if (!c) break;
  /// a = after(f) }`, by the same loop over `f`, its first `before` peeled:
  /// `f, c = before(init); while (c) { f, c = before(after(f)) }`, counting
  /// the trips. Its backward recomputes the state of iteration k from the
  /// peeled one.
  void peelWhile(scf::WhileOp loop);
  LogicalResult differentiate(Operation *op);
  LogicalResult differentiateStructured(linalg::LinalgOp op);
  LogicalResult differentiateLoop(scf::ForOp loop);
  LogicalResult differentiateWhile(scf::WhileOp loop);
  /// Ends the body of a backward loop, into which `b` has just cloned one
  /// forward iteration after `marker`: `next` is what that iteration hands
  /// the next one, `starts` the values it started from (`carried` the
  /// positions of `next` they become), `captured` the varied values it
  /// reads from above, `args` the backward loop's iter args (the adjoints
  /// of `next` at `carried`, then the sums of the captured values').
  /// Yields the starts' adjoints, then the captured values' sums.
  LogicalResult backpropagateIteration(Location loc, ValueRange next,
                                       ArrayRef<Value> starts,
                                       ArrayRef<unsigned> carried,
                                       ArrayRef<Value> captured,
                                       ValueRange args, Operation *marker);
  /// A branch on a condition: the same branch backward, each side
  /// recomputing its forward ops and differentiating them.
  LogicalResult differentiateIf(scf::IfOp op);
  /// The varied values (tensors and scalars) that `op`'s regions read from
  /// above, whose adjoints the regions' backward sums.
  SmallVector<Value> getVariedCaptures(Operation *op);
  /// The structured op computing the adjoint of the input or init
  /// `operand` of `op` (`extract` null), or of the tensor that `extract`
  /// reads inside its payload: whatever its indices (loops, constants,
  /// repeated loops, sums of loops, values of the payload).
  Value buildStructuredAdjoint(linalg::LinalgOp op, ArrayRef<Value> dys,
                               ArrayRef<Reduction> reductions,
                               OpOperand *operand, tensor::ExtractOp extract);
  /// A reduction over `op`'s loops into tensors of result `result`'s type,
  /// starting from `inits`: its payload recomputes the partial that
  /// `combiner` folds into that result and `combine` adds it to the
  /// accumulators, given `extra` (read at the result's map) too.
  ValueRange buildPartialReduction(
      linalg::LinalgOp op, unsigned result, Operation *combiner,
      ValueRange inits, ValueRange extra,
      function_ref<SmallVector<Value>(OpBuilder &, Location, Value partial,
                                      ValueRange extra,
                                      ValueRange accumulators)>
          combine);
  /// For result `result` of the max or min reduction `op`: per element,
  /// the count of partials and inits equal to it, which share its adjoint.
  Value buildTies(linalg::LinalgOp op, unsigned result, Operation *combiner);
  /// The zero count and nonzero product of result `result` of the product
  /// reduction `op`, whose combiner is `combiner`.
  std::pair<Value, Value> buildProductFactors(linalg::LinalgOp op,
                                              unsigned result,
                                              Operation *combiner);
  /// Per element of result `result` of `op`, whose payload overwrites it
  /// through `select`: the last iteration (buildReductionPosition) that
  /// did, or -1.
  Value buildLastWriter(linalg::LinalgOp op, unsigned result,
                        arith::SelectOp select);
  /// The adjoint of the table that `extract` reads when `op` is a gather
  /// (its one result is `table[row(ids[...]), ...]`, the row computed from
  /// the ids alone, the other indices the loops'): the contraction of the
  /// one-hot of the ids with the result's adjoint, or null for another op.
  Value buildGatherAdjoint(linalg::LinalgOp op, ArrayRef<Value> dys,
                           ArrayRef<Reduction> reductions,
                           tensor::ExtractOp extract);

  OpBuilder &b;
  DenseSet<Value> varied;
  DenseMap<Value, Value> adjoints;
  /// Per loop, the tensors holding each carried value of every iteration.
  DenseMap<Operation *, SmallVector<Value>> savedIterations;
  /// The loops peelWhile built.
  llvm::SmallPtrSet<Operation *, 4> peeledWhiles;
};

void Differentiator::markVaried(ArrayRef<Value> seeds, Block &block) {
  varied.clear();
  varied.insert(seeds.begin(), seeds.end());
  for (Operation &op : block) {
    bool depends = llvm::any_of(op.getOperands(),
                                [&](Value v) { return varied.contains(v); });
    if (!depends && op.getNumRegions()) {
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(op.getRegions(), captured);
      depends =
          llvm::any_of(captured, [&](Value v) { return varied.contains(v); });
    }
    // Constants to differentiation end the path from the seeds.
    if (depends && !op.hasAttr(SbpDialect::getStopGradientAttrName()))
      for (Value result : op.getResults())
        if (isFloatLike(result.getType()))
          varied.insert(result);
  }
}

/// The sum of the elements of `tensor` (one reduction over every loop), of
/// those only where `kept`, given the loops' indices, is true when given.
Value sumElements(
    OpBuilder &b, Location loc, Value tensor,
    function_ref<Value(OpBuilder &, Location, ValueRange)> kept = nullptr) {
  auto type = cast<RankedTensorType>(tensor.getType());
  MLIRContext *ctx = b.getContext();
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  AffineMap all = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  AffineMap none = AffineMap::get(type.getRank(), 0, ctx);
  auto sum = linalg::GenericOp::create(
      b, loc, TypeRange{scalarType}, ValueRange{tensor},
      ValueRange{createFilledTensor(b, loc, scalarType, 0)},
      ArrayRef<AffineMap>{all, none},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::reduction),
      [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
        Value element = args[0];
        if (kept) {
          SmallVector<Value> indices;
          for (int64_t dim = 0; dim < type.getRank(); ++dim)
            indices.push_back(linalg::IndexOp::create(nb, bodyLoc, dim));
          element = arith::SelectOp::create(
              nb, bodyLoc, kept(nb, bodyLoc, indices), element,
              getConstant(nb, bodyLoc, element.getType(), 0));
        }
        linalg::YieldOp::create(
            nb, bodyLoc,
            arith::AddFOp::create(nb, bodyLoc, args[1], element).getResult());
      });
  return tensor::ExtractOp::create(b, loc, sum.getResult(0), ValueRange{});
}

/// The sum of `dy`, the adjoint of `pad`'s result, over the elements that
/// `pad` adds (outside the source's slice).
Value buildPaddingAdjoint(OpBuilder &b, tensor::PadOp pad, Value dy) {
  return sumElements(
      b, pad.getLoc(), dy,
      [&](OpBuilder &nb, Location loc, ValueRange indices) -> Value {
        Value inside = arith::ConstantIntOp::create(nb, loc, 1, 1);
        for (auto [at, low, size] : llvm::zip(indices, pad.getStaticLow(),
                                              pad.getSourceType().getShape())) {
          Value from = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::sge, at,
              arith::ConstantIndexOp::create(nb, loc, low));
          Value to = arith::CmpIOp::create(
              nb, loc, arith::CmpIPredicate::slt, at,
              arith::ConstantIndexOp::create(nb, loc, low + size));
          inside = arith::AndIOp::create(
              nb, loc, inside, arith::AndIOp::create(nb, loc, from, to));
        }
        return arith::XOrIOp::create(
            nb, loc, inside, arith::ConstantIntOp::create(nb, loc, 1, 1));
      });
}

void Differentiator::accumulate(Value value, Value adjoint) {
  if (!adjoint || !isVaried(value))
    return;
  Value &entry = adjoints[value];
  entry = entry ? arith::AddFOp::create(b, adjoint.getLoc(), entry, adjoint)
                      .getResult()
                : adjoint;
}

/// Makes the float scalars that `op`'s payload reads from above (other than
/// constants) inputs of its own, read at every iteration, so that their
/// adjoints are built as any scalar input's: the sum over the iterations.
void captureScalarInputs(linalg::LinalgOp op) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  SmallVector<Value> scalars;
  for (Value value : above)
    if (isa<FloatType>(value.getType()) && !matchPattern(value, m_Constant()))
      scalars.push_back(value);
  if (scalars.empty())
    return;
  IRRewriter rewriter(op.getContext());
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    generic = *linalg::generalizeNamedOp(rewriter, op);
  unsigned numInputs = generic.getNumDpsInputs();
  SmallVector<Value> inputs(generic.getInputs());
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block *body = generic.getBody();
  for (auto [k, scalar] : llvm::enumerate(scalars)) {
    inputs.push_back(scalar);
    maps.insert(maps.begin() + numInputs + k,
                AffineMap::get(generic.getNumLoops(), 0, op.getContext()));
    BlockArgument argument =
        body->insertArgument(numInputs + k, scalar.getType(), scalar.getLoc());
    rewriter.replaceUsesWithIf(scalar, argument, [&](OpOperand &use) {
      return generic->isProperAncestor(use.getOwner());
    });
  }
  auto replacement = linalg::GenericOp::create(
      rewriter, generic.getLoc(), generic.getResultTypes(), inputs,
      generic.getOutputs(), maps, generic.getIteratorTypesArray());
  replacement->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  replacement.getRegion().takeBody(generic.getRegion());
  rewriter.replaceOp(generic, replacement);
}

void Differentiator::prepare(ArrayRef<Value> seeds, Block &block) {
  for (auto op : llvm::make_early_inc_range(block.getOps<linalg::LinalgOp>()))
    captureScalarInputs(op);
  markVaried(seeds, block);
  SmallVector<Operation *> loops;
  for (Operation &op : block)
    if (isa<scf::ForOp, scf::WhileOp>(op) &&
        llvm::any_of(op.getResults(), [&](Value v) { return isVaried(v); }))
      loops.push_back(&op);
  if (loops.empty())
    return;
  for (Operation *loop : loops) {
    if (auto forLoop = dyn_cast<scf::ForOp>(loop))
      saveIterations(forLoop);
    else
      peelWhile(cast<scf::WhileOp>(loop));
  }
  // The loops were replaced: their results are new values.
  markVaried(seeds, block);
}

scf::ForOp Differentiator::saveIterations(scf::ForOp loop) {
  unsigned numCarried = loop.getInitArgs().size();
  scf::ForOp newLoop = saveLoopIterations(b, loop);
  if (newLoop != loop)
    savedIterations[newLoop] =
        SmallVector<Value>(newLoop.getResults().drop_front(numCarried));
  return newLoop;
}

void Differentiator::peelWhile(scf::WhileOp loop) {
  Location loc = loop.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  Block *before = loop.getBeforeBody(), *after = loop.getAfterBody();
  scf::ConditionOp condition = loop.getConditionOp();
  unsigned numForwarded = loop.getNumResults();
  // `before` on `args`: the values it forwards, then its condition.
  auto cloneBefore = [&](OpBuilder &nb, ValueRange args) {
    IRMapping mapping;
    mapping.map(before->getArguments(), args);
    for (Operation &op : before->without_terminator())
      nb.clone(op, mapping);
    SmallVector<Value> results =
        llvm::map_to_vector(condition.getArgs(), [&](Value value) {
          return mapping.lookupOrDefault(value);
        });
    results.push_back(mapping.lookupOrDefault(condition.getCondition()));
    return results;
  };
  SmallVector<Value> inits = cloneBefore(b, loop.getInits());
  inits.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  SmallVector<Type> resultTypes(loop.getResultTypes());
  resultTypes.push_back(b.getIndexType());
  auto peeled = scf::WhileOp::create(
      b, loc, resultTypes, inits,
      [&](OpBuilder &nb, Location, ValueRange args) {
        SmallVector<Value> forwarded(args.take_front(numForwarded));
        forwarded.push_back(args.back());
        scf::ConditionOp::create(nb, loc, args[numForwarded], forwarded);
      },
      [&](OpBuilder &nb, Location, ValueRange args) {
        IRMapping mapping;
        mapping.map(after->getArguments(), args.take_front(numForwarded));
        for (Operation &op : after->without_terminator())
          nb.clone(op, mapping);
        SmallVector<Value> next = cloneBefore(
            nb, llvm::map_to_vector(after->getTerminator()->getOperands(),
                                    [&](Value value) {
                                      return mapping.lookupOrDefault(value);
                                    }));
        next.push_back(arith::AddIOp::create(
            nb, loc, args.back(), arith::ConstantIndexOp::create(nb, loc, 1)));
        scf::YieldOp::create(nb, loc, next);
      });
  loop->replaceAllUsesWith(peeled.getResults().take_front(numForwarded));
  loop.erase();
  peeledWhiles.insert(peeled);
}

LogicalResult Differentiator::backpropagate(ArrayRef<Operation *> ops) {
  for (Operation *op : llvm::reverse(ops)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value v) { return adjoints.contains(v); }))
      continue;
    if (failed(differentiate(op)))
      return failure();
  }
  return success();
}

LogicalResult Differentiator::differentiate(Operation *op) {
  Location loc = op->getLoc();
  Value dy = op->getNumResults() ? getAdjoint(op->getResult(0)) : Value();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](linalg::LinalgOp linalgOp) {
        return differentiateStructured(linalgOp);
      })
      .Case([&](scf::ForOp loop) { return differentiateLoop(loop); })
      .Case([&](scf::WhileOp loop) { return differentiateWhile(loop); })
      .Case([&](scf::IfOp branch) { return differentiateIf(branch); })
      .Case([&](tensor::ExpandShapeOp o) {
        accumulate(o.getSrc(), tensor::CollapseShapeOp::create(
                                   b, loc, o.getSrcType(), dy,
                                   o.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::CollapseShapeOp o) {
        accumulate(o.getSrc(),
                   tensor::ExpandShapeOp::create(b, loc, o.getSrcType(), dy,
                                                 o.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::ExtractSliceOp o) {
        if (!isVaried(o.getSource()))
          return success();
        // When the source already has an adjoint, only the slice's
        // elements are added to it: a zero-padded whole would cost the
        // whole tensor per slice (per layer, in a loop over stacked
        // weights).
        Value into = adjoints.lookup(o.getSource());
        if (into)
          dy = arith::AddFOp::create(b, loc,
                                     tensor::ExtractSliceOp::create(
                                         b, loc, o.getType(), into,
                                         o.getMixedOffsets(), o.getMixedSizes(),
                                         o.getMixedStrides()),
                                     dy);
        else
          into = createFilledTensor(b, loc, o.getSourceType(), 0);
        adjoints[o.getSource()] = tensor::InsertSliceOp::create(
            b, loc, dy, into, o.getMixedOffsets(), o.getMixedSizes(),
            o.getMixedStrides());
        return success();
      })
      .Case([&](tensor::InsertSliceOp o) {
        accumulate(o.getSource(),
                   tensor::ExtractSliceOp::create(
                       b, loc, o.getSourceType(), dy, o.getMixedOffsets(),
                       o.getMixedSizes(), o.getMixedStrides()));
        if (isVaried(o.getDest())) {
          Value zeros = createFilledTensor(b, loc, o.getSourceType(), 0);
          accumulate(o.getDest(), tensor::InsertSliceOp::create(
                                      b, loc, zeros, dy, o.getMixedOffsets(),
                                      o.getMixedSizes(), o.getMixedStrides()));
        }
        return success();
      })
      .Case([&](tensor::ConcatOp o) {
        int64_t offset = 0, dim = o.getDim();
        auto type = cast<RankedTensorType>(dy.getType());
        for (Value input : o.getInputs()) {
          auto inputType = cast<RankedTensorType>(input.getType());
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[dim] = b.getIndexAttr(offset);
          SmallVector<OpFoldResult> sizes,
              strides(type.getRank(), b.getIndexAttr(1));
          for (int64_t size : inputType.getShape())
            sizes.push_back(b.getIndexAttr(size));
          if (isVaried(input))
            accumulate(input,
                       tensor::ExtractSliceOp::create(b, loc, inputType, dy,
                                                      offsets, sizes, strides));
          offset += inputType.getDimSize(dim);
        }
        return success();
      })
      .Case([&](linalg::SoftmaxOp o) {
        accumulate(o.getInput(), buildSoftmaxAdjoint(b, loc, o.getResult()[0],
                                                     dy, o.getDimension()));
        return success();
      })
      .Case([&](tensor::PadOp o) -> LogicalResult {
        SetVector<Value> captured;
        getUsedValuesDefinedAbove(o.getRegion(), captured);
        if (llvm::any_of(captured, [&](Value v) { return isVaried(v); })) {
          // One padding value at static pads (ONNX Pad's constant_value):
          // it takes the sum of the adjoint over the padded elements.
          Value value = o.getConstantPaddingValue();
          if (!value || !o.getLow().empty())
            return o.emitError("sbp-make-train-step: no gradient for a "
                               "padding value computed from the parameters "
                               "that varies over the border or pads of "
                               "dynamic size");
          accumulate(value, buildPaddingAdjoint(b, o, dy));
        }
        SmallVector<OpFoldResult> sizes, strides;
        for (int64_t size : o.getSourceType().getShape()) {
          sizes.push_back(b.getIndexAttr(size));
          strides.push_back(b.getIndexAttr(1));
        }
        accumulate(o.getSource(), tensor::ExtractSliceOp::create(
                                      b, loc, o.getSourceType(), dy,
                                      o.getMixedLowPad(), sizes, strides));
        return success();
      })
      .Case([&](tensor::ReshapeOp o) {
        // The step's types are static (sbp-make-train-step checks).
        auto sourceType = cast<RankedTensorType>(o.getSource().getType());
        auto shapeType =
            RankedTensorType::get({sourceType.getRank()}, b.getI64Type());
        Value shape = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(shapeType, sourceType.getShape()));
        accumulate(o.getSource(),
                   tensor::ReshapeOp::create(b, loc, sourceType, dy, shape));
        return success();
      })
      .Case([&](tensor::CastOp o) {
        accumulate(o.getSource(),
                   tensor::CastOp::create(b, loc, o.getSource().getType(), dy));
        return success();
      })
      .Case([&](AnnotateOp o) {
        accumulate(o.getInput(), dy);
        return success();
      })
      .Case([&](tensor::ExtractOp o) {
        // Zero but at the element read.
        accumulate(o.getTensor(),
                   tensor::InsertOp::create(
                       b, loc, dy,
                       createFilledTensor(b, loc, o.getTensor().getType(), 0),
                       o.getIndices()));
        return success();
      })
      .Case([&](tensor::SplatOp o) {
        accumulate(o.getInput(), sumElements(b, loc, dy));
        return success();
      })
      .Case([&](tensor::FromElementsOp o) {
        ArrayRef<int64_t> shape = o.getType().getShape();
        for (auto [k, element] : llvm::enumerate(o.getElements())) {
          SmallVector<Value> indices(shape.size());
          for (int64_t dim = shape.size() - 1, rest = k; dim >= 0; --dim) {
            indices[dim] =
                arith::ConstantIndexOp::create(b, loc, rest % shape[dim]);
            rest /= shape[dim];
          }
          accumulate(element, tensor::ExtractOp::create(b, loc, dy, indices));
        }
        return success();
      })
      .Default([&](Operation *) -> LogicalResult {
        if (op->getNumResults() != 1 || !hasElementwiseRule(op))
          return op->emitError("sbp-make-train-step: no gradient rule for '")
                 << op->getName() << "'";
        for (auto [operand, adjoint] :
             llvm::zip(op->getOperands(), getElementwiseAdjoints(b, op, dy)))
          accumulate(operand, adjoint);
        return success();
      });
}

LogicalResult Differentiator::differentiateStructured(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return op.emitError("sbp-make-train-step: no gradient for a structured "
                        "op on buffers");
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator())
    if (!hasElementwiseRule(&inner) &&
        !isa<tensor::ExtractOp, linalg::IndexOp>(inner))
      return inner.emitError("sbp-make-train-step: no gradient rule for '")
             << inner.getName() << "' in the payload of '" << op->getName()
             << "'";
  // A reduction accumulates `combine(out, partial)`; the partial gets the
  // result's adjoint (sums), where it equals the result (max and min) or
  // times the product of the others (products). Beside reductions, an op
  // may have outputs written once per iteration of all its loops (fused
  // element-wise results, no combiner), whose adjoint goes to the value
  // yielded.
  bool reduces = op.getNumParallelLoops() != op.getNumLoops();
  SmallVector<Reduction> reductions;
  SmallVector<BlockArgument> outputArgs(op.getRegionOutputArgs());
  if (reduces) {
    unmaskReductions(op);
    for (unsigned i = 0; i < outputArgs.size(); ++i) {
      if (outputArgs[i].use_empty() &&
          op.getIndexingMapMatchingResult(op->getResult(i)).isPermutation()) {
        reductions.push_back({nullptr});
        continue;
      }
      if (auto select = matchOverwrite(op, i)) {
        reductions.push_back({select});
        continue;
      }
      SmallVector<Operation *> chain;
      if (!matchReduction(outputArgs, i, chain) || chain.size() != 1 ||
          !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp,
               arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(
              chain.front()) ||
          !outputArgs[i].hasOneUse())
        return op.emitError("sbp-make-train-step: no gradient for a "
                            "reduction that is not a sum, product, max, min "
                            "or overwrite");
      reductions.push_back({chain.front()});
    }
  }
  SmallVector<Value> dys;
  for (Value result : op->getResults())
    dys.push_back(getAdjoint(result));
  for (auto [r, reduction] : llvm::enumerate(reductions)) {
    if (isa_and_nonnull<arith::MulFOp>(reduction.combiner) && dys[r])
      std::tie(reduction.zeros, reduction.nonzeroProduct) =
          buildProductFactors(op, r, reduction.combiner);
    if (auto select = dyn_cast_or_null<arith::SelectOp>(reduction.combiner);
        select && dys[r])
      reduction.lastWriter = buildLastWriter(op, r, select);
    // Partials (and the init) equal to a max or min share its adjoint: a
    // max of k copies of one value passes it the adjoint once.
    if (isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                        arith::MinNumFOp>(reduction.combiner) &&
        dys[r])
      reduction.ties = buildTies(op, r, reduction.combiner);
  }

  for (OpOperand &operand : op->getOpOperands()) {
    if (!isVaried(operand.get()))
      continue;
    if (!isa<RankedTensorType>(operand.get().getType())) {
      // A scalar input (a fill's value): the sum over every iteration,
      // built as for a tensor of rank 0.
      accumulate(operand.get(), tensor::ExtractOp::create(
                                    b, op.getLoc(),
                                    buildStructuredAdjoint(op, dys, reductions,
                                                           &operand, nullptr),
                                    ValueRange{}));
      continue;
    }
    if (op.isDpsInit(&operand) && reduces) {
      unsigned init = operand.getOperandNumber() - op.getNumDpsInputs();
      Operation *combiner = reductions[init].combiner;
      if (!combiner)
        continue; // Written, not read.
      if (!dys[init])
        continue;
      if (isa<arith::AddFOp>(combiner)) {
        accumulate(operand.get(), dys[init]);
        continue;
      }
      // Otherwise an element-wise op of the result's adjoint and tensors of
      // its shape: where the result is the init, shared with the partials
      // equal to it (max and min), or the product of the partials, zero
      // where one of them is; where no iteration overwrote the init.
      bool product = isa<arith::MulFOp>(combiner);
      bool overwrite = isa<arith::SelectOp>(combiner);
      auto type = cast<RankedTensorType>(dys[init].getType());
      AffineMap identity =
          AffineMap::getMultiDimIdentityMap(type.getRank(), op.getContext());
      SmallVector<Value, 3> factors = {reductions[init].zeros,
                                       reductions[init].nonzeroProduct};
      if (overwrite)
        factors = {reductions[init].lastWriter, reductions[init].lastWriter};
      else if (!product)
        factors = {op->getResult(init), operand.get(), reductions[init].ties};
      SmallVector<Value> inputs = {dys[init]};
      llvm::append_range(inputs, factors);
      accumulate(
          operand.get(),
          linalg::GenericOp::create(
              b, op.getLoc(), TypeRange{type}, inputs,
              ValueRange{tensor::EmptyOp::create(
                  b, op.getLoc(), type.getShape(), type.getElementType())},
              SmallVector<AffineMap>(inputs.size() + 1, identity),
              SmallVector<utils::IteratorType>(type.getRank(),
                                               utils::IteratorType::parallel),
              [&](OpBuilder &nb, Location loc, ValueRange args) {
                Value zero = getConstant(nb, loc, args[0].getType(), 0);
                Value adjoint;
                if (overwrite) {
                  Value none = arith::CmpIOp::create(
                      nb, loc, arith::CmpIPredicate::slt, args[1],
                      arith::ConstantIntOp::create(nb, loc, 0, 64));
                  adjoint =
                      arith::SelectOp::create(nb, loc, none, args[0], zero);
                } else if (product) {
                  Value none = arith::CmpFOp::create(
                      nb, loc, arith::CmpFPredicate::OEQ, args[1], zero);
                  Value all =
                      arith::SelectOp::create(nb, loc, none, args[2], zero);
                  adjoint = arith::MulFOp::create(nb, loc, args[0], all);
                } else {
                  Value kept = arith::CmpFOp::create(
                      nb, loc, arith::CmpFPredicate::OEQ, args[1], args[2]);
                  adjoint = arith::SelectOp::create(
                      nb, loc, kept,
                      arith::DivFOp::create(nb, loc, args[0], args[3]), zero);
                }
                linalg::YieldOp::create(nb, loc, adjoint);
              })
              .getResult(0));
      continue;
    }
    accumulate(operand.get(),
               buildStructuredAdjoint(op, dys, reductions, &operand, nullptr));
  }
  // Tensors read inside the payload.
  body->walk([&](tensor::ExtractOp extract) {
    if (!isVaried(extract.getTensor()))
      return;
    Value adjoint = buildGatherAdjoint(op, dys, reductions, extract);
    if (!adjoint)
      adjoint = buildStructuredAdjoint(op, dys, reductions, nullptr, extract);
    accumulate(extract.getTensor(), adjoint);
  });
  // Scalars the payload reads from above are inputs (prepare()).
  return success();
}

// Dividing the result by a partial would be wrong where that partial is
// zero (and lose the others' product there), so a product's adjoints come
// from the count of zero partials and the product of the nonzero ones.
ValueRange Differentiator::buildPartialReduction(
    linalg::LinalgOp op, unsigned result, Operation *combiner, ValueRange inits,
    ValueRange extra,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange,
                                    ValueRange)>
        combine) {
  Block *body = op.getBlock();
  unsigned numInputs = op.getNumDpsInputs();
  Value partial =
      combiner->getOperand(0) == body->getArgument(numInputs + result)
          ? combiner->getOperand(1)
          : combiner->getOperand(0);
  llvm::SmallPtrSet<Operation *, 8> needed = getPayloadSlice(body, partial);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  llvm::append_range(inputs, extra);
  AffineMap resultMap = op.getIndexingMapMatchingResult(op->getResult(result));
  maps.append(extra.size() + inits.size(), resultMap);
  return linalg::GenericOp::create(
             b, op.getLoc(), inits.getTypes(), inputs, inits, maps,
             op.getIteratorTypesArray(),
             [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
               IRMapping mapping;
               for (unsigned i = 0; i < numInputs; ++i)
                 mapping.map(body->getArgument(i), args[i]);
               for (Operation &inner : body->without_terminator())
                 if (needed.contains(&inner))
                   nb.clone(inner, mapping);
               linalg::YieldOp::create(
                   nb, bodyLoc,
                   combine(nb, bodyLoc, mapping.lookupOrDefault(partial),
                           args.slice(numInputs, extra.size()),
                           args.take_back(inits.size())));
             })
      .getResults();
}

Value Differentiator::buildTies(linalg::LinalgOp op, unsigned result,
                                Operation *combiner) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(result).getType());
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), op.getContext());
  auto equalOne = [](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    Value equal = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, x, y);
    return arith::SelectOp::create(nb, l, equal,
                                   getConstant(nb, l, x.getType(), 1),
                                   getConstant(nb, l, x.getType(), 0));
  };
  // The init counts where the result is the init.
  Value initTies =
      linalg::GenericOp::create(
          b, loc, TypeRange{type},
          ValueRange{op->getResult(result), op.getDpsInits()[result]},
          ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(),
                                             type.getElementType())},
          SmallVector<AffineMap>(3, identity),
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, equalOne(nb, l, args[0], args[1]));
          })
          .getResult(0);
  return buildPartialReduction(
      op, result, combiner, initTies, op->getResult(result),
      [&](OpBuilder &nb, Location l, Value partial, ValueRange extra,
          ValueRange counts) -> SmallVector<Value> {
        return {arith::AddFOp::create(nb, l, counts[0],
                                      equalOne(nb, l, partial, extra[0]))};
      })[0];
}

std::pair<Value, Value>
Differentiator::buildProductFactors(linalg::LinalgOp op, unsigned result,
                                    Operation *combiner) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op->getResult(result).getType());
  ValueRange factors = buildPartialReduction(
      op, result, combiner,
      {createFilledTensor(b, loc, type, 0),
       createFilledTensor(b, loc, type, 1)},
      {},
      [](OpBuilder &nb, Location bodyLoc, Value p, ValueRange,
         ValueRange accumulators) -> SmallVector<Value> {
        Value zero = getConstant(nb, bodyLoc, p.getType(), 0);
        Value one = getConstant(nb, bodyLoc, p.getType(), 1);
        Value isZero = arith::CmpFOp::create(
            nb, bodyLoc, arith::CmpFPredicate::OEQ, p, zero);
        Value count = arith::AddFOp::create(
            nb, bodyLoc, accumulators[0],
            arith::SelectOp::create(nb, bodyLoc, isZero, one, zero));
        Value product = arith::MulFOp::create(
            nb, bodyLoc, accumulators[1],
            arith::SelectOp::create(nb, bodyLoc, isZero, one, p));
        return {count, product};
      });
  return {factors[0], factors[1]};
}

Value Differentiator::buildLastWriter(linalg::LinalgOp op, unsigned result,
                                      arith::SelectOp select) {
  Location loc = op.getLoc();
  Block *body = op.getBlock();
  unsigned numInputs = op.getNumDpsInputs();
  auto resultType = cast<RankedTensorType>(op->getResult(result).getType());
  auto type = RankedTensorType::get(resultType.getShape(), b.getI64Type());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  maps.push_back(op.getIndexingMapMatchingResult(op->getResult(result)));
  Value none =
      linalg::FillOp::create(
          b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, -1, 64)},
          ValueRange{
              tensor::EmptyOp::create(b, loc, type.getShape(), b.getI64Type())})
          .getResult(0);
  auto last = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{none}, maps,
      op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
        // The condition reads the inputs and indices only
        // (matchOverwrite).
        IRMapping mapping;
        for (unsigned i = 0; i < numInputs; ++i)
          mapping.map(body->getArgument(i), args[i]);
        llvm::SmallPtrSet<Operation *, 8> needed =
            getPayloadSlice(body, select.getCondition());
        for (Operation &inner : body->without_terminator())
          if (needed.contains(&inner))
            nb.clone(inner, mapping);
        Value position = buildReductionPosition(nb, bodyLoc, op);
        Value written = arith::SelectOp::create(
            nb, bodyLoc, mapping.lookup(select.getCondition()), position,
            args[numInputs]);
        linalg::YieldOp::create(nb, bodyLoc, written);
      });
  return last.getResult(0);
}

// The general rule would give a gather's table a loop over its rows,
// comparing each with the id per element (tokens x vocabulary x hidden
// iterations of plain loops); the one-hot product does the same arithmetic
// as a matrix product, which BLAS and tensor cores run.
Value Differentiator::buildGatherAdjoint(linalg::LinalgOp op,
                                         ArrayRef<Value> dys,
                                         ArrayRef<Reduction> reductions,
                                         tensor::ExtractOp extract) {
  Block *body = op.getBlock();
  if (!reductions.empty() || op.getNumDpsInits() != 1 || !dys[0] ||
      body->getTerminator()->getOperand(0) != extract.getResult())
    return {};
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  unsigned numLoops = op.getNumLoops(), vocabLoop = numLoops;
  auto tableType = cast<RankedTensorType>(extract.getTensor().getType());
  // The table's map over the op's loops and one more for its rows.
  SmallVector<AffineExpr> tableExprs;
  llvm::SmallDenseSet<unsigned> tableLoops;
  std::optional<int64_t> rowDim;
  BlockArgument ids;
  Value rowIndex;
  llvm::SmallPtrSet<Operation *, 8> rowSlice;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    if (auto indexOp = index.getDefiningOp<linalg::IndexOp>()) {
      if (!tableLoops.insert(indexOp.getDim()).second)
        return {};
      tableExprs.push_back(getAffineDimExpr(indexOp.getDim(), ctx));
      continue;
    }
    // The row: computed from one input, the ids, alone (a cast, and the
    // wrap of negative ids that ONNX Gather imports with).
    BlockArgument arg = getSoleInput(op, index, rowSlice);
    if (rowDim || !arg)
      return {};
    rowDim = dim;
    rowIndex = index;
    ids = arg;
    tableExprs.push_back(getAffineDimExpr(vocabLoop, ctx));
  }
  if (!rowDim || tableType.isDynamicDim(*rowDim))
    return {};
  AffineMap idsMap =
      op.getMatchingIndexingMap(op.getDpsInputOperand(ids.getArgNumber()));
  if (!idsMap.isProjectedPermutation() ||
      llvm::any_of(idsMap.getResults(), [&](AffineExpr expr) {
        return tableLoops.contains(cast<AffineDimExpr>(expr).getPosition());
      }))
    return {};
  Value idsTensor = op.getDpsInputOperand(ids.getArgNumber())->get();
  auto idsType = cast<RankedTensorType>(idsTensor.getType());
  Type element = tableType.getElementType();

  // onehot[i..., v] = ids[i...] == v.
  unsigned idsRank = idsType.getRank();
  SmallVector<int64_t> oneHotShape(idsType.getShape());
  oneHotShape.push_back(tableType.getDimSize(*rowDim));
  auto oneHotType = RankedTensorType::get(oneHotShape, element);
  // (getMajorSubMap(0) would be a null map for 0-d ids.)
  SmallVector<AffineMap> oneHotMaps = {
      AffineMap::getMultiDimMapWithTargets(
          idsRank + 1, llvm::to_vector(llvm::seq<unsigned>(0, idsRank)), ctx),
      AffineMap::getMultiDimIdentityMap(idsRank + 1, ctx)};
  Value oneHot =
      linalg::GenericOp::create(
          b, loc, TypeRange{oneHotType}, ValueRange{idsTensor},
          ValueRange{tensor::EmptyOp::create(b, loc, oneHotShape, element)},
          oneHotMaps,
          SmallVector<utils::IteratorType>(idsRank + 1,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
            IRMapping mapping;
            mapping.map(ids, args[0]);
            for (Operation &inner : body->without_terminator())
              if (rowSlice.contains(&inner))
                nb.clone(inner, mapping);
            Value id = mapping.lookup(rowIndex);
            Value row = linalg::IndexOp::create(nb, bodyLoc, idsRank);
            Value same = arith::CmpIOp::create(
                nb, bodyLoc, arith::CmpIPredicate::eq, id, row);
            Value one = getConstant(nb, bodyLoc, element, 1);
            Value zero = getConstant(nb, bodyLoc, element, 0);
            linalg::YieldOp::create(nb, bodyLoc,
                                    ValueRange{arith::SelectOp::create(
                                        nb, bodyLoc, same, one, zero)});
          })
          .getResult(0);

  // dtable[..., v, ...] += onehot[i..., v] * dy[...] over the op's loops.
  SmallVector<AffineExpr> oneHotExprs(idsMap.getResults());
  oneHotExprs.push_back(getAffineDimExpr(vocabLoop, ctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops + 1, 0, oneHotExprs, ctx),
      AffineMap::get(
          numLoops + 1, 0,
          op.getIndexingMapMatchingResult(op->getResult(0)).getResults(), ctx),
      AffineMap::get(numLoops + 1, 0, tableExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numLoops + 1,
                                             utils::IteratorType::reduction);
  iterators[vocabLoop] = utils::IteratorType::parallel;
  for (unsigned loop : tableLoops)
    iterators[loop] = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, TypeRange{tableType}, ValueRange{oneHot, dys[0]},
             ValueRange{createFilledTensor(b, loc, tableType, 0)}, maps,
             iterators,
             [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
               Value product =
                   arith::MulFOp::create(nb, bodyLoc, args[0], args[1]);
               linalg::YieldOp::create(nb, bodyLoc,
                                       ValueRange{arith::AddFOp::create(
                                           nb, bodyLoc, args[2], product)});
             })
      .getResult(0);
}

Value Differentiator::buildStructuredAdjoint(linalg::LinalgOp op,
                                             ArrayRef<Value> dys,
                                             ArrayRef<Reduction> reductions,
                                             OpOperand *operand,
                                             tensor::ExtractOp extract) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  unsigned numInputs = op.getNumDpsInputs(), numInits = op.getNumDpsInits();
  bool reduces = !reductions.empty();

  // The adjoint's map: loop dims of the target's dims; unit dims addressed
  // by the constant 0 are dropped. A dimension read at an index no loop of
  // its own gives — a computed one (inside a payload), a constant, or a
  // loop that another dimension reads already (a diagonal) — gets a loop of
  // its own, whose iterations add their adjoint only where its index is
  // the one read.
  Type target =
      operand ? operand->get().getType() : extract.getTensor().getType();
  auto targetType = dyn_cast<RankedTensorType>(target);
  if (!targetType)
    targetType = RankedTensorType::get({}, target);
  SmallVector<AffineExpr> exprs;
  SmallVector<bool> dropped;
  SmallVector<int64_t> keptShape;
  /// A target dimension on a loop of its own and the index it is read at:
  /// a payload value, else a loop dimension or a constant.
  struct Pinned {
    unsigned loop;
    Value computed;
    AffineExpr at;
  };
  SmallVector<Pinned> pinned;
  unsigned numAllLoops = numLoops;
  llvm::SmallDenseSet<unsigned> used;
  for (int64_t dim = 0; dim < targetType.getRank(); ++dim) {
    std::optional<unsigned> loop;
    if (operand) {
      AffineExpr expr = op.getMatchingIndexingMap(operand).getResult(dim);
      if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
        if (constant.getValue() == 0 && targetType.getDimSize(dim) == 1) {
          dropped.push_back(true);
          continue;
        }
        loop = numAllLoops++;
        pinned.push_back({*loop, Value(), expr});
      }
      auto dimExpr = dyn_cast<AffineDimExpr>(expr);
      if (!loop && !dimExpr) {
        // A compound index (a convolution's `h + kh`): several iterations
        // read the element, so the adjoint is scattered there and summed
        // over its loops, which stay reductions.
        dropped.push_back(false);
        exprs.push_back(expr);
        keptShape.push_back(targetType.getDimSize(dim));
        continue;
      }
      if (!loop)
        loop = dimExpr.getPosition();
    } else {
      Value index = extract.getIndices()[dim];
      if (auto indexOp = index.getDefiningOp<linalg::IndexOp>())
        loop = indexOp.getDim();
      else {
        loop = numAllLoops++;
        pinned.push_back({*loop, index, AffineExpr()});
      }
    }
    if (!used.insert(*loop).second) {
      pinned.push_back({numAllLoops, Value(), getAffineDimExpr(*loop, ctx)});
      loop = numAllLoops++;
      used.insert(*loop);
    }
    dropped.push_back(false);
    exprs.push_back(getAffineDimExpr(*loop, ctx));
    keptShape.push_back(targetType.getDimSize(dim));
  }

  // Operands: the forward inputs, the results (reductions) or inits
  // (element-wise) for the payload's output arguments, then the adjoints
  // of the results that have one; the forward maps gain the new loops.
  auto widen = [&](AffineMap map) {
    return AffineMap::get(numAllLoops, 0, map.getResults(), ctx);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    inputs.push_back(input->get());
    maps.push_back(widen(op.getMatchingIndexingMap(input)));
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    inputs.push_back(reduces
                         ? op->getResult(init.getOperandNumber() - numInputs)
                         : init.get());
    maps.push_back(widen(op.getMatchingIndexingMap(&init)));
  }
  // Per result with an adjoint: its slot, then for a product the slots of
  // its init, zero count and nonzero product.
  SmallVector<int64_t> dySlots(numInits, -1);
  for (unsigned r = 0; r < numInits; ++r) {
    if (!dys[r])
      continue;
    dySlots[r] = inputs.size();
    AffineMap map = widen(op.getIndexingMapMatchingResult(op->getResult(r)));
    inputs.push_back(dys[r]);
    if (reduces && reductions[r].zeros)
      llvm::append_range(inputs,
                         ValueRange{op.getDpsInits()[r], reductions[r].zeros,
                                    reductions[r].nonzeroProduct});
    if (reduces && reductions[r].lastWriter)
      inputs.push_back(reductions[r].lastWriter);
    if (reduces && reductions[r].ties)
      inputs.push_back(reductions[r].ties);
    maps.resize(inputs.size(), map);
  }
  maps.push_back(AffineMap::get(numAllLoops, 0, exprs, ctx));
  SmallVector<utils::IteratorType> iterators(numAllLoops,
                                             utils::IteratorType::reduction);
  for (unsigned loop : used)
    iterators[loop] = utils::IteratorType::parallel;
  auto adjointType =
      RankedTensorType::get(keptShape, targetType.getElementType());
  Value init = createFilledTensor(b, loc, adjointType, 0);

  Block *body = op.getBlock();
  auto buildBody = [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
    IRMapping mapping;
    for (unsigned i = 0; i < numInputs + numInits; ++i)
      mapping.map(body->getArgument(i), args[i]);
    SmallVector<Operation *> cloned;
    for (Operation &inner : body->without_terminator())
      cloned.push_back(nb.clone(inner, mapping));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    DenseMap<Value, Value> scalarAdjoints;
    auto add = [&](Value value, Value adjoint) {
      if (!adjoint)
        return;
      Value &entry = scalarAdjoints[value];
      entry =
          entry ? arith::AddFOp::create(b, bodyLoc, entry, adjoint).getResult()
                : adjoint;
    };
    Operation *yield = body->getTerminator();
    for (unsigned r = 0; r < numInits; ++r) {
      if (dySlots[r] < 0)
        continue;
      Value dy = args[dySlots[r]];
      Operation *combiner = reduces ? reductions[r].combiner : nullptr;
      if (!combiner) {
        add(mapping.lookupOrDefault(yield->getOperand(r)), dy);
        continue;
      }
      if (auto select = dyn_cast<arith::SelectOp>(combiner)) {
        // The value written last takes the adjoint.
        Value last = arith::AndIOp::create(
            b, bodyLoc, mapping.lookup(select.getCondition()),
            arith::CmpIOp::create(b, bodyLoc, arith::CmpIPredicate::eq,
                                  buildReductionPosition(b, bodyLoc, op),
                                  args[dySlots[r] + 1]));
        add(mapping.lookup(select.getTrueValue()),
            arith::SelectOp::create(b, bodyLoc, last, dy,
                                    getConstant(b, bodyLoc, dy.getType(), 0)));
        continue;
      }
      Value partial =
          combiner->getOperand(0) == body->getArgument(numInputs + r)
              ? combiner->getOperand(1)
              : combiner->getOperand(0);
      partial = mapping.lookup(partial);
      if (isa<arith::MulFOp>(combiner)) {
        // The product of the others: the init times the nonzero product
        // over this partial where none is zero, the nonzero product where
        // only this one is, else zero.
        Value init = args[dySlots[r] + 1], zeros = args[dySlots[r] + 2],
              others = args[dySlots[r] + 3];
        Value zero = getConstant(b, bodyLoc, dy.getType(), 0);
        auto equals = [&](Value x, double value) -> Value {
          return arith::CmpFOp::create(
              b, bodyLoc, arith::CmpFPredicate::OEQ, x,
              getConstant(b, bodyLoc, x.getType(), value));
        };
        Value isZero = equals(partial, 0);
        Value quotient = arith::DivFOp::create(b, bodyLoc, others, partial);
        others = arith::SelectOp::create(
            b, bodyLoc, isZero,
            arith::SelectOp::create(b, bodyLoc, equals(zeros, 1), others, zero),
            arith::SelectOp::create(b, bodyLoc, equals(zeros, 0), quotient,
                                    zero));
        dy = arith::MulFOp::create(
            b, bodyLoc, dy, arith::MulFOp::create(b, bodyLoc, init, others));
      } else if (!isa<arith::AddFOp>(combiner)) {
        // The elements equal to the maximum (minimum) share its adjoint.
        Value result = args[numInputs + r];
        Value isExtreme = arith::CmpFOp::create(
            b, bodyLoc, arith::CmpFPredicate::OEQ, partial, result);
        dy = arith::SelectOp::create(
            b, bodyLoc, isExtreme,
            arith::DivFOp::create(b, bodyLoc, dy, args[dySlots[r] + 1]),
            getConstant(b, bodyLoc, dy.getType(), 0));
      }
      add(partial, dy);
    }
    for (Operation *inner : llvm::reverse(cloned)) {
      if (inner->getNumResults() != 1)
        continue;
      Value dy = scalarAdjoints.lookup(inner->getResult(0));
      if (!dy || isa<tensor::ExtractOp>(inner))
        continue;
      // Branches are element-wise; a reduction's payload (a contraction's
      // `out + a * b`) keeps the plain product, which
      // sbp-specialize-contractions recognizes.
      for (auto [value, adjoint] :
           llvm::zip(inner->getOperands(),
                     getElementwiseAdjoints(b, inner, dy, !reduces)))
        add(value, adjoint);
    }
    Value adjoint =
        operand ? scalarAdjoints.lookup(args[operand->getOperandNumber()])
                : scalarAdjoints.lookup(
                      mapping.lookup(extract.getOperation())->getResult(0));
    // The element of the pinned loops that this iteration read.
    for (const Pinned &pin : adjoint ? pinned : ArrayRef<Pinned>()) {
      Value index = pin.computed ? mapping.lookup(pin.computed) : Value();
      if (auto constant = dyn_cast_if_present<AffineConstantExpr>(pin.at))
        index = arith::ConstantIndexOp::create(b, bodyLoc, constant.getValue());
      else if (!index)
        index = linalg::IndexOp::create(
            b, bodyLoc, cast<AffineDimExpr>(pin.at).getPosition());
      Value same = arith::CmpIOp::create(
          b, bodyLoc, arith::CmpIPredicate::eq,
          linalg::IndexOp::create(b, bodyLoc, pin.loop), index);
      adjoint = arith::SelectOp::create(
          b, bodyLoc, same, adjoint,
          getConstant(b, bodyLoc, adjoint.getType(), 0));
    }
    Value accumulated = args.back();
    if (adjoint)
      accumulated = arith::AddFOp::create(b, bodyLoc, accumulated, adjoint);
    linalg::YieldOp::create(b, bodyLoc, accumulated);
  };
  Value adjoint =
      linalg::GenericOp::create(b, loc, TypeRange{adjointType}, inputs,
                                ValueRange{init}, maps, iterators, buildBody)
          .getResult(0);
  return expandUnitDims(b, loc, adjoint, targetType, dropped);
}

} // namespace

SmallVector<Value> Differentiator::getVariedCaptures(Operation *op) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  return llvm::filter_to_vector(above,
                                [&](Value value) { return isVaried(value); });
}

LogicalResult Differentiator::differentiateLoop(scf::ForOp loop) {
  Location loc = loop.getLoc();
  auto saved = savedIterations.find(loop);
  if (saved == savedIterations.end())
    return loop.emitError("sbp-make-train-step: no gradient for a loop "
                          "without constant bounds or with carried values "
                          "that are not tensors of static shape");
  int64_t trips = loop.getStaticTripCount()->getSExtValue();
  // The loop also carries the tapes of what it saves.
  unsigned numCarried = loop.getInitArgs().size() - saved->second.size();
  SmallVector<Value> captured = getVariedCaptures(loop);
  // Iter args of the backward loop: the adjoints of the carried values,
  // then those of the captured tensors, summed over the iterations.
  SmallVector<Value> iterArgs;
  for (unsigned k = 0; k < numCarried; ++k) {
    Value dy = getAdjoint(loop.getResult(k));
    auto type = cast<RankedTensorType>(loop.getResult(k).getType());
    iterArgs.push_back(dy ? dy : createFilledTensor(b, loc, type, 0));
  }
  for (Value value : captured)
    iterArgs.push_back(createZeros(b, loc, value.getType()));
  if (trips == 0) {
    for (unsigned k = 0; k < numCarried; ++k)
      accumulate(loop.getInitArgs()[k], getAdjoint(loop.getResult(k)));
    return success();
  }

  Block *forwardBody = loop.getBody();
  LogicalResult status = success();
  // The body is built in place: differentiating it looks at the regions
  // around it.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value count = arith::ConstantIndexOp::create(b, loc, trips);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto backward = scf::ForOp::create(b, loc, zero, count, one, iterArgs);
  {
    Block *backwardBody = backward.getBody();
    if (!backwardBody->empty())
      backwardBody->getTerminator()->erase();
    Value step = backward.getInductionVar();
    ValueRange args = backward.getRegionIterArgs();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(backwardBody);
    // Iteration trips-1-step, recomputed from the values it started with.
    Value last = arith::ConstantIndexOp::create(b, loc, trips - 1);
    Value iteration = arith::SubIOp::create(b, loc, last, step);
    Value inductionVar = arith::AddIOp::create(
        b, loc, loop.getLowerBound(),
        arith::MulIOp::create(b, loc, iteration, loop.getStep()));
    IRMapping mapping;
    mapping.map(forwardBody->getArgument(0), inductionVar);
    SmallVector<Value> starts;
    for (unsigned k = 0; k < numCarried; ++k) {
      auto type = cast<RankedTensorType>(loop.getInitArgs()[k].getType());
      IterationSlice slice(b, iteration, type);
      Value start = tensor::ExtractSliceOp::create(
          b, loc, type, saved->second[k], slice.offsets, slice.sizes,
          slice.strides);
      mapping.map(forwardBody->getArgument(k + 1), start);
      starts.push_back(start);
    }
    // Loops in the recomputed body are replaced by ones that save their
    // iterations: what to differentiate is read after prepare().
    // The ops that save the iterations write the forward loop's tapes,
    // which the recomputation has no use for.
    Operation *marker = inductionVar.getDefiningOp();
    llvm::SmallPtrSet<Operation *, 4> saving;
    for (Value tape :
         forwardBody->getTerminator()->getOperands().drop_front(numCarried))
      saving.insert(tape.getDefiningOp());
    for (Operation &op : forwardBody->without_terminator())
      if (!saving.contains(&op))
        b.clone(op, mapping);
    status = backpropagateIteration(
        loc,
        llvm::map_to_vector(
            forwardBody->getTerminator()->getOperands().take_front(numCarried),
            [&](Value value) { return mapping.lookupOrDefault(value); }),
        starts, llvm::to_vector(llvm::seq(numCarried)), captured, args, marker);
  }
  if (failed(status))
    return failure();
  for (unsigned k = 0; k < numCarried; ++k)
    accumulate(loop.getInitArgs()[k], backward.getResult(k));
  for (auto [i, value] : llvm::enumerate(captured))
    accumulate(value, backward.getResult(numCarried + i));
  return success();
}

LogicalResult Differentiator::backpropagateIteration(
    Location loc, ValueRange next, ArrayRef<Value> starts,
    ArrayRef<unsigned> carried, ArrayRef<Value> captured, ValueRange args,
    Operation *marker) {
  // What the iteration hands on, held by a yield for now: prepare()
  // replaces the loops in the body (a nested loop's result yielded as it
  // is), and the yield's operands follow.
  Operation *yield = scf::YieldOp::create(b, loc, next);
  SmallVector<Value> seeds(captured);
  llvm::append_range(seeds, starts);
  Differentiator inner(b);
  inner.prepare(seeds, *b.getInsertionBlock());
  SmallVector<Value> yielded(yield->getOperands());
  yield->erase();
  SmallVector<Operation *> recomputed;
  for (Operation *op = marker->getNextNode(); op; op = op->getNextNode())
    if (!llvm::is_contained(starts,
                            op->getNumResults() ? op->getResult(0) : Value()))
      recomputed.push_back(op);
  for (auto [i, k] : llvm::enumerate(carried))
    inner.accumulate(yielded[k], args[i]);
  // The iterations' sums are where this iteration adds to captured values'
  // adjoints: rows of stacked weights then add into their rows.
  for (auto [i, value] : llvm::enumerate(captured))
    inner.accumulate(value, args[carried.size() + i]);
  LogicalResult status = inner.backpropagate(recomputed);
  SmallVector<Value> yields;
  for (auto [i, start] : llvm::enumerate(starts)) {
    Value adjoint = inner.getAdjoint(start);
    yields.push_back(
        adjoint ? adjoint
                : createFilledTensor(
                      b, loc, cast<RankedTensorType>(args[i].getType()), 0));
  }
  for (auto [i, value] : llvm::enumerate(captured)) {
    Value sum = inner.getAdjoint(value);
    yields.push_back(sum ? sum : args[carried.size() + i]);
  }
  scf::YieldOp::create(b, loc, yields);
  return status;
}

LogicalResult Differentiator::differentiateWhile(scf::WhileOp loop) {
  Location loc = loop.getLoc();
  // prepare() peels every loop whose results have adjoints.
  assert(peeledWhiles.contains(loop) && "a while loop not peeled");
  unsigned numForwarded = loop.getNumResults() - 1;
  SmallVector<Value> captured = getVariedCaptures(loop);
  // The backward loop carries the adjoints of the forwarded tensors that
  // have them, then those of the captured tensors, summed.
  SmallVector<unsigned> carried;
  SmallVector<Value> iterArgs;
  for (unsigned k = 0; k < numForwarded; ++k) {
    Value result = loop.getResult(k);
    if (!isVaried(result))
      continue;
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      return loop.emitError("sbp-make-train-step: no gradient for a scalar "
                            "that the loop carries");
    carried.push_back(k);
    Value dy = getAdjoint(result);
    iterArgs.push_back(dy ? dy : createFilledTensor(b, loc, type, 0));
  }
  for (Value value : captured)
    iterArgs.push_back(createZeros(b, loc, value.getType()));

  Block *after = loop.getAfterBody();
  ValueRange peeledInits = loop.getInits().take_front(numForwarded);
  Value trips = loop.getResults().back();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  LogicalResult status = success();
  auto backward = scf::ForOp::create(b, loc, zero, trips, one, iterArgs);
  {
    Block *backwardBody = backward.getBody();
    if (!backwardBody->empty())
      backwardBody->getTerminator()->erase();
    ValueRange args = backward.getRegionIterArgs();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(backwardBody);
    // Iteration trips-1-j starts from values nothing saved: they are
    // recomputed from the peeled ones, so that the loop's memory does not
    // grow with its trip count, at trips^2/2 iterations in all.
    Value iteration =
        arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, trips, one),
                              backward.getInductionVar());
    auto recompute = scf::ForOp::create(
        b, loc, zero, iteration, one, peeledInits,
        [&](OpBuilder &nb, Location, Value counter, ValueRange values) {
          IRMapping mapping;
          mapping.map(after->getArguments().drop_back(), values);
          mapping.map(after->getArguments().back(), counter);
          for (Operation &op : after->without_terminator())
            nb.clone(op, mapping);
          scf::YieldOp::create(
              nb, loc,
              llvm::map_to_vector(
                  after->getTerminator()->getOperands().take_front(
                      numForwarded),
                  [&](Value value) { return mapping.lookupOrDefault(value); }));
        });
    IRMapping mapping;
    mapping.map(after->getArguments().drop_back(), recompute.getResults());
    mapping.map(after->getArguments().back(), iteration);
    SmallVector<Value> starts = llvm::map_to_vector(
        carried, [&](unsigned k) { return recompute.getResult(k); });
    for (Operation &op : after->without_terminator())
      b.clone(op, mapping);
    status = backpropagateIteration(
        loc,
        llvm::map_to_vector(
            after->getTerminator()->getOperands().take_front(numForwarded),
            [&](Value value) { return mapping.lookupOrDefault(value); }),
        starts, carried, captured, args, recompute);
  }
  if (failed(status))
    return failure();
  for (auto [i, k] : llvm::enumerate(carried))
    accumulate(peeledInits[k], backward.getResult(i));
  for (auto [i, value] : llvm::enumerate(captured))
    accumulate(value, backward.getResult(carried.size() + i));
  return success();
}

LogicalResult Differentiator::differentiateIf(scf::IfOp op) {
  Location loc = op.getLoc();
  // The varied values either side reads from above get the adjoints.
  SmallVector<Value> captured = getVariedCaptures(op);
  if (captured.empty())
    return success();
  auto backward = scf::IfOp::create(
      b, loc, ValueRange(captured).getTypes(), op.getCondition(),
      /*addThenBlock=*/true, /*addElseBlock=*/true);
  for (auto [forward, side] :
       llvm::zip(op->getRegions(), backward->getRegions())) {
    Block *block = &side.front();
    if (!block->empty())
      block->getTerminator()->erase();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    // A side without ops (an if without else) passes no adjoint.
    SmallVector<Value> yields;
    if (!forward.empty()) {
      // The side's ops recomputed, its yield too: prepare() replaces the
      // loops among them, and the yield's operands follow.
      IRMapping mapping;
      for (Operation &inner : forward.front())
        b.clone(inner, mapping);
      Differentiator inner(b);
      inner.prepare(captured, *block);
      Operation *yield = block->getTerminator();
      SmallVector<Value> yielded(yield->getOperands());
      yield->erase();
      SmallVector<Operation *> recomputed;
      for (Operation &cloned : *block)
        recomputed.push_back(&cloned);
      for (auto [result, value] : llvm::zip(op.getResults(), yielded))
        inner.accumulate(value, getAdjoint(result));
      if (failed(inner.backpropagate(recomputed)))
        return failure();
      for (Value value : captured)
        yields.push_back(inner.getAdjoint(value));
    }
    for (auto [i, value] : llvm::enumerate(captured))
      if (yields.size() <= i || !yields[i]) {
        Value zeros = createZeros(b, loc, value.getType());
        if (yields.size() <= i)
          yields.push_back(zeros);
        else
          yields[i] = zeros;
      }
    scf::YieldOp::create(b, loc, yields);
  }
  for (auto [i, value] : llvm::enumerate(captured))
    accumulate(value, backward.getResult(i));
  return success();
}

FailureOr<SmallVector<Value>>
sbp::buildGradients(OpBuilder &builder, Block &block, Value loss,
                    ArrayRef<Value> wrt, SmallVectorImpl<scf::ForOp> *saved) {
  Differentiator differentiator(builder);
  differentiator.prepare(wrt, block);
  if (saved)
    for (auto loop : block.getOps<scf::ForOp>())
      if (differentiator.savesIterations(loop))
        saved->push_back(loop);
  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  differentiator.accumulate(
      loss, getConstant(builder, loss.getLoc(), loss.getType(), 1.0));
  if (failed(differentiator.backpropagate(forward)))
    return failure();
  SmallVector<Value> gradients;
  for (Value value : wrt) {
    Value gradient = differentiator.getAdjoint(value);
    gradients.push_back(
        gradient
            ? gradient
            : createFilledTensor(builder, value.getLoc(),
                                 cast<RankedTensorType>(value.getType()), 0));
  }
  return gradients;
}

scf::ForOp sbp::saveLoopIterations(OpBuilder &b, scf::ForOp loop) {
  Location loc = loop.getLoc();
  std::optional<int64_t> trips =
      loop.getStaticTripCount()
          ? std::optional<int64_t>(loop.getStaticTripCount()->getSExtValue())
          : std::nullopt;
  if (!trips || llvm::any_of(loop.getInitArgs(), [](Value v) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        return !type || !type.hasStaticShape();
      }))
    return loop;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  SmallVector<Value> tapes;
  for (Value init : loop.getInitArgs()) {
    auto type = cast<RankedTensorType>(init.getType());
    SmallVector<int64_t> shape = {*trips};
    llvm::append_range(shape, type.getShape());
    tapes.push_back(
        tensor::EmptyOp::create(b, loc, shape, type.getElementType()));
  }
  unsigned numCarried = loop.getInitArgs().size();
  IRRewriter rewriter(b);
  auto save = [&](OpBuilder &nb, Location,
                  ArrayRef<BlockArgument> tapeArgs) -> SmallVector<Value> {
    // The body has moved to the new loop: its arguments are the induction
    // variable, the carried values and the tapes.
    Block *body = tapeArgs.front().getOwner();
    Value iteration = arith::DivUIOp::create(
        nb, loc,
        arith::SubIOp::create(nb, loc, body->getArgument(0),
                              loop.getLowerBound()),
        loop.getStep());
    SmallVector<Value> saved;
    for (auto [carried, tape] :
         llvm::zip(body->getArguments().slice(1, numCarried), tapeArgs)) {
      auto type = cast<RankedTensorType>(carried.getType());
      IterationSlice slice(nb, iteration, type);
      saved.push_back(tensor::InsertSliceOp::create(
          nb, loc, carried, tape, slice.offsets, slice.sizes, slice.strides));
    }
    return saved;
  };
  auto replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(rewriter, tapes, false, save);
  if (failed(replaced))
    return loop;
  return cast<scf::ForOp>(replaced->getOperation());
}
