//===- TrainStages.cpp - Training steps cut into pipeline stages ----------===//
//
// A pipelined training step is the pipeline of its loss function plus, per
// stage, a backward function and an update function. The backward of a
// stage differentiates `sum(result * gradient of result)` over what the
// stage hands on (plus the loss in the last stage), so each stage's
// gradients come from the autodiff of the whole step, one stage at a time.
// Between a micro-batch's forward and backward a stage keeps what it
// received and what its loops over layers yield, each layer's input among
// it; the backward recomputes each layer from its input (Megatron-LM's full
// recomputation) and the few ops outside the loops from the stage's
// inputs. The update runs once per step on the gradients summed over the
// micro-batches (gradient accumulation).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sbp/Transforms/Autodiff.h"
#include "sbp/Transforms/Pipelining.h"
#include "sbp/Transforms/TrainStep.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// `sum(x * y)` over all elements of two tensors of one type, as a tensor
/// of rank 0.
Value buildDot(OpBuilder &b, Location loc, Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value init = createFilledTensor(b, loc, scalarType, 0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{scalarType}, ValueRange{x, y}, ValueRange{init},
             ArrayRef<AffineMap>{id, id, AffineMap::get(rank, 0, {}, ctx)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::reduction),
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value product = arith::MulFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{arith::AddFOp::create(nb, l, args[2], product)});
             })
      .getResult(0);
}

/// `value` (a float tensor of rank 0) converted to the element type of
/// `like`.
Value castScalar(OpBuilder &b, Location loc, Value value, Value like) {
  auto from = cast<RankedTensorType>(value.getType());
  auto to = cast<RankedTensorType>(like.getType());
  if (from == to)
    return value;
  if (from.getElementTypeBitWidth() < to.getElementTypeBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

DictionaryAttr getSource(MLIRContext *ctx,
                         ArrayRef<std::pair<StringRef, int64_t>> fields) {
  Builder b(ctx);
  SmallVector<NamedAttribute> attrs;
  for (auto [name, value] : fields)
    attrs.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(value)));
  return b.getDictionaryAttr(attrs);
}

/// Makes the values that `loop` carries only for results nobody uses
/// (the layer inputs a forward loop saves for its backward) pass through
/// unchanged, so that canonicalization drops them: the ops that update
/// such a value, and only they, read it.
void passThroughDeadCarries(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [i, result] : llvm::enumerate(loop.getResults())) {
    if (!result.use_empty())
      continue;
    BlockArgument carried = loop.getRegionIterArg(i);
    // The ops that depend on the carried value, all of which must feed
    // only each other and this yield operand.
    llvm::SetVector<Operation *> dependents;
    SmallVector<Value> work = {carried};
    bool dead = true;
    while (!work.empty() && dead) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user =
            loop.getBody()->findAncestorOpInBlock(*use.getOwner());
        if (user == yield) {
          dead &= use.getOperandNumber() == i;
          continue;
        }
        if (!user || !isMemoryEffectFree(user)) {
          dead = false;
          break;
        }
        if (dependents.insert(user))
          llvm::append_range(work, user->getResults());
      }
    }
    if (dead)
      yield->setOperand(i, carried);
  }
}

