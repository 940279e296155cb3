//===- EmulateGpu.cpp - Kernels as host loops, for testing ----------------===//

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPEMULATEGPUPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Runs `launch`'s body for every block and thread, in order.
LogicalResult emulate(gpu::LaunchOp launch) {
  if (launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
      launch.getAsyncToken())
    return launch.emitOpError(
        "uses shared memory, clusters or async tokens; sbp-emulate-gpu runs "
        "plain launches only");
  OpBuilder builder(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> bounds = {grid.z,  grid.y,  grid.x,
                               block.z, block.y, block.x};
  SmallVector<Value> ivs;
  for (Value bound : bounds) {
    auto loop = scf::ForOp::create(builder, loc, zero, bound, one);
    ivs.push_back(loop.getInductionVar());
    builder.setInsertionPointToStart(loop.getBody());
  }
  IRMapping mapping;
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridSizes = launch.getGridSize();
  gpu::KernelDim3 blockSizes = launch.getBlockSize();
  mapping.map(blockIds.z, ivs[0]);
  mapping.map(blockIds.y, ivs[1]);
  mapping.map(blockIds.x, ivs[2]);
  mapping.map(threadIds.z, ivs[3]);
  mapping.map(threadIds.y, ivs[4]);
  mapping.map(threadIds.x, ivs[5]);
  mapping.map(gridSizes.x, grid.x);
  mapping.map(gridSizes.y, grid.y);
  mapping.map(gridSizes.z, grid.z);
  mapping.map(blockSizes.x, block.x);
  mapping.map(blockSizes.y, block.y);
  mapping.map(blockSizes.z, block.z);
  Block &body = launch.getBody().front();
  if (!llvm::hasSingleElement(launch.getBody()))
    return launch.emitOpError("has several blocks; sbp-emulate-gpu runs "
                              "single-block launches only");
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  launch.erase();
  return success();
}

struct SbpEmulateGpuPass
    : public sbp::impl::SbpEmulateGpuPassBase<SbpEmulateGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        launches.push_back(launch);
      else if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp, gpu::WaitOp>(
                   op))
        ops.push_back(op);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
    for (Operation *op : ops) {
      OpBuilder builder(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        auto host = memref::AllocOp::create(
            builder, op->getLoc(), alloc.getMemref().getType(),
            alloc.getDynamicSizes(), alloc.getSymbolOperands());
        alloc.getMemref().replaceAllUsesWith(host);
      } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        memref::DeallocOp::create(builder, op->getLoc(), dealloc.getMemref());
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        memref::CopyOp::create(builder, op->getLoc(), copy.getSrc(),
                               copy.getDst());
      }
    }
    // Tokens only ordered work that now runs in program order; their users
    // are among the ops erased.
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
  }
};

} // namespace
