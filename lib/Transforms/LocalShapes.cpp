//===- LocalShapes.cpp - Per-device shapes and boxing lowering ------------===//

#include "sbp/Transforms/LocalShapes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "sbp/Dialect/Sbp/Utils/BoxingPlan.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

Value getAxisIndex(OpBuilder &builder, Location loc, MeshOp mesh,
                   int64_t axis) {
  return AxisIndexOp::create(builder, loc,
                             FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                             builder.getI64IntegerAttr(axis));
}

/// Offset and size of the executing device's piece of a dimension of `size`
/// split over mesh axis `axis` (balanced: the first `size % p` pieces are
/// one larger).
std::pair<OpFoldResult, OpFoldResult> getPiece(OpBuilder &builder, Location loc,
                                               MeshOp mesh, int64_t axis,
                                               OpFoldResult size) {
  int64_t p = mesh.getShape()[axis];
  Value k = getAxisIndex(builder, loc, mesh, axis);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  if (std::optional<int64_t> n = getConstantIntValue(size)) {
    int64_t q = *n / p, r = *n % p;
    Value offset = arith::MulIOp::create(builder, loc, k, cst(q));
    if (r == 0)
      return {offset, builder.getIndexAttr(q)};
    offset = arith::AddIOp::create(
        builder, loc, offset, arith::MinUIOp::create(builder, loc, k, cst(r)));
    Value extra = arith::SelectOp::create(
        builder, loc,
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult, k,
                              cst(r)),
        cst(1), cst(0));
    return {offset,
            arith::AddIOp::create(builder, loc, cst(q), extra).getResult()};
  }
  Value n = cast<Value>(size);
  Value q = arith::DivUIOp::create(builder, loc, n, cst(p));
  Value r = arith::RemUIOp::create(builder, loc, n, cst(p));
  Value offset = arith::AddIOp::create(
      builder, loc, arith::MulIOp::create(builder, loc, k, q),
      arith::MinUIOp::create(builder, loc, k, r));
  Value extra = arith::SelectOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult, k, r),
      cst(1), cst(0));
  return {offset, arith::AddIOp::create(builder, loc, q, extra).getResult()};
}

/// A tensor of the given local sizes filled with the neutral element of
/// `kind`.
Value createFilled(OpBuilder &builder, Location loc,
                   ArrayRef<OpFoldResult> sizes, Type elementType,
                   ReductionKind kind) {
  bool isFloat = isa<FloatType>(elementType);
  arith::AtomicRMWKind rmw = arith::AtomicRMWKind::addf;
  switch (kind) {
  case ReductionKind::Sum:
    rmw = isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
    break;
  case ReductionKind::Max:
    rmw = isFloat ? arith::AtomicRMWKind::maximumf : arith::AtomicRMWKind::maxs;
    break;
  case ReductionKind::Min:
    rmw = isFloat ? arith::AtomicRMWKind::minimumf : arith::AtomicRMWKind::mins;
    break;
  }
  Value neutral = arith::getIdentityValue(rmw, elementType, builder, loc);
  Value empty = tensor::EmptyOp::create(builder, loc, sizes, elementType);
  return linalg::FillOp::create(builder, loc, neutral, empty).getResult(0);
}

/// `value` with type `type`, through a cast where the shapes only differ in
/// what is known statically.
Value castTo(OpBuilder &builder, Location loc, Value value,
             RankedTensorType type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(builder, loc, type, value);
}

} // namespace

RankedTensorType sbp::getLocalType(RankedTensorType type,
                                   ArrayRef<SbpEntry> entries, MeshOp mesh) {
  return type.clone(
      sbp::getLocalShape(type.getShape(), entries, mesh.getShape()));
}

SmallVector<OpFoldResult> sbp::getLocalSizes(OpBuilder &builder, Location loc,
                                             MeshOp mesh,
                                             ArrayRef<int64_t> global,
                                             ArrayRef<SbpEntry> entries) {
  SmallVector<OpFoldResult> sizes;
  for (auto [dim, size] : llvm::enumerate(global)) {
    OpFoldResult local = builder.getIndexAttr(size);
    for (auto [axis, entry] : llvm::enumerate(entries)) {
      if (!entry.isSplit() || entry.getDim() != static_cast<int64_t>(dim))
        continue;
      // Even pieces need no device coordinate.
      int64_t p = mesh.getShape()[axis];
      std::optional<int64_t> n = getConstantIntValue(local);
      local = n && *n % p == 0
                  ? builder.getIndexAttr(*n / p)
                  : getPiece(builder, loc, mesh, axis, local).second;
    }
    sizes.push_back(local);
  }
  return sizes;
}

