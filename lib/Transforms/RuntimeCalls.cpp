//===- RuntimeCalls.cpp - Calling the runtime from tensor programs --------===//

#include "RuntimeCalls.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::sbp;

Value RuntimeCallBuilder::i64(int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, value, 64);
}

Value RuntimeCallBuilder::toI64(Value index) {
  return arith::IndexCastOp::create(builder, loc, builder.getI64Type(), index);
}

Value RuntimeCallBuilder::toIndex(Value value) {
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                    value);
}

Value RuntimeCallBuilder::dim(Value tensor, int64_t d) {
  return tensor::DimOp::create(builder, loc, tensor, d);
}

ValueRange RuntimeCallBuilder::call(StringRef name, ValueRange args,
                                    TypeRange results) {
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    callee =
        func::FuncOp::create(builder, module.getLoc(), name,
                             builder.getFunctionType(args.getTypes(), results));
    callee.setPrivate();
  }
  return func::CallOp::create(builder, loc, callee, args).getResults();
}

Value RuntimeCallBuilder::toBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memref = MemRefType::get(type.getShape(), type.getElementType());
  return unranked(
      bufferization::ToBufferOp::create(builder, loc, memref, tensor, true));
}

Value RuntimeCallBuilder::alloc(RankedTensorType type, ValueRange sizes) {
  auto memref = MemRefType::get(type.getShape(), type.getElementType());
  return memref::AllocOp::create(builder, loc, memref, sizes);
}

Value RuntimeCallBuilder::unranked(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return memref::CastOp::create(
      builder, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

Value RuntimeCallBuilder::toTensor(Value buffer, RankedTensorType type) {
  return bufferization::ToTensorOp::create(builder, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

bool mlir::sbp::isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat());
}
