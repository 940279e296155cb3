//===- InsertTransfers.cpp - Send and receive between pipeline stages -----===//
//
// After this, a stage is an ordinary partitioned program that the runtime
// calls once per micro-batch with its inputs: what flows between stages is
// in the IR, as the point-to-point collectives of the pipeline's mesh.
//
//===----------------------------------------------------------------------===//

#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPINSERTTRANSFERSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// A stage argument received from result `result` of stage `stage`.
struct Received {
  unsigned argument;
  int64_t stage, result;
};

struct SbpInsertTransfersPass
    : public sbp::impl::SbpInsertTransfersPassBase<SbpInsertTransfersPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Rewrites `funcs`, one per stage, whose arguments with `key` in their
  /// `sbp.source` come from the function of that stage: receives and
  /// sends instead, the results only sent dropped (`renumbered` maps the
  /// old result numbers to the new, -1 if dropped), and with `save` the
  /// received values returned after the other results.
  LogicalResult transfer(MutableArrayRef<func::FuncOp> funcs, StringRef key,
                         ArrayRef<llvm::SmallDenseSet<int64_t>> outputs,
                         bool save,
                         SmallVectorImpl<SmallVector<int64_t>> &renumbered);

  FlatSymbolRefAttr mesh;
};

LogicalResult SbpInsertTransfersPass::transfer(
    MutableArrayRef<func::FuncOp> funcs, StringRef key,
    ArrayRef<llvm::SmallDenseSet<int64_t>> outputs, bool save,
    SmallVectorImpl<SmallVector<int64_t>> &renumbered) {
  int64_t numStages = funcs.size();
  // What each stage receives, in the order its senders send: by stage,
  // then result.
  SmallVector<SmallVector<Received>> received(numStages);
  // Per stage and result, the stages that take it.
  SmallVector<DenseMap<int64_t, SmallVector<int64_t>>> consumers(numStages);
  for (auto [index, stage] : llvm::enumerate(funcs)) {
    for (unsigned i = 0; i < stage.getNumArguments(); ++i) {
      auto source = stage.getArgAttrOfType<DictionaryAttr>(
          i, SbpDialect::getSourceAttrName());
      auto from = source ? source.getAs<IntegerAttr>(key) : IntegerAttr();
      if (!from)
        continue;
      int64_t result = source.getAs<IntegerAttr>("result").getInt();
      func::FuncOp sender = funcs[from.getInt()];
      if (result >= sender.getNumResults() ||
          sender.getResultTypes()[result] != stage.getArgumentTypes()[i])
        return emitError(stage.getLoc())
               << "sbp-insert-transfers: argument #" << i << " of @"
               << stage.getSymName() << " has type "
               << stage.getArgumentTypes()[i] << " but @" << sender.getSymName()
               << " sends "
               << (result < sender.getNumResults()
                       ? sender.getResultTypes()[result]
                       : Type())
               << "; partition the stages first";
      received[index].push_back({i, from.getInt(), result});
      consumers[from.getInt()][result].push_back(index);
    }
    llvm::sort(received[index], [](const Received &a, const Received &b) {
      return std::tie(a.stage, a.result) < std::tie(b.stage, b.result);
    });
  }

  OpBuilder builder(&getContext());
  renumbered.assign(numStages, {});
  for (auto [index, stage] : llvm::enumerate(funcs)) {
    Block &entry = stage.front();
    builder.setInsertionPointToStart(&entry);
    BitVector erased(stage.getNumArguments());
    SmallVector<std::pair<unsigned, Value>> saved;
    for (const Received &from : received[index]) {
      BlockArgument arg = entry.getArgument(from.argument);
      auto recv = RecvOp::create(builder, stage.getLoc(), arg.getType(),
                                 mesh.getValue(), ArrayRef<int64_t>{0},
                                 uint64_t(from.stage));
      arg.replaceAllUsesWith(recv.getResult());
      erased.set(from.argument);
      saved.push_back({from.argument, recv.getResult()});
    }

    auto terminator = cast<func::ReturnOp>(entry.getTerminator());
    builder.setInsertionPoint(terminator);
    BitVector dropped(stage.getNumResults());
    for (unsigned r = 0; r < stage.getNumResults(); ++r) {
      auto it = consumers[index].find(r);
      if (it == consumers[index].end())
        continue;
      for (int64_t to : it->second)
        SendOp::create(builder, stage.getLoc(), terminator.getOperand(r),
                       mesh.getValue(), ArrayRef<int64_t>{0}, uint64_t(to));
      if (!outputs[index].contains(r))
        dropped.set(r);
    }
    for (unsigned r = 0, kept = 0; r < stage.getNumResults(); ++r)
      renumbered[index].push_back(dropped.test(r) ? -1 : kept++);
    terminator->eraseOperands(dropped);
    if (failed(stage.eraseResults(dropped)))
      return emitError(stage.getLoc())
             << "sbp-insert-transfers: cannot rewrite @" << stage.getSymName();
    if (save && !saved.empty()) {
      // In argument order, as the backward function takes them.
      llvm::sort(saved, llvm::less_first());
      for (auto [argument, value] : saved) {
        // Returned in the layout it arrived in.
        NamedAttrList attrs;
        if (Attribute layout =
                stage.getArgAttr(argument, SbpDialect::getShardingAttrName()))
          attrs.set(SbpDialect::getShardingAttrName(), layout);
        terminator->insertOperands(terminator->getNumOperands(), value);
        if (failed(stage.insertResult(stage.getNumResults(), value.getType(),
                                      attrs.getDictionary(&getContext()))))
          return failure();
      }
    }
    if (failed(stage.eraseArguments(erased)))
      return emitError(stage.getLoc())
             << "sbp-insert-transfers: cannot rewrite @" << stage.getSymName();
  }
  return success();
}

void SbpInsertTransfersPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto pipeline =
      module->getAttrOfType<DictionaryAttr>(SbpDialect::getPipelineAttrName());
  if (!pipeline)
    return;
  MLIRContext *context = &getContext();
  mesh = pipeline.getAs<FlatSymbolRefAttr>("mesh");
  auto lookup = [&](StringRef name) {
    SmallVector<func::FuncOp> funcs;
    if (auto refs = pipeline.getAs<ArrayAttr>(name))
      for (Attribute ref : refs)
        funcs.push_back(
            module.lookupSymbol<func::FuncOp>(cast<FlatSymbolRefAttr>(ref)));
    return funcs;
  };
  SmallVector<func::FuncOp> stages = lookup("stages");
  SmallVector<func::FuncOp> backward = lookup("backward");
  int64_t numStages = stages.size();

  // Results that leave the program stay; the others only travel.
  SmallVector<llvm::SmallDenseSet<int64_t>> outputs(numStages);
  for (Attribute element : pipeline.getAs<ArrayAttr>("outputs")) {
    auto output = cast<DictionaryAttr>(element);
    if (!output.contains("update"))
      outputs[output.getAs<IntegerAttr>("stage").getInt()].insert(
          output.getAs<IntegerAttr>("result").getInt());
  }
  // A training pipeline's forward keeps what it receives for its backward,
  // whose gradients of those values go back the other way.
  SmallVector<SmallVector<int64_t>> renumbered, unused;
  if (failed(
          transfer(stages, "stage", outputs, !backward.empty(), renumbered)) ||
      (!backward.empty() &&
       failed(transfer(backward, "backward",
                       SmallVector<llvm::SmallDenseSet<int64_t>>(numStages),
                       /*save=*/false, unused))))
    return signalPassFailure();

  Builder builder(context);
  SmallVector<Attribute> newOutputs;
  for (Attribute element : pipeline.getAs<ArrayAttr>("outputs")) {
    auto output = cast<DictionaryAttr>(element);
    NamedAttrList fields(output);
    if (!output.contains("update")) {
      int64_t stage = output.getAs<IntegerAttr>("stage").getInt();
      int64_t result = output.getAs<IntegerAttr>("result").getInt();
      fields.set("result",
                 builder.getI64IntegerAttr(renumbered[stage][result]));
    }
    newOutputs.push_back(fields.getDictionary(context));
  }
  NamedAttrList fields(pipeline);
  fields.set("outputs", builder.getArrayAttr(newOutputs));
  module->setAttr(SbpDialect::getPipelineAttrName(),
                  fields.getDictionary(context));
}

} // namespace