/// Erases the ops of `block` that nothing uses, users before producers.
void eraseDeadOps(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

/// Makes the stage's `forward` return, after its own results, what the
/// loops `saved` of its backward `back` (clones of the forward's, replaced
/// by ones that save their iterations) yield and `back` reads, and `back`
/// take those as arguments `{saved = J}` instead of running the loops
/// again: the backward then recomputes each layer from its saved input, as
/// Megatron-LM's full recomputation does, rather than the stage's forward
/// first.
void saveLoops(func::FuncOp forward, func::FuncOp back,
               ArrayRef<scf::ForOp> saved) {
  MLIRContext *ctx = forward.getContext();
  Block &body = forward.front(), &backBody = back.front();
  // The backward's loops start with the clones of the forward's, in order.
  SmallVector<scf::ForOp> loops = llvm::to_vector(body.getOps<scf::ForOp>());
  SmallVector<scf::ForOp> backLoops =
      llvm::to_vector(backBody.getOps<scf::ForOp>());
  DenseMap<Operation *, size_t> positionOf;
  for (scf::ForOp loop : saved)
    if (size_t position = llvm::find(backLoops, loop) - backLoops.begin();
        position < loops.size())
      positionOf[loop] = position;
  // What the stage contributes to the loss was only differentiated; a loop
  // only it read goes too.
  eraseDeadOps(backBody);
  Operation *terminator = body.getTerminator();
  OpBuilder b(ctx);
  int64_t next = 0;
  for (scf::ForOp loop :
       llvm::make_early_inc_range(backBody.getOps<scf::ForOp>())) {
    auto it = positionOf.find(loop);
    if (it == positionOf.end())
      continue;
    size_t position = it->second;
    b.setInsertionPoint(loops[position]);
    scf::ForOp twin = saveLoopIterations(b, loops[position]);
    if (twin.getNumResults() != loop.getNumResults())
      continue;
    for (auto [mine, theirs] :
         llvm::zip(loop.getResults(), twin.getResults())) {
      if (mine.use_empty())
        continue;
      terminator->insertOperands(terminator->getNumOperands(), theirs);
      (void)forward.insertResult(forward.getNumResults(), theirs.getType(),
                                 DictionaryAttr::get(ctx));
      unsigned index = back.getNumArguments();
      (void)back.insertArgument(
          index, mine.getType(),
          DictionaryAttr::get(
              ctx, {b.getNamedAttr(SbpDialect::getSourceAttrName(),
                                   getSource(ctx, {{"saved", next++}}))}),
          mine.getLoc());
      mine.replaceAllUsesWith(backBody.getArgument(index));
    }
    loop.erase();
  }
}

/// Drops the values `forward` saves (saveLoops) that the simplified `back`
/// does not read, and numbers the others again.
void dropUnreadSaved(func::FuncOp forward, func::FuncOp back) {
  MLIRContext *ctx = forward.getContext();
  SmallVector<unsigned> saved;
  for (unsigned a = 0; a < back.getNumArguments(); ++a)
    if (getSourceField(back, a, "saved") >= 0)
      saved.push_back(a);
  unsigned first = forward.getNumResults() - saved.size();
  BitVector unreadArgs(back.getNumArguments()),
      unreadResults(forward.getNumResults());
  int64_t next = 0;
  for (unsigned a : saved) {
    unsigned result = first + getSourceField(back, a, "saved");
    if (back.getArgument(a).use_empty()) {
      unreadArgs.set(a);
      unreadResults.set(result);
      continue;
    }
    back.setArgAttr(a, SbpDialect::getSourceAttrName(),
                    getSource(ctx, {{"saved", next++}}));
  }
  if (unreadArgs.none())
    return;
  forward.front().getTerminator()->eraseOperands(unreadResults);
  (void)forward.eraseResults(unreadResults);
  (void)back.eraseArguments(unreadArgs);
  // A loop no longer saves what nobody reads.
  forward.walk(passThroughDeadCarries);
  (void)simplifyGradients(forward);
}

} // namespace

void mlir::sbp::reduceToLoss(func::FuncOp step) {
  Block &body = step.front();
  Operation *terminator = body.getTerminator();
  Value loss = terminator->getOperands().back();
  terminator->setOperands(loss);
  step.setFunctionType(FunctionType::get(
      step.getContext(), step.getArgumentTypes(), {loss.getType()}));
  step.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  step->removeAttr(SbpDialect::getTrainStepAttrName());
  eraseDeadOps(body);
  step.walk(passThroughDeadCarries);
  (void)simplifyGradients(step);
}

SmallVector<int64_t> mlir::sbp::getTrainBatchArgs(func::FuncOp step) {
  int64_t updated = 0;
  if (auto dict = step->getAttrOfType<DictionaryAttr>(
          SbpDialect::getTrainStepAttrName()))
    updated = cast<IntegerAttr>(dict.get("params")).getInt() +
              cast<IntegerAttr>(dict.get("state")).getInt();
  SmallVector<int64_t> batch;
  int64_t rows = ShapedType::kDynamic;
  for (int64_t i = updated; i < step.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      continue;
    if (ShapedType::isDynamic(rows))
      rows = type.getDimSize(0);
    if (type.getDimSize(0) == rows)
      batch.push_back(i);
  }
  return batch;
}

