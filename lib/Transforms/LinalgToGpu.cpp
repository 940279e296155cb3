//===- LinalgToGpu.cpp - Structured ops on buffers as kernel launches -----===//
//
// One thread per point of the parallel loops is the mapping that keeps a
// fused element-wise chain at the memory bandwidth (each element read and
// written once, neighbouring threads on neighbouring addresses) and needs
// no shared memory; reductions run serially per output point, which suits
// the short normalization reductions of the models we lower. Contractions
// go to cuBLAS before this pass.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPLINALGTOGPUPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `op` can address all its buffers by one flat index: every map
/// is the identity, every loop parallel, every buffer dense.
bool isFlat(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 0 || op.getNumLoops() < 2 ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (type && (!type.getLayout().isIdentity() ||
                 !op.getMatchingIndexingMap(&operand).isIdentity()))
      return false;
  }
  return true;
}

/// Whether `op` writes an output at a reduction loop's index: several
/// points of its reduction loops then write one element (a gradient
/// scattered through a convolution's `h + kh`, or a fused chain whose
/// element-wise outputs span the reduction loops), so its kernel has a
/// thread per point of every loop.
bool writesAtReduction(linalg::LinalgOp op) {
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  return llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    return llvm::any_of(reductions, [&](unsigned d) {
      return op.getMatchingIndexingMap(&init).isFunctionOfDim(d);
    });
  });
}

/// Whether each point of `op`'s loops has output `init`'s element to
/// itself.
bool isOwnedPerPoint(linalg::LinalgOp op, OpOperand &init) {
  return op.getMatchingIndexingMap(&init).isPermutation();
}

/// The atomic kind with which a thread adds its term into output `init`,
/// which several points write: the payload must yield `init + term`, the
/// term reading no such output. None otherwise.
std::optional<arith::AtomicRMWKind> getAtomicAdd(linalg::LinalgOp op,
                                                 OpOperand &init) {
  BlockArgument arg = op.getMatchingBlockArgument(&init);
  Value yielded = op.getBlock()->getTerminator()->getOperand(
      init.getOperandNumber() - op.getNumDpsInputs());
  Operation *add = yielded.getDefiningOp();
  if (!add || !arg.hasOneUse() || arg.getUses().begin()->getOwner() != add ||
      !yielded.hasOneUse() || add->getOperand(0) == add->getOperand(1))
    return std::nullopt;
  if (isa<arith::AddFOp>(add))
    return arith::AtomicRMWKind::addf;
  if (isa<arith::AddIOp>(add))
    return arith::AtomicRMWKind::addi;
  return std::nullopt;
}

/// Emits the kernel of one op.
class KernelEmitter {
public:
  /// `filled` maps outputs of `op` that a fill just before it set to a
  /// constant: their elements start from that value instead of a load.
  KernelEmitter(linalg::LinalgOp op, int64_t blockSize, IRMapping filled)
      : op(op), blockSize(blockSize), builder(op), loc(op.getLoc()),
        filled(std::move(filled)) {}

  void emit();

private:
  /// The body of the thread of parallel point `linear`.
  void emitThread(OpBuilder &b, Value linear);
  /// Values of the op's payload at loop point `ivs` given the outputs'
  /// current values `outputs`.
  SmallVector<Value> emitPayload(OpBuilder &b, ValueRange ivs,
                                 ValueRange outputs);
  /// The element of operand `operand` at loop point `ivs`.
  Value load(OpBuilder &b, OpOperand &operand, ValueRange ivs);
  void store(OpBuilder &b, Value value, OpOperand &operand, ValueRange ivs);
  /// Loop extent `d` inside the kernel: a constant when static.
  Value getExtent(OpBuilder &b, int64_t d);

  linalg::LinalgOp op;
  int64_t blockSize;
  OpBuilder builder;
  Location loc;
  /// Host values of the loop extents, and their static values.
  SmallVector<Value> extents;
  SmallVector<int64_t> staticExtents;
  /// Flat views of the buffers when the op is addressed flat.
  IRMapping flatBuffers;
  IRMapping filled;
  /// A thread per point of every loop, adding atomically into the outputs
  /// that several points write (writesAtReduction).
  bool scatter = writesAtReduction(op);
};

Value KernelEmitter::getExtent(OpBuilder &b, int64_t d) {
  if (!ShapedType::isDynamic(staticExtents[d]))
    return arith::ConstantIndexOp::create(b, loc, staticExtents[d]);
  return extents[d];
}

Value KernelEmitter::load(OpBuilder &b, OpOperand &operand, ValueRange ivs) {
  Value buffer = flatBuffers.lookupOrDefault(operand.get());
  if (!isa<MemRefType>(buffer.getType()))
    return buffer;
  if (buffer != operand.get())
    return memref::LoadOp::create(b, loc, buffer, ivs.take_front(1));
  SmallVector<Value> indices =
      affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&operand), ivs)
          .value();
  return memref::LoadOp::create(b, loc, buffer, indices);
}

