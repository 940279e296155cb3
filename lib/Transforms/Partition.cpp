//===- Partition.cpp - Rewrite to the per-device program ------------------===//

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Transforms/LocalShapes.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/ShardingState.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPPARTITIONPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

class FunctionPartitioner {
public:
  FunctionPartitioner(FunctionOpInterface func, MeshOp mesh)
      : func(func), mesh(mesh), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// The local type of a value of type `type` laid out as `layout`.
  Type localType(Type type, NdSbpAttr layout) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !layout)
      return type;
    return getLocalType(tensor, layout.getEntries(), mesh);
  }
  /// The size of dimension `dim` of local value `value`.
  OpFoldResult localDim(Location loc, Value value, int64_t dim) {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.isDynamicDim(dim))
      return builder.getIndexAttr(type.getDimSize(dim));
    return tensor::DimOp::create(builder, loc, value, dim).getResult();
  }
  /// Offsets each `linalg.index` of a loop the op's layouts split by where
  /// the device's piece starts, so that payloads see global indices.
  void offsetIndices(linalg::LinalgOp op);
  LogicalResult partitionSignature();
  LogicalResult partitionOp(Operation *op);
  Value rebuild(Operation *op, ArrayRef<NdSbpAttr> operands,
                ArrayRef<NdSbpAttr> results);

  FunctionOpInterface func;
  MeshOp mesh;
  OpBuilder builder;
};

void FunctionPartitioner::offsetIndices(linalg::LinalgOp op) {
  SmallVector<linalg::IndexOp> indices;
  llvm::SmallDenseSet<int64_t> readLoops;
  op.getBlock()->walk([&](linalg::IndexOp index) {
    indices.push_back(index);
    readLoops.insert(index.getDim());
  });
  if (indices.empty())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The offset of each loop's piece, from an operand indexed by the loop
  // alone along one dimension.
  DenseMap<unsigned, OpFoldResult> offsets;
  builder.setInsertionPoint(op);
  for (OpOperand &operand : op->getOpOperands()) {
    NdSbpAttr layout = getUseSharding(operand);
    if (!layout || layout.isReplicated())
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<int64_t> loops;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      loops.push_back(dim ? static_cast<int64_t>(dim.getPosition()) : -1);
    }
    // Only the dimensions of loops the payload reads need an offset.
    SmallVector<SbpEntry> entries;
    for (SbpEntry entry : layout.getEntries())
      entries.push_back(entry.isSplit() &&
                                readLoops.contains(loops[entry.getDim()])
                            ? entry
                            : SbpEntry::broadcast());
    if (llvm::none_of(entries, [](SbpEntry e) { return e.isSplit(); }))
      continue;
    SmallVector<int64_t> shape;
    for (int64_t loop : loops)
      shape.push_back(loop >= 0 ? ranges[loop] : 1);
    SmallVector<OpFoldResult> starts =
        getLocalOffsets(builder, op.getLoc(), mesh, shape, entries);
    for (auto [dim, start] : llvm::enumerate(starts))
      if (!isConstantIntValue(start, 0))
        offsets.try_emplace(loops[dim], start);
  }
  for (linalg::IndexOp index : indices) {
    OpFoldResult offset = offsets.lookup(index.getDim());
    if (!offset)
      continue;
    builder.setInsertionPointAfter(index);
    auto shifted = arith::AddIOp::create(
        builder, index.getLoc(), index,
        getValueOrCreateConstantIndexOp(builder, index.getLoc(), offset));
    index.getResult().replaceAllUsesExcept(shifted, shifted);
  }
}

LogicalResult FunctionPartitioner::partitionSignature() {
  StringRef name = SbpDialect::getShardingAttrName();
  Block &entry = func.getFunctionBody().front();
  SmallVector<Type> inputs;
  for (BlockArgument arg : entry.getArguments()) {
    auto layout = func.getArgAttrOfType<NdSbpAttr>(arg.getArgNumber(), name);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (layout && type && !type.hasStaticShape() && !layout.isReplicated())
      return func.emitError()
             << "cannot partition argument #" << arg.getArgNumber()
             << " of dynamic type " << type << ": split sizes must be static";
    arg.setType(localType(arg.getType(), layout));
    inputs.push_back(arg.getType());
  }
  SmallVector<Type> results;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    results.push_back(
        localType(type, func.getResultAttrOfType<NdSbpAttr>(index, name)));
  func.setType(FunctionType::get(func.getContext(), inputs, results));
  return success();
}

