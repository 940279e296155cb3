//===- Pipelining.cpp - Micro-batches and pipeline stages -----------------===//
//
// Micro-batching is an SBP partition along a virtual mesh axis whose
// "devices" are the micro-batches, run one after another: the batch
// arguments are `S(0)` on it, the parameters `B`, and a plan is legal when
// no value changes layout on the way (that would be communication between
// micro-batches). A result left `S(d)` is concatenated, one left `P(sum)`
// summed (a mean over the batch is a sum scaled by the global size, so it
// stays exact).
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/Pipelining.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "sbp/Dialect/Sbp/Utils/Casts.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Propagation.h"
#include "sbp/Transforms/ShardingState.h"
#include "llvm/ADT/SetVector.h"
#include <map>

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Whether `func` carries layout constraints of its own.
bool hasLayoutAnnotations(func::FuncOp func) {
  StringRef name = SbpDialect::getShardingAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, name))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, name))
      return true;
  return func
      .walk([](Operation *op) {
        return isa<AnnotateOp, BoxingOp>(op) ? WalkResult::interrupt()
                                             : WalkResult::advance();
      })
      .wasInterrupted();
}

/// How the micro-batches of a result laid out as `layout` make the whole;
/// nothing for a partial max or min (not a pipeline output).
std::optional<MicroBatchResult> getCombine(NdSbpAttr layout) {
  MicroBatchResult combine;
  if (!layout || layout.isReplicated())
    return combine;
  SbpEntry entry = layout.getEntries()[0];
  if (entry.isSplit()) {
    combine.kind = MicroBatchResult::Concat;
    combine.dim = entry.getDim();
    return combine;
  }
  if (entry.getReduction() != ReductionKind::Sum)
    return std::nullopt;
  combine.kind = MicroBatchResult::Sum;
  return combine;
}

int64_t indexOf(const llvm::SetVector<Value> &values, Value value) {
  return llvm::find(values.getArrayRef(), value) - values.begin();
}

const char *getCombineName(MicroBatchResult::Kind kind) {
  switch (kind) {
  case MicroBatchResult::Concat:
    return "concat";
  case MicroBatchResult::Sum:
    return "sum";
  case MicroBatchResult::Same:
    return "same";
  }
  return "same";
}

} // namespace

SmallVector<int64_t> sbp::getDefaultBatchArgs(func::FuncOp func) {
  // Dimension 0 of a batch is a parallel loop of every op that reads it
  // (of a weight, often a reduction: the k of x * w). A copy into another
  // element type (a master weight cast to the compute type) is the value
  // itself: its readers count.
  std::function<bool(Value, bool &)> readsRowsInParallel = [&](Value value,
                                                               bool &used) {
    for (OpOperand &use : value.getUses()) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!linalgOp)
        continue;
      if (isElementTypeCopy(linalgOp)) {
        if (!readsRowsInParallel(linalgOp->getResult(0), used))
          return false;
        continue;
      }
      AffineMap map = linalgOp.getMatchingIndexingMap(&use);
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(0));
      if (!dim || linalgOp.getIteratorTypesArray()[dim.getPosition()] !=
                      utils::IteratorType::parallel)
        return false;
      used = true;
    }
    return true;
  };
  auto isParallelRows = [&](BlockArgument arg) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      return false;
    bool used = false;
    return readsRowsInParallel(arg, used) && used;
  };
  SmallVector<BlockArgument> rows =
      llvm::filter_to_vector(func.getArguments(), isParallelRows);
  if (rows.empty())
    return {};
  // Integers (tokens, labels) are always data, so the first of them sets
  // the batch size: a float argument comes first in exported models, and
  // a vector such as BERT's layer-norm scale [768], added along its rows,
  // would make every [768, n] weight a batch.
  const BlockArgument *first = llvm::find_if(rows, [](BlockArgument arg) {
    return isa<IntegerType>(getElementTypeOrSelf(arg.getType()));
  });
  auto getRows = [](BlockArgument arg) {
    return cast<RankedTensorType>(arg.getType()).getDimSize(0);
  };
  int64_t batch = getRows(first != rows.end() ? *first : rows.front());
  SmallVector<int64_t> args;
  for (BlockArgument arg : rows)
    if (getRows(arg) == batch)
      args.push_back(arg.getArgNumber());
  return args;
}

