//===- SortOps.cpp - StableHLO sort and CHLO top_k ------------------------===//
//
// A sort is structured ops only: one generic counts, for each element, the
// elements of its row that sort before it (its rank; equal elements keep
// their order), and one generic per result writes each element at its rank,
// a reduction over the row that overwrites. The rows split like any loop,
// and values flow to the results through the overwrite, which autodiff
// differentiates. The work is quadratic in the sorted dimension.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
using namespace mlir::sbp::tensor_builders;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

/// Whether the elements `lhs` (one per input) sort before `rhs`.
using Before = function_ref<FailureOr<Value>(OpBuilder &, Location,
                                             ValueRange lhs, ValueRange rhs)>;

/// Over `rank + 1` loops: reads a tensor of rank `rank` at the first `rank`
/// loops, or, when `atLast`, with dimension `dim` at the last loop instead.
AffineMap getRowMap(MLIRContext *ctx, int64_t rank, int64_t dim, bool atLast) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(atLast && d == dim ? rank : d, ctx));
  return AffineMap::get(rank + 1, 0, exprs, ctx);
}

/// The rank (i64) of each element of `inputs` along `dim`: the number of
/// elements of its row that sort before it, or are equal and come first.
FailureOr<Value> buildRanks(OpBuilder &b, Location loc, ValueRange inputs,
                            int64_t dim, Before before) {
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

/// The elements of `source` placed at their `ranks` along `dim`, the first
/// `count` of them; where `source` is null, their positions along `dim`
/// (as `elementType`) instead.
Value buildPermuted(OpBuilder &b, Location loc, Value ranks, Value source,
                    Type elementType, int64_t dim, int64_t count) {
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
  // Larger first, in StableHLO's total order of floats (NaN above all).
  auto before = [&](OpBuilder &nb, Location l, ValueRange lhs,
                    ValueRange rhs) -> FailureOr<Value> {
    Value x = lhs[0], y = rhs[0];
    if (isa<FloatType>(elementType)) {
      x = buildTotalOrderKey(nb, l, x);
      y = buildTotalOrderKey(nb, l, y);
    }
    return arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, x, y)
        .getResult();
  };
  Location loc = op->getLoc();
  FailureOr<Value> ranks =
      buildRanks(b, loc, topK.getOperand(), rank - 1, before);
  if (failed(ranks))
    return failure();
  return SmallVector<Value>{buildPermuted(b, loc, *ranks, topK.getOperand(),
                                          elementType, rank - 1, k),
                            buildPermuted(b, loc, *ranks, Value(),
                                          indicesType.getElementType(),
                                          rank - 1, k)};
}
} // namespace

void stablehlo_import::addSortConverters(ConverterTable &table) {
  table["stablehlo.sort"] = convertSort;
  table["chlo.top_k"] = convertTopK;
}