void KernelEmitter::store(OpBuilder &b, Value value, OpOperand &operand,
                          ValueRange ivs) {
  Value buffer = flatBuffers.lookupOrDefault(operand.get());
  if (buffer != operand.get()) {
    memref::StoreOp::create(b, loc, value, buffer, ivs.take_front(1));
    return;
  }
  SmallVector<Value> indices =
      affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&operand), ivs)
          .value();
  memref::StoreOp::create(b, loc, value, buffer, indices);
}

SmallVector<Value> KernelEmitter::emitPayload(OpBuilder &b, ValueRange ivs,
                                              ValueRange outputs) {
  Block *body = op.getBlock();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (!arg.use_empty())
      mapping.map(arg, load(b, *input, ivs));
  }
  for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), outputs))
    if (value)
      mapping.map(op.getMatchingBlockArgument(&init), value);
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> results;
  for (Value yielded : body->getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(yielded));
  return results;
}

void KernelEmitter::emitThread(OpBuilder &b, Value linear) {
  int64_t numLoops = op.getNumLoops();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> ivs(numLoops, zero);
  SmallVector<int64_t> parallel, reduction;
  for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? parallel : reduction).push_back(d);
  if (scatter) {
    parallel = llvm::to_vector(llvm::seq<int64_t>(0, numLoops));
    reduction.clear();
  }
  if (!flatBuffers.getValueMap().empty()) {
    ivs[0] = linear;
  } else {
    // Innermost parallel loop fastest: neighbouring threads, neighbouring
    // elements.
    Value rest = linear;
    for (auto [i, d] : llvm::enumerate(llvm::reverse(parallel))) {
      if (i + 1 == parallel.size()) {
        ivs[d] = rest;
        break;
      }
      Value extent = getExtent(b, d);
      ivs[d] = arith::RemUIOp::create(b, loc, rest, extent);
      rest = arith::DivUIOp::create(b, loc, rest, extent);
    }
  }

  // Outputs that the payload reads start from their stored values, or
  // from the value a fill would have stored.
  SmallVector<Value> outputs;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    bool read =
        reduction.size() || !op.getMatchingBlockArgument(&init).use_empty();
    if (scatter && !isOwnedPerPoint(op, init)) {
      // The payload's `init + term` is then the term: -0.0 is the float
      // sum's exact identity.
      Type type = op.getMatchingBlockArgument(&init).getType();
      TypedAttr zero = isa<FloatType>(type)
                           ? TypedAttr(b.getFloatAttr(type, -0.0))
                           : b.getZeroAttr(type);
      outputs.push_back(arith::ConstantOp::create(b, loc, zero));
    } else if (!read)
      outputs.push_back(Value());
    else if (Value value = filled.lookupOrNull(init.get()))
      outputs.push_back(value);
    else
      outputs.push_back(load(b, init, ivs));
  }
  if (reduction.empty()) {
    outputs = emitPayload(b, ivs, outputs);
  } else {
    // The reduction loops, outermost first, carry the outputs.
    std::function<SmallVector<Value>(OpBuilder &, size_t, ValueRange)> nest =
        [&](OpBuilder &nb, size_t level, ValueRange carried) {
          if (level == reduction.size())
            return emitPayload(nb, ivs, carried);
          int64_t d = reduction[level];
          auto loop = scf::ForOp::create(
              nb, loc, zero, getExtent(nb, d),
              arith::ConstantIndexOp::create(nb, loc, 1), carried,
              [&](OpBuilder &lb, Location, Value iv, ValueRange args) {
                ivs[d] = iv;
                scf::YieldOp::create(lb, loc, nest(lb, level + 1, args));
              });
          ivs[d] = zero;
          return SmallVector<Value>(loop.getResults());
        };
    outputs = nest(b, 0, outputs);
  }
  for (auto [value, init] : llvm::zip(outputs, op.getDpsInitsMutable())) {
    if (!scatter || isOwnedPerPoint(op, init)) {
      store(b, value, init, ivs);
      continue;
    }
    SmallVector<Value> indices =
        affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&init), ivs)
            .value();
    memref::AtomicRMWOp::create(b, loc, *getAtomicAdd(op, init), value,
                                init.get(), indices);
  }
}

