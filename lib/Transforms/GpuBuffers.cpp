//===- GpuBuffers.cpp - Every buffer in device memory ---------------------===//
//
// Allocation and deallocation use the asynchronous forms of the gpu ops,
// each with its own `gpu.wait async` token and a `gpu.wait` after it:
// `gpu-to-llvm` lowers only those, and sbp's runtime turns the stream they
// create and wait for into the rank's own stream, so they cost nothing and
// stay in program order with the kernels.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPGPUBUFFERSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Creates an asynchronous gpu op with `create(tokenType, dependency)`
/// after a fresh token, and waits for the op's token.
template <typename Create>
auto createAndWait(OpBuilder &builder, Location loc, Create create) {
  Type tokenType = builder.getType<gpu::AsyncTokenType>();
  Value token = gpu::WaitOp::create(builder, loc, tokenType, ValueRange())
                    .getAsyncToken();
  auto op = create(tokenType, ValueRange{token});
  gpu::WaitOp::create(builder, loc, Type(), ValueRange{op.getAsyncToken()});
  return op;
}

/// A device buffer of `type` with dynamic sizes `sizes`.
Value allocate(OpBuilder &builder, Location loc, MemRefType type,
               ValueRange sizes) {
  return createAndWait(builder, loc,
                       [&](Type tokenType, ValueRange dependencies) {
                         return gpu::AllocOp::create(
                             builder, loc, type, tokenType, dependencies, sizes,
                             ValueRange(), /*hostShared=*/false);
                       })
      .getMemref();
}

/// Frees device buffer `buffer` (any view of it: its base is freed).
void deallocate(OpBuilder &builder, Location loc, Value buffer) {
  auto base = memref::ExtractStridedMetadataOp::create(builder, loc, buffer)
                  .getBaseBuffer();
  createAndWait(builder, loc, [&](Type tokenType, ValueRange dependencies) {
    return gpu::DeallocOp::create(builder, loc, tokenType, dependencies, base);
  });
}

/// Replaces the host global that `get` reads (a bufferized constant: the
/// weights of an imported model) with a device copy, freed at the end of
/// the block that reads it. Kernels cannot read host memory.
void uploadGlobal(memref::GetGlobalOp get) {
  OpBuilder builder(get->getContext());
  builder.setInsertionPointAfter(get);
  Location loc = get.getLoc();
  Value device =
      allocate(builder, loc, cast<MemRefType>(get.getType()), ValueRange());
  get.getResult().replaceAllUsesWith(device);
  createAndWait(builder, loc, [&](Type tokenType, ValueRange dependencies) {
    return gpu::MemcpyOp::create(builder, loc, tokenType, dependencies, device,
                                 get.getResult());
  });
  builder.setInsertionPoint(get->getBlock()->getTerminator());
  deallocate(builder, loc, device);
}

/// Reads the element that host code loads from a device buffer (a tensor
/// element that decides a branch or a loop) through copies: the element
/// into a one-element device buffer, a kernel after `sbp-linalg-to-gpu`,
/// then that buffer into a host one, which the host waits for.
void readThroughHost(memref::LoadOp load) {
  OpBuilder builder(load);
  Location loc = load.getLoc();
  MemRefType type = load.getMemRefType();
  int64_t rank = type.getRank();
  auto elementType =
      MemRefType::get(SmallVector<int64_t>(rank, 1), type.getElementType());
  Value element = load.getMemref();
  if (rank) {
    SmallVector<OpFoldResult> offsets(load.getIndices());
    SmallVector<OpFoldResult> ones(rank, builder.getIndexAttr(1));
    element =
        memref::SubViewOp::create(builder, loc, element, offsets, ones, ones);
  }
  Value device = allocate(builder, loc, elementType, ValueRange());
  memref::CopyOp::create(builder, loc, element, device);
  // The host buffer sits at the top of the function: a loop's condition
  // reads through it at every iteration.
  Operation *scope =
      load->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
  OpBuilder top = OpBuilder::atBlockBegin(&scope->getRegion(0).front());
  Value host = memref::AllocaOp::create(top, loc, elementType);
  createAndWait(builder, loc, [&](Type tokenType, ValueRange dependencies) {
    return gpu::MemcpyOp::create(builder, loc, tokenType, dependencies, host,
                                 device);
  });
  deallocate(builder, loc, device);
  SmallVector<Value> zeros(rank,
                           arith::ConstantIndexOp::create(builder, loc, 0));
  load.replaceAllUsesWith(
      memref::LoadOp::create(builder, loc, host, zeros).getResult());
  load.erase();
}