SmallVector<OpFoldResult> sbp::getLocalOffsets(OpBuilder &builder, Location loc,
                                               MeshOp mesh,
                                               ArrayRef<int64_t> global,
                                               ArrayRef<SbpEntry> entries) {
  SmallVector<OpFoldResult> offsets;
  for (auto [dim, size] : llvm::enumerate(global)) {
    // Each axis splitting the dimension splits the piece of the axes
    // before it.
    OpFoldResult local = builder.getIndexAttr(size);
    Value offset;
    for (auto [axis, entry] : llvm::enumerate(entries)) {
      if (!entry.isSplit() || entry.getDim() != static_cast<int64_t>(dim))
        continue;
      auto [start, piece] = getPiece(builder, loc, mesh, axis, local);
      Value startValue = getValueOrCreateConstantIndexOp(builder, loc, start);
      offset = offset ? arith::AddIOp::create(builder, loc, offset, startValue)
                            .getResult()
                      : startValue;
      local = piece;
    }
    offsets.push_back(offset ? OpFoldResult(offset) : builder.getIndexAttr(0));
  }
  return offsets;
}

Value sbp::lowerBoxing(OpBuilder &builder, Location loc, MeshOp mesh,
                       Value value, RankedTensorType global,
                       ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst) {
  Type elementType = global.getElementType();
  BoxingPlan plan = planBoxing(src, dst, global.getShape(),
                               getElementBytes(elementType), mesh.getShape());
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  SmallVector<SbpEntry> cur(src);
  for (const BoxingStep &step : plan.steps) {
    SmallVector<SbpEntry> next(cur);
    next[step.axis] = step.to;
    RankedTensorType nextType = getLocalType(global, next, mesh);
    DenseI64ArrayAttr axes = builder.getDenseI64ArrayAttr({step.axis});
    MLIRContext *ctx = builder.getContext();
    auto kindOf = [&](SbpEntry partial) {
      return ReductionKindAttr::get(ctx, partial.getReduction());
    };
    auto dimOf = [&](SbpEntry split) {
      return builder.getI64IntegerAttr(split.getDim());
    };
    switch (step.kind) {
    case BoxingKind::AllReduce:
      value = AllReduceOp::create(builder, loc, value.getType(), value, meshRef,
                                  axes, kindOf(step.from));
      break;
    case BoxingKind::ReduceScatter:
      value = ReduceScatterOp::create(builder, loc, nextType, value, meshRef,
                                      axes, dimOf(step.to), kindOf(step.from));
      break;
    case BoxingKind::AllGather:
      value = AllGatherOp::create(builder, loc, nextType, value, meshRef, axes,
                                  dimOf(step.from));
      break;
    case BoxingKind::AllToAll:
      value = AllToAllOp::create(builder, loc, nextType, value, meshRef, axes,
                                 dimOf(step.to), dimOf(step.from));
      break;
    case BoxingKind::Slice: {
      int64_t dim = step.to.getDim();
      SmallVector<OpFoldResult> sizes =
          getLocalSizes(builder, loc, mesh, global.getShape(), cur);
      SmallVector<OpFoldResult> offsets(sizes.size(), builder.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(sizes.size(), builder.getIndexAttr(1));
      std::tie(offsets[dim], sizes[dim]) =
          getPiece(builder, loc, mesh, step.axis, sizes[dim]);
      value = tensor::ExtractSliceOp::create(builder, loc, value, offsets,
                                             sizes, strides);
      break;
    }
    case BoxingKind::KeepOnFirst: {
      Value isFirst = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::eq,
          getAxisIndex(builder, loc, mesh, step.axis),
          arith::ConstantIndexOp::create(builder, loc, 0));
      Value zeros = createFilled(
          builder, loc,
          getLocalSizes(builder, loc, mesh, global.getShape(), cur),
          elementType, ReductionKind::Sum);
      zeros =
          castTo(builder, loc, zeros, cast<RankedTensorType>(value.getType()));
      value = arith::SelectOp::create(builder, loc, isFirst, value, zeros);
      break;
    }
    case BoxingKind::PadWithNeutral: {
      int64_t dim = step.from.getDim();
      SmallVector<OpFoldResult> fullSizes =
          getLocalSizes(builder, loc, mesh, global.getShape(), next);
      Value full = createFilled(builder, loc, fullSizes, elementType,
                                step.to.getReduction());
      SmallVector<OpFoldResult> pieceSizes =
          getLocalSizes(builder, loc, mesh, global.getShape(), cur);
      SmallVector<OpFoldResult> offsets(fullSizes.size(),
                                        builder.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(fullSizes.size(),
                                        builder.getIndexAttr(1));
      offsets[dim] =
          getPiece(builder, loc, mesh, step.axis, fullSizes[dim]).first;
      value = tensor::InsertSliceOp::create(builder, loc, value, full, offsets,
                                            pieceSizes, strides);
      break;
    }
    case BoxingKind::Relabel:
      break;
    }
    value = castTo(builder, loc, value, nextType);
    cur = std::move(next);
  }
  return value;
}