LogicalResult sbp::microBatch(func::FuncOp func, int64_t count,
                              ArrayRef<int64_t> batchArgs,
                              MicroBatching &info) {
  info.count = count;
  info.argDims.assign(func.getNumArguments(), -1);
  info.results.assign(func.getNumResults(), MicroBatchResult());
  for (int64_t arg : batchArgs)
    info.argDims[arg] = 0;
  if (count == 1)
    return success();
  if (batchArgs.empty())
    return emitError(func.getLoc())
           << "cannot cut @" << func.getSymName() << " into " << count
           << " micro-batches: no argument is a batch (its dimension 0 a "
              "parallel loop of the ops that read it); name them with "
              "batch-args";
  if (hasLayoutAnnotations(func))
    return emitError(func.getLoc())
           << "cannot pipeline @" << func.getSymName()
           << ": it has layout annotations (sbp.sharding, sbp.annotate), but "
              "a pipeline chooses the layouts of each stage on its own mesh";
  for (int64_t arg : batchArgs) {
    auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[arg]);
    if (!type || type.getRank() == 0 || type.isDynamicDim(0) ||
        type.getDimSize(0) % count)
      return emitError(func.getLoc())
             << "cannot cut argument #" << arg << " of @" << func.getSymName()
             << " (" << func.getArgumentTypes()[arg] << ") into " << count
             << " micro-batches: its dimension 0 is not a multiple of "
             << count;
  }

  MLIRContext *context = func.getContext();
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  OpBuilder builder = OpBuilder::atBlockBegin(scratch->getBody());
  auto mesh = MeshOp::create(builder, func.getLoc(), "micro_batches",
                             ArrayRef<int64_t>{count}, ArrayAttr());
  auto copy = cast<func::FuncOp>(func->clone());
  scratch->push_back(copy);
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  auto split = NdSbpAttr::get(context, meshRef, {SbpEntry::split(0)});
  for (int64_t arg : batchArgs)
    copy.setArgAttr(arg, SbpDialect::getShardingAttrName(), split);
  // Results with rows of the batch are asked to stay split, so that the
  // propagation keeps the batch split to the end (an all-gather before the
  // return and one further up cost it the same); what the results really
  // are is read back below.
  int64_t rows = cast<RankedTensorType>(func.getArgumentTypes()[batchArgs[0]])
                     .getDimSize(0);
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      if (tensor.getRank() > 0 && tensor.getDimSize(0) == rows)
        copy.setResultAttr(i, SbpDialect::getShardingAttrName(), split);
  cloneCheapValues(copy);
  if (failed(propagateLayouts(copy, mesh, /*maxSweeps=*/8)))
    return failure();

  // A change of layout inside the program would be communication between
  // micro-batches; at the results it is how they are put together.
  WalkResult walk = copy.walk([&](Operation *op) {
    if (!isa<func::ReturnOp>(op) &&
        !op->hasAttr(SbpDialect::getOperandShardingsAttrName()))
      return WalkResult::advance();
    for (OpOperand &use : op->getOpOperands()) {
      NdSbpAttr need = getUseSharding(use), have = getValueSharding(use.get());
      if (isa<func::ReturnOp>(op)) {
        unsigned index = use.getOperandNumber();
        std::optional<MicroBatchResult> combine = getCombine(have);
        if (!combine) {
          op->emitError() << "cannot pipeline @" << func.getSymName()
                          << ": result #" << index << " is a partial "
                          << stringifyReductionKind(
                                 have.getEntries()[0].getReduction())
                          << " over the micro-batches";
          return WalkResult::interrupt();
        }
        info.results[index] = *combine;
        if (have)
          copy.setResultAttr(index, SbpDialect::getShardingAttrName(), have);
        continue;
      }
      if (!need || !have || need == have)
        continue;
      op->emitError() << "cannot cut @" << func.getSymName() << " into "
                      << count << " micro-batches: operand #"
                      << use.getOperandNumber()
                      << " is needed whole over the batch ("
                      << need.toOneFlowString() << ") but each micro-batch has "
                      << have.toOneFlowString();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  PassManager pm(context);
  pm.addPass(createSbpInsertBoxingPass());
  pm.addPass(createSbpPartitionPass());
  if (failed(pm.run(*scratch)))
    return failure();
  walk = copy.walk([&](Operation *op) {
    if (!isa<SbpDialect>(op->getDialect()))
      return WalkResult::advance();
    op->emitError() << "cannot cut @" << func.getSymName() << " into " << count
                    << " micro-batches: this op needs its micro-batch's index";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();

  for (unsigned i = 0, e = copy.getNumArguments(); i < e; ++i)
    copy.removeArgAttr(i, SbpDialect::getShardingAttrName());
  for (unsigned i = 0, e = copy.getNumResults(); i < e; ++i)
    copy.removeResultAttr(
        i, StringAttr::get(context, SbpDialect::getShardingAttrName()));
  func.setFunctionType(copy.getFunctionType());
  func.getBody().takeBody(copy.getBody());
  return success();
}

double sbp::getIterationWork(Operation *op) {
  double work = 0;
  op->walk([&](linalg::LinalgOp linalgOp) {
    double points = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      points *= ShapedType::isDynamic(range) ? 1 : range;
    work += points;
  });
  return work;
}

bool sbp::isCheapToRecompute(Operation *op) {
  // Scalar and dense constants too: every stage may hold its own copy.
  int64_t offset;
  return isa<arith::ConstantOp>(op) || isFreeToRepeat(op) ||
         (op->getNumResults() == 1 &&
          getArgumentRows(op->getResult(0), offset));
}

BlockArgument sbp::getArgumentRows(Value value, int64_t &offset) {
  auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride() ||
      slice.getSourceType().getRank() != slice.getResultType().getRank())
    return nullptr;
  auto arg = dyn_cast<BlockArgument>(slice.getSource());
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
      arg.getOwner() != slice->getBlock())
    return nullptr;
  RankedTensorType type = slice.getSourceType();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> start =
        getConstantIntValue(slice.getMixedOffsets()[d]);
    std::optional<int64_t> size = getConstantIntValue(slice.getMixedSizes()[d]);
    if (!start || !size ||
        (d > 0 && (*start != 0 || *size != type.getDimSize(d))))
      return nullptr;
    if (d == 0)
      offset = *start;
  }
  return arg;
}

namespace {

/// The stacked weights of `loop`, a top-level loop of `func` from 0 to its
/// layer count step 1: the arguments of as many rows it reads only as row
/// `iv`; the count in `layers`. Empty (and `layers` untouched) when `loop`
/// is not such a loop.
SmallVector<BlockArgument> getStackedArgs(func::FuncOp func, scf::ForOp loop,
                                          int64_t &layers) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *lower != 0 || *step != 1 || *upper < 2)
    return {};
  Value iv = loop.getInductionVar();
  // Row `iv` of a stacked argument: the dim-0 offset (the first dynamic
  // one, operand 1) is the layer index and one row is taken.
  auto isLayerRow = [&](OpOperand &use, Value source) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    return slice && slice.getSource() == source &&
           slice.getMixedOffsets()[0] == OpFoldResult(iv) &&
           isConstantIntValue(slice.getMixedSizes()[0], 1) &&
           isConstantIntValue(slice.getMixedStrides()[0], 1);
  };
  SmallVector<BlockArgument> stacked;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0 || type.getDimSize(0) != *upper)
      continue;
    bool used = false, rowsOnly = true;
    for (OpOperand &use : arg.getUses())
      if (loop->isProperAncestor(use.getOwner())) {
        used = true;
        rowsOnly &= isLayerRow(use, arg);
      }
    if (used && rowsOnly)
      stacked.push_back(arg);
  }
  if (!stacked.empty())
    layers = *upper;
  return stacked;
}

