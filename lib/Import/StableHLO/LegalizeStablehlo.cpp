//===- LegalizeStablehlo.cpp - StableHLO to the logical program -----------===//
//
// Three steps: weights the file left out become arguments, shardings become
// sbp layouts (ImportShardings.cpp), then every StableHLO op is converted by
// the function registered under its name. Converters build in front of their op
// and may leave StableHLO ops behind (an unrolled loop's body), so the
// conversion repeats until none is left or an op fails; all failures of a
// round are reported.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPLEGALIZESTABLEHLOPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
bool isStablehloOp(Operation *op) {
  return isa<shlo::StablehloDialect, chlo::ChloDialect, sdy::SdyDialect>(
      op->getDialect());
}

/// Constants whose values were elided become arguments of their function;
/// one warning per function names them.
void liftElidedConstants(ModuleOp module) {
  module.walk([](func::FuncOp func) {
    SmallVector<shlo::ConstantOp> elided;
    func.walk([&](shlo::ConstantOp constant) {
      auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
      if (resource && !resource.getRawHandle().getBlob())
        elided.push_back(constant);
    });
    if (elided.empty())
      return;
    unsigned first = func.getNumArguments();
    InFlightDiagnostic warning = elided.front().emitWarning();
    if (elided.size() == 1)
      warning << "a constant of @" << func.getSymName()
              << " has no value in the file (dense_resource); it becomes its "
                 "argument #"
              << first;
    else
      warning << elided.size() << " constants of @" << func.getSymName()
              << " have no value in the file (dense_resource); they become "
                 "its arguments #"
              << first << " to #" << first + elided.size() - 1;
    warning.report();
    MLIRContext *ctx = func.getContext();
    SmallVector<Type> inputs(func.getArgumentTypes());
    SmallVector<Attribute> argAttrs;
    if (ArrayAttr attrs = func.getAllArgAttrs())
      argAttrs.assign(attrs.begin(), attrs.end());
    argAttrs.resize(inputs.size(), DictionaryAttr::get(ctx));
    for (shlo::ConstantOp constant : elided) {
      BlockArgument arg =
          func.front().addArgument(constant.getType(), constant.getLoc());
      inputs.push_back(constant.getType());
      argAttrs.push_back(DictionaryAttr::get(ctx));
      constant.replaceAllUsesWith(arg);
      constant.erase();
    }
    func.setFunctionType(FunctionType::get(ctx, inputs, func.getResultTypes()));
    func.setAllArgAttrs(argAttrs);
  });
}

/// `type` with unsigned integer elements made signless.
Type getSignless(Type type) {
  if (auto shaped = dyn_cast<RankedTensorType>(type))
    return shaped.clone(getSignless(shaped.getElementType()));
  if (auto integer = dyn_cast<IntegerType>(type);
      integer && integer.isUnsigned())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

bool hasUnsigned(TypeRange types) {
  return llvm::any_of(types,
                      [](Type type) { return getSignless(type) != type; });
}
} // namespace

void stablehlo_import::markUnsigned(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  // Every op is marked before any type changes.
  module.walk([&](Operation *op) {
    if (!isStablehloOp(op))
      return;
    if (hasUnsigned(op->getOperandTypes()))
      op->setAttr(kUnsignedOperands, UnitAttr::get(ctx));
    if (hasUnsigned(op->getResultTypes()))
      op->setAttr(kUnsignedResults, UnitAttr::get(ctx));
  });
  module.walk([&](Operation *op) {
    if (auto constant = dyn_cast<shlo::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
          dense && hasUnsigned(dense.getType()))
        constant.setValueAttr(
            dense.bitcast(getSignless(dense.getType().getElementType())));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(getSignless(arg.getType()));
    for (OpResult result : op->getResults())
      result.setType(getSignless(result.getType()));
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      SmallVector<Type> inputs, results;
      for (Type type : func.getArgumentTypes())
        inputs.push_back(getSignless(type));
      for (Type type : func.getResultTypes())
        results.push_back(getSignless(type));
      func.setFunctionType(FunctionType::get(ctx, inputs, results));
    }
  });
}

namespace {
struct LegalizeStablehloPass
    : public sbp::impl::SbpLegalizeStablehloPassBase<LegalizeStablehloPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    liftElidedConstants(module);
    markUnsigned(module);
    if (failed(importHloShardings(module)) ||
        failed(importShardyShardings(module)))
      return signalPassFailure();

    ConverterTable table;
    addElementwiseConverters(table);
    addShapeConverters(table);
    addReductionConverters(table);
    addIndexingConverters(table);
    addControlFlowConverters(table);
    addSelectionConverters(table);

    while (true) {
      // Ops nested in a StableHLO op (combiner regions, loop bodies) are
      // converted with it.
      SmallVector<Operation *> pending;
      module.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isStablehloOp(op))
          return WalkResult::advance();
        pending.push_back(op);
        return WalkResult::skip();
      });
      if (pending.empty())
        return;
      // Ops that read indices from constants go first, while the values
      // they read are still StableHLO constants and arithmetic.
      std::stable_partition(pending.begin(), pending.end(), [](Operation *op) {
        return isa<shlo::WhileOp, shlo::CaseOp, shlo::DynamicSliceOp,
                   shlo::DynamicUpdateSliceOp>(op);
      });
      bool failed = false;
      for (Operation *op : pending) {
        auto it = table.find(op->getName().getStringRef());
        if (it == table.end()) {
          if (auto call = dyn_cast<shlo::CustomCallOp>(op))
            op->emitError() << "custom call @" << call.getCallTargetName()
                            << " is not supported";
          else
            op->emitError()
                << "'" << op->getName() << "' is not supported by the importer";
          failed = true;
          continue;
        }
        OpBuilder b(op);
        FailureOr<SmallVector<Value>> replacements = it->second(op, b);
        if (mlir::failed(replacements)) {
          failed = true;
          continue;
        }
        op->replaceAllUsesWith(*replacements);
        op->erase();
      }
      if (failed)
        return signalPassFailure();
    }
  }
};
} // namespace