void KernelEmitter::emit() {
  for (Range range : op.createLoopRanges(builder, loc))
    extents.push_back(
        getValueOrCreateConstantIndexOp(builder, loc, range.size));
  staticExtents = op.getStaticLoopRanges();

  Value total = arith::ConstantIndexOp::create(builder, loc, 1);
  int64_t staticTotal = 1;
  for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::parallel && !scatter)
      continue;
    total = arith::MulIOp::create(builder, loc, total, extents[d]);
    staticTotal = ShapedType::isDynamic(staticExtents[d]) ||
                          ShapedType::isDynamic(staticTotal)
                      ? ShapedType::kDynamic
                      : staticTotal * staticExtents[d];
  }
  if (staticTotal == 0)
    return;
  if (isFlat(op)) {
    for (Value buffer : op->getOperands()) {
      auto type = dyn_cast<MemRefType>(buffer.getType());
      if (!type || flatBuffers.contains(buffer))
        continue;
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      flatBuffers.map(buffer, memref::CollapseShapeOp::create(
                                  builder, loc, buffer,
                                  ArrayRef<ReassociationIndices>{all}));
    }
  }

  // Ops of no points launch nothing.
  OpBuilder b = builder;
  if (ShapedType::isDynamic(staticTotal)) {
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value nonEmpty = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::ugt, total, zero);
    auto ifOp = scf::IfOp::create(builder, loc, nonEmpty);
    b = ifOp.getThenBodyBuilder();
  }
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value linear = arith::AddIOp::create(
      kb, loc,
      arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                            arith::ConstantIndexOp::create(kb, loc, blockSize)),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = scf::IfOp::create(kb, loc, inRange);
  OpBuilder tb = guard.getThenBodyBuilder();
  emitThread(tb, linear);
  gpu::TerminatorOp::create(kb, loc);
}

/// Outputs of `op` that a `linalg.fill` just before it (nothing but pure
/// ops between them) fills with a scalar, mapped to that scalar; those
/// fills are erased and nulled in `ops`. The op writes every element of
/// its outputs, so starting from the scalar is the same as reading the
/// filled buffer, with one kernel fewer.
IRMapping takeFills(linalg::LinalgOp op,
                    MutableArrayRef<linalg::LinalgOp> ops) {
  IRMapping filled;
  SmallVector<linalg::FillOp> fills;
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (!fill) {
      if (isMemoryEffectFree(prev))
        continue;
      break;
    }
    Value buffer = fill.getDpsInits()[0];
    if (!llvm::is_contained(op.getDpsInits(), buffer) ||
        llvm::is_contained(op.getDpsInputs(), buffer) ||
        filled.contains(buffer))
      break;
    filled.map(buffer, fill.getDpsInputs()[0]);
    fills.push_back(fill);
  }
  for (linalg::FillOp fill : fills) {
    for (linalg::LinalgOp &other : ops)
      if (other && other.getOperation() == fill.getOperation())
        other = nullptr;
    fill->erase();
  }
  return filled;
}

struct SbpLinalgToGpuPass
    : public sbp::impl::SbpLinalgToGpuPassBase<SbpLinalgToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError()
          << "sbp-linalg-to-gpu: block-size must be in [1, 1024], not "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    // Copies are structured ops too.
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    // An op written at its reduction loops' indices runs a thread per
    // point of all its loops, which add into the shared outputs
    // atomically: only sums can be added that way.
    for (linalg::LinalgOp op : ops) {
      if (!writesAtReduction(op))
        continue;
      for (OpOperand &init : op.getDpsInitsMutable())
        if (!isOwnedPerPoint(op, init) && !getAtomicAdd(op, init)) {
          op->emitOpError()
              << "writes output #"
              << init.getOperandNumber() - op.getNumDpsInputs()
              << " from several points of its reduction loops and yields "
                 "other than a sum into it; the GPU lowering adds such "
                 "outputs atomically (out + term)";
          return signalPassFailure();
        }
    }
    // Fills are taken before any op becomes a launch, while they still sit
    // next to their consumers. An op adding atomically needs its fills
    // done first.
    DenseMap<Operation *, IRMapping> fillsOf;
    for (linalg::LinalgOp &op : ops)
      if (op && !writesAtReduction(op))
        fillsOf[op] = takeFills(op, ops);
    for (linalg::LinalgOp op : ops) {
      if (!op)
        continue;
      KernelEmitter(op, blockSize, fillsOf[op]).emit();
      op->erase();
    }

    // Buffers live in device memory: the host must not touch them.
    WalkResult walk = getOperation().walk([](Operation *op) {
      // sbp-gpu-buffers reads device elements through host allocas.
      if (auto load = dyn_cast<memref::LoadOp>(op))
        if (load.getMemref().getDefiningOp<memref::AllocaOp>())
          return WalkResult::advance();
      if (!isa<memref::LoadOp, memref::StoreOp, vector::TransferReadOp,
               vector::TransferWriteOp, vector::LoadOp, vector::StoreOp,
               affine::AffineLoadOp, affine::AffineStoreOp, linalg::LinalgOp>(
              op) ||
          op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>())
        return WalkResult::advance();
      op->emitOpError() << "accesses a buffer on the host; the GPU lowering "
                           "keeps every tensor in device memory";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
