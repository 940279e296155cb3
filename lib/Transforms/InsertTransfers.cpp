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
};

void SbpInsertTransfersPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto pipeline =
      module->getAttrOfType<DictionaryAttr>(SbpDialect::getPipelineAttrName());
  if (!pipeline)
    return;
  MLIRContext *context = &getContext();
  auto mesh = pipeline.getAs<FlatSymbolRefAttr>("mesh");
  SmallVector<func::FuncOp> stages;
  for (Attribute ref : pipeline.getAs<ArrayAttr>("stages"))
    stages.push_back(
        module.lookupSymbol<func::FuncOp>(cast<FlatSymbolRefAttr>(ref)));
  int64_t numStages = stages.size();

  // What each stage receives, in the order its senders send: by stage,
  // then result.
  SmallVector<SmallVector<Received>> received(numStages);
  // Per stage and result, the stages that take it.
  SmallVector<DenseMap<int64_t, SmallVector<int64_t>>> consumers(numStages);
  for (auto [index, stage] : llvm::enumerate(stages)) {
    for (unsigned i = 0; i < stage.getNumArguments(); ++i) {
      auto source = stage.getArgAttrOfType<DictionaryAttr>(
          i, SbpDialect::getSourceAttrName());
      auto from = source ? source.getAs<IntegerAttr>("stage") : IntegerAttr();
      if (!from)
        continue;
      int64_t result = source.getAs<IntegerAttr>("result").getInt();
      Type sent = stages[from.getInt()].getResultTypes()[result];
      if (sent != stage.getArgumentTypes()[i]) {
        emitError(stage.getLoc())
            << "sbp-insert-transfers: argument #" << i << " of @"
            << stage.getSymName() << " has type " << stage.getArgumentTypes()[i]
            << " but stage " << from.getInt() << " sends " << sent
            << "; partition the stages first";
        return signalPassFailure();
      }
      received[index].push_back({i, from.getInt(), result});
      consumers[from.getInt()][result].push_back(index);
    }
    llvm::sort(received[index], [](const Received &a, const Received &b) {
      return std::tie(a.stage, a.result) < std::tie(b.stage, b.result);
    });
  }

  // Results that leave the program stay; the others only travel.
  SmallVector<llvm::SmallDenseSet<int64_t>> outputs(numStages);
  for (Attribute element : pipeline.getAs<ArrayAttr>("outputs")) {
    auto output = cast<DictionaryAttr>(element);
    outputs[output.getAs<IntegerAttr>("stage").getInt()].insert(
        output.getAs<IntegerAttr>("result").getInt());
  }

  OpBuilder builder(context);
  SmallVector<SmallVector<int64_t>> renumbered(numStages);
  for (auto [index, stage] : llvm::enumerate(stages)) {
    Block &entry = stage.front();
    builder.setInsertionPointToStart(&entry);
    BitVector erased(stage.getNumArguments());
    for (const Received &from : received[index]) {
      BlockArgument arg = entry.getArgument(from.argument);
      auto recv = RecvOp::create(builder, stage.getLoc(), arg.getType(),
                                 mesh.getValue(), ArrayRef<int64_t>{0},
                                 uint64_t(from.stage));
      arg.replaceAllUsesWith(recv.getResult());
      erased.set(from.argument);
    }

    auto terminator = cast<func::ReturnOp>(entry.getTerminator());
    builder.setInsertionPoint(terminator);
    BitVector dropped(stage.getNumResults());
    for (unsigned r = 0; r < stage.getNumResults(); ++r) {
      auto it = consumers[index].find(r);
      if (it != consumers[index].end())
        for (int64_t to : it->second)
          SendOp::create(builder, stage.getLoc(), terminator.getOperand(r),
                         mesh.getValue(), ArrayRef<int64_t>{0}, uint64_t(to));
      if (!outputs[index].contains(r))
        dropped.set(r);
    }
    for (unsigned r = 0, kept = 0; r < stage.getNumResults(); ++r)
      renumbered[index].push_back(dropped.test(r) ? -1 : kept++);
    terminator->eraseOperands(dropped);
    if (failed(stage.eraseResults(dropped)) ||
        failed(stage.eraseArguments(erased))) {
      emitError(stage.getLoc())
          << "sbp-insert-transfers: cannot rewrite @" << stage.getSymName();
      return signalPassFailure();
    }
  }

  SmallVector<Attribute> newOutputs;
  for (Attribute element : pipeline.getAs<ArrayAttr>("outputs")) {
    auto output = cast<DictionaryAttr>(element);
    NamedAttrList fields(output);
    int64_t stage = output.getAs<IntegerAttr>("stage").getInt();
    int64_t result = output.getAs<IntegerAttr>("result").getInt();
    fields.set("result", builder.getI64IntegerAttr(renumbered[stage][result]));
    newOutputs.push_back(fields.getDictionary(context));
  }
  NamedAttrList fields(pipeline);
  fields.set("outputs", builder.getArrayAttr(newOutputs));
  module->setAttr(SbpDialect::getPipelineAttrName(),
                  fields.getDictionary(context));
}

} // namespace