/// Replaces `loop` (over `stacked` weights) by loops over the layers
/// between consecutive `bounds` (0 first, the layer count last), which it
/// returns.
SmallVector<scf::ForOp> splitLayerLoop(scf::ForOp loop,
                                       ArrayRef<BlockArgument> stacked,
                                       ArrayRef<int64_t> bounds) {
  SmallVector<scf::ForOp> pieces;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> carried(loop.getInitArgs());
  for (auto [begin, end] : llvm::zip(bounds.drop_back(), bounds.drop_front())) {
    IRMapping mapping;
    for (BlockArgument arg : stacked) {
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(end - begin)};
      for (int64_t d = 1; d < type.getRank(); ++d)
        sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      offsets[0] = b.getIndexAttr(begin);
      mapping.map(arg, tensor::ExtractSliceOp::create(b, loc, arg, offsets,
                                                      sizes, strides)
                           .getResult());
    }
    auto piece = cast<scf::ForOp>(b.clone(*loop, mapping));
    pieces.push_back(piece);
    piece.getUpperBoundMutable().assign(
        arith::ConstantIndexOp::create(b, loc, end - begin));
    piece.getInitArgsMutable().assign(carried);
    // Any other use of the layer index sees the layer's number.
    Value local = piece.getInductionVar();
    SmallVector<OpOperand *> global;
    for (OpOperand &use : local.getUses()) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
      bool row = slice && use.getOperandNumber() == 1 &&
                 llvm::any_of(stacked, [&](BlockArgument arg) {
                   return slice.getSource() == mapping.lookup(arg);
                 });
      if (!row)
        global.push_back(&use);
    }
    if (begin > 0 && !global.empty()) {
      OpBuilder inner = OpBuilder::atBlockBegin(piece.getBody());
      Value number = arith::AddIOp::create(
          inner, loc, local, arith::ConstantIndexOp::create(inner, loc, begin));
      for (OpOperand *use : global)
        use->set(number);
    }
    carried.assign(piece.getResults().begin(), piece.getResults().end());
  }
  loop.replaceAllUsesWith(carried);
  loop.erase();
  return pieces;
}

} // namespace