/// The base address of `buffer`, as a host integer.
Value getBaseAddress(OpBuilder &builder, Location loc, Value buffer) {
  auto base = memref::ExtractStridedMetadataOp::create(builder, loc, buffer)
                  .getBaseBuffer();
  return memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, base);
}

/// Lowers `bufferization.dealloc` (see its semantics upstream): buffer i
/// is freed when its condition holds, it is none of the retained buffers
/// and no earlier buffer of the list with the same base was freed; a
/// retained buffer is owned when a buffer with its base had a true
/// condition.
void lowerDealloc(bufferization::DeallocOp dealloc) {
  OpBuilder builder(dealloc);
  Location loc = dealloc.getLoc();
  SmallVector<Value> retained;
  for (Value value : dealloc.getRetained())
    retained.push_back(getBaseAddress(builder, loc, value));
  Value falseValue = arith::ConstantIntOp::create(builder, loc, 0, 1);
  SmallVector<Value> owned(retained.size(), falseValue);
  SmallVector<Value> addresses, freed;
  for (auto [buffer, condition] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
    Value address = getBaseAddress(builder, loc, buffer);
    Value doFree = condition;
    for (auto [i, other] : llvm::enumerate(retained)) {
      Value same = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                         address, other);
      owned[i] = arith::OrIOp::create(
          builder, loc, owned[i],
          arith::AndIOp::create(builder, loc, same, condition));
      Value differs = arith::XOrIOp::create(
          builder, loc, same, arith::ConstantIntOp::create(builder, loc, 1, 1));
      doFree = arith::AndIOp::create(builder, loc, doFree, differs);
    }
    for (auto [earlier, wasFreed] : llvm::zip(addresses, freed)) {
      Value same = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                         address, earlier);
      Value again = arith::AndIOp::create(builder, loc, same, wasFreed);
      doFree = arith::AndIOp::create(
          builder, loc, doFree,
          arith::XOrIOp::create(
              builder, loc, again,
              arith::ConstantIntOp::create(builder, loc, 1, 1)));
    }
    auto ifOp = scf::IfOp::create(builder, loc, doFree);
    OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
    deallocate(thenBuilder, loc, buffer);
    addresses.push_back(address);
    freed.push_back(doFree);
  }
  dealloc.replaceAllUsesWith(owned);
  dealloc.erase();
}

struct SbpGpuBuffersPass
    : public sbp::impl::SbpGpuBuffersPassBase<SbpGpuBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk(uploadGlobal);
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (isa<memref::AllocaOp>(op))
        return op->emitOpError() << "allocates on the host stack; the GPU "
                                    "lowering keeps buffers in device memory",
               WalkResult::interrupt();
      if (isa<memref::AllocOp, memref::DeallocOp, bufferization::CloneOp,
              bufferization::DeallocOp>(op) ||
          (isa<memref::LoadOp>(op) && !op->getParentOfType<linalg::LinalgOp>()))
        ops.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (Operation *op : ops) {
      OpBuilder builder(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        alloc.replaceAllUsesWith(
            allocate(builder, loc, alloc.getType(), alloc.getDynamicSizes()));
      } else if (auto clone = dyn_cast<bufferization::CloneOp>(op)) {
        auto type = cast<MemRefType>(clone.getType());
        auto dense = MemRefType::get(type.getShape(), type.getElementType());
        if (!memref::CastOp::areCastCompatible(dense, type)) {
          clone.emitOpError() << "clones into layout " << type.getLayout()
                              << ", which a fresh dense buffer cannot take";
          return signalPassFailure();
        }
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(
                memref::DimOp::create(builder, loc, clone.getInput(), d));
        // A clone of a strided view is a fresh dense buffer seen through
        // the clone's type.
        Value copy = allocate(builder, loc, dense, sizes);
        memref::CopyOp::create(builder, loc, clone.getInput(), copy);
        if (dense != type)
          copy = memref::CastOp::create(builder, loc, type, copy);
        clone.replaceAllUsesWith(copy);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        deallocate(builder, loc, dealloc.getMemref());
      } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
        readThroughHost(load);
        continue;
      } else {
        lowerDealloc(cast<bufferization::DeallocOp>(op));
        continue;
      }
      op->erase();
    }
  }
};

} // namespace