LogicalResult mlir::sbp::buildTrainingStages(
    func::FuncOp lossFunction, const OptimizerSpec &spec, int64_t params,
    int64_t state, ArrayRef<func::FuncOp> stages, const PipelineOutput &loss,
    SmallVectorImpl<func::FuncOp> &backward,
    SmallVectorImpl<func::FuncOp> &update,
    SmallVectorImpl<PipelineOutput> &outputs, int64_t only) {
  SmallVector<func::FuncOp> forward(stages);
  MLIRContext *ctx = lossFunction.getContext();
  Location loc = lossFunction.getLoc();
  int64_t numStages = forward.size();
  StringRef sourceName = SbpDialect::getSourceAttrName();

  // Per stage: its received arguments and its parameters (argument
  // numbers); per parameter, the rows each stage takes, in order.
  struct Rows {
    int64_t stage, offset, size;
    bool whole;
  };
  SmallVector<SmallVector<unsigned>> received(numStages), owned(numStages);
  SmallVector<SmallVector<Rows>> rowsOf(params);
  // Per stage, the parameter and rows of each of its owned arguments.
  SmallVector<SmallVector<std::pair<int64_t, Rows>>> ownedRows(numStages);
  auto getRowCount = [&](Type type) {
    auto ranked = cast<RankedTensorType>(type);
    return ranked.getRank() ? ranked.getDimSize(0) : 1;
  };
  for (auto [k, stage] : llvm::enumerate(forward))
    for (unsigned i = 0; i < stage.getNumArguments(); ++i) {
      if (getSourceField(stage, i, "stage") >= 0) {
        received[k].push_back(i);
        continue;
      }
      int64_t input = getSourceField(stage, i, "input");
      if (input < 0 || input >= params)
        continue;
      int64_t offset = getSourceField(stage, i, "offset");
      Rows rows = {int64_t(k), std::max<int64_t>(offset, 0),
                   getRowCount(stage.getArgumentTypes()[i]), offset < 0};
      rowsOf[input].push_back(rows);
      ownedRows[k].emplace_back(input, rows);
      owned[k].push_back(i);
    }
  for (int64_t p = 0; p < params; ++p) {
    SmallVector<Rows> &list = rowsOf[p];
    llvm::sort(
        list, [](const Rows &x, const Rows &y) { return x.offset < y.offset; });
    int64_t next = 0;
    for (const Rows &rows : list)
      next = rows.offset == next ? next + rows.size : -1;
    if (list.size() > 1 &&
        next != getRowCount(lossFunction.getArgumentTypes()[p]))
      return emitError(loc)
             << "cannot pipeline the training step: parameter #" << p
             << " is used by stages " << list[0].stage << " and "
             << list[1].stage
             << " other than as disjoint rows that cover it, whose gradients "
                "would have to be summed across stages (a weight shared by "
                "stages, such as an embedding the logits reuse, is not "
                "supported in a training pipeline)";
    if (list.size() == 1 && !list[0].whole)
      return emitError(loc)
             << "cannot pipeline the training step: stage " << list[0].stage
             << " uses only some rows of parameter #" << p
             << " and no stage the others";
  }

  OpBuilder b(ctx);
  b.setInsertionPointAfter(forward.back());
  SymbolTable symbols(lossFunction->getParentOp());
  for (auto [k, stage] : llvm::enumerate(forward)) {
    if (only >= 0 && int64_t(k) != only) {
      backward.push_back(nullptr);
      continue;
    }
    // The gradients of this stage's results that later stages send back:
    // (result, type, source) per argument of theirs that received one.
    struct Incoming {
      int64_t result;
      Type type;
      DictionaryAttr source;
    };
    SmallVector<Incoming> incoming;
    for (int64_t t = k + 1; t < numStages; ++t)
      for (auto [position, arg] : llvm::enumerate(received[t])) {
        if (getSourceField(forward[t], arg, "stage") != int64_t(k))
          continue;
        incoming.push_back(
            {getSourceField(forward[t], arg, "result"),
             forward[t].getArgumentTypes()[arg],
             getSource(ctx, {{"backward", t}, {"result", int64_t(position)}})});
      }

    SmallVector<Type> argTypes(stage.getArgumentTypes());
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < stage.getNumArguments(); ++i)
      argAttrs.push_back(stage.getArgAttrDict(i));
    for (const Incoming &in : incoming) {
      argTypes.push_back(in.type);
      argAttrs.push_back(
          DictionaryAttr::get(ctx, {b.getNamedAttr(sourceName, in.source)}));
    }
    SmallVector<Type> resultTypes;
    for (unsigned i : llvm::concat<unsigned>(received[k], owned[k]))
      resultTypes.push_back(stage.getArgumentTypes()[i]);
    auto back =
        func::FuncOp::create(b, loc, (stage.getSymName() + "_backward").str(),
                             FunctionType::get(ctx, argTypes, resultTypes));
    symbols.insert(back);
    back.setAllArgAttrs(argAttrs);
    Block *entry = back.addEntryBlock();
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    for (unsigned i = 0; i < stage.getNumArguments(); ++i)
      mapping.map(stage.getArgument(i), entry->getArgument(i));
    for (Operation &op : stage.front().without_terminator())
      body.clone(op, mapping);
    SmallVector<Value> results;
    for (Value value : stage.front().getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(value));

    // What this stage contributes to the loss, to first order in its
    // results: their dot products with their gradients, and the loss
    // itself in its stage.
    Value total;
    auto add = [&](Value term) {
      total = total ? arith::AddFOp::create(body, loc, total,
                                            castScalar(body, loc, term, total))
                          .getResult()
                    : term;
    };
    for (auto [i, in] : llvm::enumerate(incoming))
      add(buildDot(body, loc, results[in.result],
                   entry->getArgument(stage.getNumArguments() + i)));
    if (loss.stage == int64_t(k))
      add(results[loss.result]);
    SmallVector<Value> wrt;
    for (unsigned i : llvm::concat<unsigned>(received[k], owned[k]))
      wrt.push_back(entry->getArgument(i));
    SmallVector<Value> gradients;
    SmallVector<scf::ForOp> saved;
    if (total) {
      FailureOr<SmallVector<Value>> built =
          buildGradients(body, *entry, total, wrt, &saved);
      if (failed(built))
        return failure();
      gradients = std::move(*built);
    } else {
      for (Value value : wrt)
        gradients.push_back(createFilledTensor(
            body, loc, cast<RankedTensorType>(value.getType()), 0));
    }
    func::ReturnOp::create(body, loc, gradients);
    saveLoops(stage, back, saved);
    if (failed(simplifyGradients(back)))
      return failure();
    dropUnreadSaved(stage, back);
    backward.push_back(back);
  }

  // The updates: each stage's parameters (or its rows of them), their
  // state, and (AdamW) the step count, which every stage keeps a copy of. A
  // parameter that no stage uses gets a zero gradient in stage 0, as in
  // the step.
  int64_t perParam = spec.getStatePerParam();
  // Per input: the update results it is made of, (offset, stage, result).
  SmallVector<SmallVector<std::tuple<int64_t, int64_t, int64_t>>> piecesOf(
      params + state);
  for (int64_t k = 0; k < numStages; ++k) {
    if (only >= 0 && k != only) {
      update.push_back(nullptr);
      continue;
    }
    // Those its backward has gradients of first.
    SmallVector<std::pair<int64_t, Rows>> mine(ownedRows[k]);
    int64_t withGradient = mine.size();
    for (int64_t p = 0; k == 0 && p < params; ++p)
      if (rowsOf[p].empty())
        mine.emplace_back(
            p,
            Rows{0, 0, getRowCount(lossFunction.getArgumentTypes()[p]), true});
    SmallVector<std::pair<int64_t, Rows>> inputs(mine);
    for (auto [p, rows] : mine)
      for (int64_t s = 0; s < perParam; ++s)
        inputs.emplace_back(params + perParam * p + s, rows);
    if (spec.getSharedState())
      inputs.emplace_back(params + state - 1, Rows{k, 0, 1, true});
    SmallVector<Type> argTypes, resultTypes;
    SmallVector<DictionaryAttr> argAttrs;
    for (auto [input, rows] : inputs) {
      auto type =
          cast<RankedTensorType>(lossFunction.getArgumentTypes()[input]);
      SmallVector<std::pair<StringRef, int64_t>> fields = {{"input", input}};
      if (!rows.whole) {
        SmallVector<int64_t> shape(type.getShape());
        shape[0] = rows.size;
        type = type.clone(shape);
        fields.emplace_back("offset", rows.offset);
      }
      argTypes.push_back(type);
      argAttrs.push_back(DictionaryAttr::get(
          ctx, {b.getNamedAttr(sourceName, getSource(ctx, fields))}));
      piecesOf[input].emplace_back(rows.offset, k, resultTypes.size());
      resultTypes.push_back(type);
    }
    for (int64_t j = 0; j < withGradient; ++j) {
      argTypes.push_back(argTypes[j]);
      argAttrs.push_back(DictionaryAttr::get(
          ctx,
          {b.getNamedAttr(sourceName, getSource(ctx, {{"gradient", j}}))}));
    }
    auto apply = func::FuncOp::create(
        b, loc, (forward[k].getSymName() + "_update").str(),
        FunctionType::get(ctx, argTypes, resultTypes));
    symbols.insert(apply);
    apply.setAllArgAttrs(argAttrs);
    Block *entry = apply.addEntryBlock();
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    int64_t count = mine.size();
    SmallVector<Value> gradients(entry->getArguments().take_back(withGradient));
    for (int64_t j = withGradient; j < count; ++j)
      gradients.push_back(createFilledTensor(
          body, loc, cast<RankedTensorType>(argTypes[j]), 0));
    SmallVector<Value> updated = buildOptimizerUpdate(
        body, loc, spec, entry->getArguments().take_front(count),
        entry->getArguments().slice(count, inputs.size() - count), gradients);
    func::ReturnOp::create(body, loc, updated);
    update.push_back(apply);
  }

  for (int64_t i = 0; i < params + state; ++i) {
    auto &pieces = piecesOf[i];
    // The step count of stage 0 stands for all.
    if (spec.getSharedState() && i == params + state - 1 && !pieces.empty())
      pieces.resize(1);
    llvm::sort(pieces);
    PipelineOutput output;
    output.update = true;
    if (!pieces.empty())
      std::tie(std::ignore, output.stage, output.result) = pieces.front();
    if (pieces.size() > 1)
      for (auto [offset, stage, result] : pieces)
        output.rows.emplace_back(stage, result);
    outputs.push_back(output);
  }
  outputs.push_back(loss);
  return success();
}