int64_t sbp::splitLayerLoops(func::FuncOp func, int64_t pieces) {
  int64_t split = 0;
  for (auto loop :
       llvm::make_early_inc_range(func.front().getOps<scf::ForOp>())) {
    int64_t layers = 0;
    SmallVector<BlockArgument> stacked = getStackedArgs(func, loop, layers);
    if (stacked.empty())
      continue;
    int64_t count = std::min(pieces, layers);
    SmallVector<int64_t> bounds;
    for (int64_t g = 0; g <= count; ++g)
      bounds.push_back(layers * g / count);
    splitLayerLoop(loop, stacked, bounds);
    ++split;
  }
  return split;
}

SmallVector<int64_t> sbp::getLayerUnits(func::FuncOp func) {
  SmallVector<int64_t> units;
  for (Operation *op : getPlaceableOps(func)) {
    int64_t layers = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      getStackedArgs(func, loop, layers);
    units.push_back(layers);
  }
  return units;
}

void sbp::assignStagesAtUnits(func::FuncOp func, ArrayRef<int64_t> cuts) {
  Builder builder(func.getContext());
  auto stageOf = [&](int64_t unit) {
    return builder.getI64IntegerAttr(llvm::upper_bound(cuts, unit) -
                                     cuts.begin());
  };
  int64_t first = 0;
  for (Operation *op : getPlaceableOps(func)) {
    int64_t layers = 1;
    SmallVector<BlockArgument> stacked;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      stacked = getStackedArgs(func, loop, layers);
    if (stacked.empty()) {
      op->setAttr(SbpDialect::getStageAttrName(), stageOf(first++));
      continue;
    }
    SmallVector<int64_t> bounds = {0};
    for (int64_t cut : cuts)
      if (cut > first && cut < first + layers)
        bounds.push_back(cut - first);
    bounds.push_back(layers);
    if (bounds.size() > 2) {
      for (auto [piece, begin] : llvm::zip(
               splitLayerLoop(cast<scf::ForOp>(op), stacked, bounds), bounds))
        piece->setAttr(SbpDialect::getStageAttrName(), stageOf(first + begin));
    } else {
      op->setAttr(SbpDialect::getStageAttrName(), stageOf(first));
    }
    first += layers;
  }
}

SmallVector<Operation *> sbp::getPlaceableOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.front().without_terminator())
    if (!isCheapToRecompute(&op))
      ops.push_back(&op);
  return ops;
}

void sbp::assignBalancedStages(func::FuncOp func, int64_t stages) {
  Builder builder(func.getContext());
  SmallVector<Operation *> ops = getPlaceableOps(func);
  double total = 0;
  for (Operation *op : ops)
    total += getIterationWork(op);
  // Each op goes to the stage its midpoint of the cumulative work falls in;
  // without any work, the count of ops is balanced instead.
  double before = 0;
  for (auto [i, op] : llvm::enumerate(ops)) {
    double work = total > 0 ? getIterationWork(op) : 1;
    double middle = (before + work / 2) / (total > 0 ? total : ops.size());
    before += work;
    int64_t stage = std::min<int64_t>(stages - 1, middle * stages);
    op->setAttr(SbpDialect::getStageAttrName(),
                builder.getI64IntegerAttr(stage));
  }
}