/// Ops whose attributes or operands encode sizes are rebuilt with local
/// sizes; returns their replacement, or null for ops that only need their
/// result types changed.
Value FunctionPartitioner::rebuild(Operation *op, ArrayRef<NdSbpAttr> operands,
                                   ArrayRef<NdSbpAttr> results) {
  Location loc = op->getLoc();
  builder.setInsertionPoint(op);
  auto globalType = [&](unsigned i) {
    return cast<RankedTensorType>(op->getResult(i).getType());
  };
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    if (!empty.getType().hasStaticShape() || !results[0])
      return {};
    return tensor::EmptyOp::create(builder, loc,
                                   getLocalSizes(builder, loc, mesh,
                                                 empty.getType().getShape(),
                                                 results[0].getEntries()),
                                   empty.getType().getElementType());
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (!results[0] || results[0].isReplicated())
      return {};
    // Every device materializes the whole constant and keeps its piece.
    auto whole = arith::ConstantOp::create(builder, loc, constant.getValue());
    SmallVector<SbpEntry> replicated(mesh.getRank(), SbpEntry::broadcast());
    return lowerBoxing(builder, loc, mesh, whole, globalType(0), replicated,
                       results[0].getEntries());
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    auto type = cast<RankedTensorType>(localType(globalType(0), results[0]));
    return tensor::ExpandShapeOp::create(builder, loc, type, expand.getSrc(),
                                         expand.getReassociationIndices());
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // Split dimensions are taken whole: their size is the local size.
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    for (const SbpEntry &entry : operands[0].getEntries())
      if (entry.isSplit())
        sizes[entry.getDim()] =
            localDim(loc, slice.getSource(), entry.getDim());
    auto type = cast<RankedTensorType>(localType(globalType(0), results[0]));
    return tensor::ExtractSliceOp::create(builder, loc, type, slice.getSource(),
                                          slice.getMixedOffsets(), sizes,
                                          slice.getMixedStrides());
  }
  if (auto slice = dyn_cast<tensor::InsertSliceOp>(op)) {
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    for (const SbpEntry &entry : operands[1].getEntries())
      if (entry.isSplit())
        sizes[entry.getDim()] = localDim(loc, slice.getDest(), entry.getDim());
    return tensor::InsertSliceOp::create(
        builder, loc, slice.getSource(), slice.getDest(),
        slice.getMixedOffsets(), sizes, slice.getMixedStrides());
  }
  return {};
}

LogicalResult FunctionPartitioner::partitionOp(Operation *op) {
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    annotate.replaceAllUsesWith(annotate.getInput());
    annotate.erase();
    return success();
  }
  if (auto boxing = dyn_cast<BoxingOp>(op)) {
    if (!boxing.getType().hasStaticShape())
      return boxing.emitOpError() << "cannot be partitioned: the boxed tensor "
                                  << boxing.getType() << " has dynamic sizes";
    builder.setInsertionPoint(boxing);
    Value local = lowerBoxing(builder, boxing.getLoc(), mesh, boxing.getInput(),
                              boxing.getType(), boxing.getSrc().getEntries(),
                              boxing.getDst().getEntries());
    boxing.replaceAllUsesWith(local);
    boxing.erase();
    return success();
  }
  auto array =
      op->getAttrOfType<ArrayAttr>(SbpDialect::getResultShardingsAttrName());
  if (!array)
    return success();
  SmallVector<NdSbpAttr> operands, results;
  for (OpOperand &operand : op->getOpOperands())
    operands.push_back(getUseSharding(operand));
  for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
    results.push_back(getValueSharding(op->getResult(i)));
  clearOpShardings(op);

  // Ops that take sizes from attributes or operands would keep the global
  // size of a dynamic dimension; split dimensions must be static there.
  if (isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::ExtractSliceOp,
          tensor::InsertSliceOp>(op))
    for (auto [result, layout] : llvm::zip(op->getResults(), results)) {
      auto type = cast<RankedTensorType>(result.getType());
      for (const SbpEntry &entry :
           layout ? layout.getEntries() : ArrayRef<SbpEntry>())
        if (entry.isSplit() && type.isDynamicDim(entry.getDim()))
          return op->emitOpError()
                 << "cannot be partitioned: it splits dimension "
                 << entry.getDim() << " of " << type
                 << ", whose size is dynamic";
    }

  if (Value replacement = rebuild(op, operands, results)) {
    // Annotations of other passes (a pipeline stage) stay with the op.
    if (Operation *rebuilt = replacement.getDefiningOp())
      rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
    return success();
  }
  for (auto [result, layout] : llvm::zip(op->getResults(), results))
    result.setType(localType(result.getType(), layout));
  if (auto loop = dyn_cast<scf::ForOp>(op))
    for (auto [arg, result] :
         llvm::zip(loop.getRegionIterArgs(), loop.getResults()))
      arg.setType(result.getType());
  return success();
}

LogicalResult FunctionPartitioner::run() {
  // While the types are still global.
  func.getFunctionBody().walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(SbpDialect::getResultShardingsAttrName()))
      offsetIndices(op);
  });
  if (failed(partitionSignature()))
    return failure();
  SmallVector<Operation *> ops;
  func.getFunctionBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops)
    if (failed(partitionOp(op)))
      return failure();
  return success();
}

/// The mesh of the layouts recorded in `func`, or null when it has none.
MeshOp findRecordedMesh(FunctionOpInterface func) {
  NdSbpAttr found;
  StringRef name = SbpDialect::getShardingAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e && !found; ++i)
    found = func.getArgAttrOfType<NdSbpAttr>(i, name);
  for (unsigned i = 0, e = func.getNumResults(); i < e && !found; ++i)
    found = func.getResultAttrOfType<NdSbpAttr>(i, name);
  if (!found)
    func.walk([&](Operation *op) {
      if (auto boxing = dyn_cast<BoxingOp>(op))
        found = boxing.getSrc();
      for (Value result : op->getResults())
        if (!found)
          found = getValueSharding(result);
      return found ? WalkResult::interrupt() : WalkResult::advance();
    });
  return found ? lookupMesh(func, found.getMesh()) : MeshOp();
}

struct SbpPartitionPass
    : public sbp::impl::SbpPartitionPassBase<SbpPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      MeshOp mesh = findRecordedMesh(func);
      if (!mesh)
        continue;
      if (failed(FunctionPartitioner(func, mesh).run()))
        return signalPassFailure();
      getOperation()->setAttr(SbpDialect::getPartitionedAttrName(),
                              UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
