//===- SortBuilders.cpp - Sorting as structured ops -----------------------===//

#include "sbp/Import/SortBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "sbp/Import/TensorBuilders.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::tensor_builders;

Value sort_builders::buildTotalOrderKey(OpBuilder &b, Location loc, Value x) {
  unsigned width = x.getType().getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(width);
  Value bits = arith::BitcastOp::create(b, loc, intType, x);
  // Negative floats order backwards as integers: flip all but their sign.
  Value sign = arith::ShRSIOp::create(
      b, loc, bits, arith::ConstantIntOp::create(b, loc, intType, width - 1));
  Value magnitude = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(intType, APInt::getSignedMaxValue(width)));
  return arith::XOrIOp::create(b, loc, bits,
                               arith::AndIOp::create(b, loc, sign, magnitude));
}

namespace {
/// Over `rank + 1` loops: reads a tensor of rank `rank` at the first `rank`
/// loops, or, when `atLast`, with dimension `dim` at the last loop instead.
AffineMap getRowMap(MLIRContext *ctx, int64_t rank, int64_t dim, bool atLast) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(atLast && d == dim ? rank : d, ctx));
  return AffineMap::get(rank + 1, 0, exprs, ctx);
}

} // namespace

FailureOr<Value> sort_builders::buildRanks(OpBuilder &b, Location loc,
                                           ValueRange inputs, int64_t dim,
                                           Before before) {
  auto type = cast<RankedTensorType>(inputs[0].getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap here = getRowMap(ctx, rank, dim, false);
  AffineMap other = getRowMap(ctx, rank, dim, true);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    operands.append({input, input});
    maps.append({here, other});
  }
  maps.push_back(here);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value zeros = createFilled(b, loc, type.getShape(), b.getI64Type(), 0);
  bool failed = false;
  auto generic = linalg::GenericOp::create(
      b, loc, zeros.getType(), operands, zeros, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> mine, theirs;
        for (size_t i = 0; i < inputs.size(); ++i) {
          mine.push_back(args[2 * i]);
          theirs.push_back(args[2 * i + 1]);
        }
        Value count = args.back();
        FailureOr<Value> first = before(nb, l, theirs, mine);
        FailureOr<Value> last = before(nb, l, mine, theirs);
        if (mlir::failed(first) || mlir::failed(last)) {
          failed = true;
          linalg::YieldOp::create(nb, l, count);
          return;
        }
        Value earlier =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                  linalg::IndexOp::create(nb, l, rank),
                                  linalg::IndexOp::create(nb, l, dim));
        Value unordered = arith::OrIOp::create(nb, l, *first, *last);
        Value tie = arith::AndIOp::create(
            nb, l, earlier,
            arith::XOrIOp::create(nb, l, unordered,
                                  arith::ConstantIntOp::create(nb, l, 1, 1)));
        Value counted = arith::OrIOp::create(nb, l, *first, tie);
        linalg::YieldOp::create(
            nb, l,
            arith::AddIOp::create(
                nb, l, count,
                arith::ExtUIOp::create(nb, l, nb.getI64Type(), counted))
                .getResult());
      });
  if (failed) {
    generic->erase();
    return failure();
  }
  return generic.getResult(0);
}

Value sort_builders::buildPermuted(OpBuilder &b, Location loc, Value ranks,
                                   Value source, Type elementType, int64_t dim,
                                   int64_t count) {
  auto type = cast<RankedTensorType>(ranks.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = count;
  MLIRContext *ctx = b.getContext();
  AffineMap other = getRowMap(ctx, rank, dim, true);
  SmallVector<Value> operands = {ranks};
  if (source)
    operands.push_back(source);
  SmallVector<AffineMap> maps(operands.size(), other);
  maps.push_back(getRowMap(ctx, rank, dim, false));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = createFilled(b, loc, shape, elementType, 0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), operands, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value position = arith::IndexCastOp::create(
                   nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, dim));
               Value here = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::eq, args[0], position);
               Value value = args[1];
               if (!source)
                 value = arith::IndexCastOp::create(
                     nb, l, elementType, linalg::IndexOp::create(nb, l, rank));
               linalg::YieldOp::create(
                   nb, l,
                   arith::SelectOp::create(nb, l, here, value, args.back())
                       .getResult());
             })
      .getResult(0);
}

FailureOr<SmallVector<Value>>
sort_builders::buildTopK(OpBuilder &b, Location loc, Value input, int64_t dim,
                         int64_t k, bool largest, Type indexType) {
  Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
  // Floats in the total order (NaN beyond every number); ties keep their
  // order.
  auto before = [&](OpBuilder &nb, Location l, ValueRange lhs,
                    ValueRange rhs) -> FailureOr<Value> {
    Value x = lhs[0], y = rhs[0];
    if (isa<FloatType>(elementType)) {
      x = buildTotalOrderKey(nb, l, x);
      y = buildTotalOrderKey(nb, l, y);
    }
    return arith::CmpIOp::create(nb, l,
                                 largest ? arith::CmpIPredicate::sgt
                                         : arith::CmpIPredicate::slt,
                                 x, y)
        .getResult();
  };
  FailureOr<Value> ranks = buildRanks(b, loc, input, dim, before);
  if (failed(ranks))
    return failure();
  return SmallVector<Value>{
      buildPermuted(b, loc, *ranks, input, elementType, dim, k),
      buildPermuted(b, loc, *ranks, Value(), indexType, dim, k)};
}