FailureOr<SmallVector<func::FuncOp>>
sbp::outlineStages(func::FuncOp func, const MicroBatching &batching,
                   SmallVectorImpl<PipelineOutput> &outputs) {
  Block &body = func.front();
  Operation *terminator = body.getTerminator();
  MLIRContext *context = func.getContext();

  // Stages of the ops that own one: written, or the earliest of their
  // users'. Cheap producers have none; every stage that needs one makes it.
  DenseMap<Operation *, int64_t> stageOf;
  int64_t numStages = 1;
  for (Operation &op : body.without_terminator())
    if (auto stage =
            op.getAttrOfType<IntegerAttr>(SbpDialect::getStageAttrName()))
      numStages = std::max<int64_t>(numStages, stage.getInt() + 1);
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (isCheapToRecompute(&op))
      continue;
    if (auto stage =
            op.getAttrOfType<IntegerAttr>(SbpDialect::getStageAttrName())) {
      stageOf[&op] = stage.getInt();
      continue;
    }
    int64_t stage = numStages - 1;
    for (Operation *user : op.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && stageOf.count(top))
        stage = std::min(stage, stageOf[top]);
    }
    stageOf[&op] = stage;
  }

  // The top-level values each stage takes from outside, in order of first
  // use, and those each stage hands on.
  SmallVector<llvm::SetVector<Value>> imports(numStages), exports(numStages);
  auto producerStage = [&](Value value) -> std::optional<int64_t> {
    Operation *producer = value.getDefiningOp();
    if (!producer || isCheapToRecompute(producer))
      return std::nullopt;
    return stageOf.lookup(producer);
  };
  // Per stage, the rows of each argument (not cut into micro-batches) it
  // takes only rows of: [first, end).
  SmallVector<std::map<unsigned, std::pair<int64_t, int64_t>>> rows(numStages);
  // Values a cheap producer needs are needed by its users' stage.
  std::function<LogicalResult(Value, int64_t, Operation *)> require =
      [&](Value value, int64_t stage, Operation *user) -> LogicalResult {
    Operation *producer = value.getDefiningOp();
    int64_t offset = 0;
    BlockArgument rowsOf = getArgumentRows(value, offset);
    if (rowsOf &&
        (batching.count == 1 || batching.argDims[rowsOf.getArgNumber()] < 0)) {
      int64_t end =
          offset + cast<RankedTensorType>(value.getType()).getDimSize(0);
      auto [it, inserted] =
          rows[stage].try_emplace(rowsOf.getArgNumber(), offset, end);
      it->second = {std::min(it->second.first, offset),
                    std::max(it->second.second, end)};
      return success();
    }
    if (producer && isCheapToRecompute(producer)) {
      for (Value operand : producer->getOperands())
        if (failed(require(operand, stage, user)))
          return failure();
      return success();
    }
    std::optional<int64_t> from = producerStage(value);
    if (from && *from > stage)
      return user->emitError()
             << "stage " << stage << " uses a value computed in stage " << *from
             << "; stages must follow the data flow";
    if (from && *from == stage)
      return success();
    imports[stage].insert(value);
    if (from)
      exports[*from].insert(value);
    return success();
  };
  for (Operation &op : body.without_terminator()) {
    if (!stageOf.count(&op))
      continue;
    int64_t stage = stageOf[&op];
    WalkResult walk = op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getParentBlock() == &body &&
            failed(require(operand, stage, inner)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  // Results leave from the stage that computes them: arguments through the
  // first stage, cheap values from the last.
  SmallVector<int64_t> resultStages;
  for (Value value : terminator->getOperands()) {
    std::optional<int64_t> from = producerStage(value);
    int64_t stage = from                        ? *from
                    : isa<BlockArgument>(value) ? 0
                                                : numStages - 1;
    if (!from && failed(require(value, stage, terminator)))
      return failure();
    exports[stage].insert(value);
    resultStages.push_back(stage);
  }

  // The functions.
  SymbolTable symbols(func->getParentOp());
  OpBuilder builder(context);
  builder.setInsertionPointAfter(func);
  SmallVector<func::FuncOp> stages;
  for (int64_t stage = 0; stage < numStages; ++stage) {
    // Rows of an argument the stage also takes whole, or all of its rows,
    // come from the whole argument; the others from an argument of their
    // own after the imports.
    SmallVector<std::pair<BlockArgument, int64_t>> rowArgs;
    for (auto [index, range] : rows[stage]) {
      BlockArgument arg = body.getArgument(index);
      auto type = cast<RankedTensorType>(arg.getType());
      if (!imports[stage].contains(arg) &&
          (range.first > 0 || range.second < type.getDimSize(0)))
        rowArgs.emplace_back(arg, range.first);
      else
        imports[stage].insert(arg);
    }
    SmallVector<Type> inputs, results;
    for (Value value : imports[stage])
      inputs.push_back(value.getType());
    for (auto [arg, offset] : rowArgs) {
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = rows[stage][arg.getArgNumber()].second - offset;
      inputs.push_back(type.clone(shape));
    }
    for (Value value : exports[stage])
      results.push_back(value.getType());
    auto stageFunc = func::FuncOp::create(
        builder, func.getLoc(),
        (func.getSymName() + "_stage" + Twine(stage)).str(),
        FunctionType::get(context, inputs, results));
    symbols.insert(stageFunc);
    builder.setInsertionPointAfter(stageFunc);
    stages.push_back(stageFunc);

    Block *entry = stageFunc.addEntryBlock();
    IRMapping mapping;
    for (auto [i, value] : llvm::enumerate(imports[stage])) {
      mapping.map(value, entry->getArgument(i));
      SmallVector<NamedAttribute> source;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        int64_t index = arg.getArgNumber();
        source.emplace_back(StringAttr::get(context, "input"),
                            builder.getI64IntegerAttr(index));
        if (batching.count > 1 && batching.argDims[index] >= 0)
          source.emplace_back(
              StringAttr::get(context, "micro_batch_dim"),
              builder.getI64IntegerAttr(batching.argDims[index]));
      } else {
        int64_t from = *producerStage(value);
        source.emplace_back(StringAttr::get(context, "stage"),
                            builder.getI64IntegerAttr(from));
        source.emplace_back(
            StringAttr::get(context, "result"),
            builder.getI64IntegerAttr(indexOf(exports[from], value)));
      }
      stageFunc.setArgAttr(i, SbpDialect::getSourceAttrName(),
                           DictionaryAttr::get(context, source));
    }
    DenseMap<Value, std::pair<Value, int64_t>> rowsFrom;
    for (auto [i, row] : llvm::enumerate(rowArgs)) {
      unsigned position = imports[stage].size() + i;
      rowsFrom[row.first] = {entry->getArgument(position), row.second};
      stageFunc.setArgAttr(
          position, SbpDialect::getSourceAttrName(),
          builder.getDictionaryAttr(
              {builder.getNamedAttr("input", builder.getI64IntegerAttr(
                                                 row.first.getArgNumber())),
               builder.getNamedAttr("offset",
                                    builder.getI64IntegerAttr(row.second))}));
    }
    OpBuilder inner = OpBuilder::atBlockEnd(entry);
    std::function<void(Value)> materialize = [&](Value value) {
      if (mapping.contains(value))
        return;
      int64_t offset = 0;
      BlockArgument rowsOf = getArgumentRows(value, offset);
      if (auto it = rowsFrom.find(rowsOf); rowsOf && it != rowsFrom.end()) {
        // The same rows again, relative to the stage's.
        auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
        Value from = it->second.first;
        if (from.getType() == value.getType()) {
          mapping.map(value, from);
          return;
        }
        SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
        offsets[0] = inner.getIndexAttr(offset - it->second.second);
        mapping.map(value, tensor::ExtractSliceOp::create(
                               inner, slice.getLoc(), from, offsets,
                               slice.getMixedSizes(), slice.getMixedStrides())
                               .getResult());
        return;
      }
      Operation *producer = value.getDefiningOp();
      for (Value operand : producer->getOperands())
        materialize(operand);
      inner.clone(*producer, mapping);
    };
    for (Operation &op : body.without_terminator()) {
      if (!stageOf.count(&op) || stageOf[&op] != stage)
        continue;
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &body && !mapping.contains(operand))
            materialize(operand);
      });
      Operation *clone = inner.clone(op, mapping);
      clone->removeAttr(SbpDialect::getStageAttrName());
    }
    SmallVector<Value> returned;
    for (Value value : exports[stage]) {
      materialize(value);
      returned.push_back(mapping.lookup(value));
    }
    func::ReturnOp::create(inner, func.getLoc(), returned);
  }

  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    PipelineOutput output;
    output.stage = resultStages[index];
    output.result = indexOf(exports[output.stage], value);
    output.combine = batching.results[index];
    outputs.push_back(output);
  }
  return stages;
}

int64_t sbp::getSourceField(func::FuncOp func, unsigned index, StringRef name) {
  auto source = func.getArgAttrOfType<DictionaryAttr>(
      index, SbpDialect::getSourceAttrName());
  auto field = source ? source.getAs<IntegerAttr>(name) : IntegerAttr();
  return field ? field.getInt() : -1;
}

MeshOp sbp::createPipelineMesh(ModuleOp module, ArrayRef<int64_t> shape) {
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  std::string name = "pipeline";
  for (unsigned suffix = 0; module.lookupSymbol(name);)
    name = "pipeline_" + std::to_string(suffix++);
  return MeshOp::create(builder, module.getLoc(), name, shape, ArrayAttr());
}

void sbp::recordPipeline(ModuleOp module, StringRef function,
                         ArrayRef<func::FuncOp> stages, MeshOp mesh,
                         int64_t microBatches, StringRef schedule,
                         ArrayRef<PipelineOutput> outputs,
                         ArrayRef<func::FuncOp> backward,
                         ArrayRef<func::FuncOp> update) {
  Builder builder(module.getContext());
  SmallVector<Attribute> outputAttrs;
  auto refs = [&](ArrayRef<func::FuncOp> funcs) {
    SmallVector<Attribute> refs;
    for (func::FuncOp func : funcs)
      refs.push_back(FlatSymbolRefAttr::get(func.getSymNameAttr()));
    return builder.getArrayAttr(refs);
  };
  for (const PipelineOutput &output : outputs) {
    SmallVector<NamedAttribute> fields = {
        builder.getNamedAttr("stage", builder.getI64IntegerAttr(output.stage)),
        builder.getNamedAttr("result",
                             builder.getI64IntegerAttr(output.result)),
        builder.getNamedAttr("combine", builder.getStringAttr(getCombineName(
                                            output.combine.kind)))};
    if (!output.rows.empty()) {
      SmallVector<Attribute> stages, results;
      for (auto [stage, result] : output.rows) {
        stages.push_back(builder.getI64IntegerAttr(stage));
        results.push_back(builder.getI64IntegerAttr(result));
      }
      fields = {
          builder.getNamedAttr("stage", builder.getArrayAttr(stages)),
          builder.getNamedAttr("result", builder.getArrayAttr(results)),
          builder.getNamedAttr("combine", builder.getStringAttr("concat")),
          builder.getNamedAttr("dim", builder.getI64IntegerAttr(0))};
    } else if (output.combine.kind == MicroBatchResult::Concat)
      fields.push_back(builder.getNamedAttr(
          "dim", builder.getI64IntegerAttr(output.combine.dim)));
    if (output.update)
      fields.push_back(builder.getNamedAttr("update", builder.getUnitAttr()));
    outputAttrs.push_back(builder.getDictionaryAttr(fields));
  }
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("function", builder.getStringAttr(function)),
      builder.getNamedAttr("mesh",
                           FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
      builder.getNamedAttr("stages", refs(stages)),
      builder.getNamedAttr("micro_batches",
                           builder.getI64IntegerAttr(microBatches)),
      builder.getNamedAttr("schedule", builder.getStringAttr(schedule)),
      builder.getNamedAttr("outputs", builder.getArrayAttr(outputAttrs))};
  if (!backward.empty()) {
    fields.push_back(builder.getNamedAttr("backward", refs(backward)));
    fields.push_back(builder.getNamedAttr("update", refs(update)));
  }
  module->setAttr(SbpDialect::getPipelineAttrName(),
                  builder.getDictionaryAttr(fields));
}
