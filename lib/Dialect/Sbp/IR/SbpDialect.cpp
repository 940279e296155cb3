//===- SbpDialect.cpp - sbp dialect ---------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp;

#include "sbp/Dialect/Sbp/IR/SbpOpsDialect.cpp.inc"

void SbpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sbp/Dialect/Sbp/IR/SbpOps.cpp.inc"
      >();
  registerAttributes();
}

namespace {
/// Verifies `sbp.sharding` on argument or result `index` of a function.
LogicalResult verifyFunctionSharding(Operation *op, unsigned index,
                                     NamedAttribute attr, bool isResult) {
  StringRef what = isResult ? "result" : "argument";
  if (attr.getName() != SbpDialect::getShardingAttrName())
    return op->emitError() << "unknown sbp attribute '"
                           << attr.getName().getValue() << "' on " << what
                           << " #" << index;
  auto sharding = dyn_cast<NdSbpAttr>(attr.getValue());
  if (!sharding)
    return op->emitError() << "'" << attr.getName().getValue() << "' on "
                           << what << " #" << index
                           << " must be an #sbp.nd attribute";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is only allowed on function " << what << "s";
  Type type =
      isResult ? func.getResultTypes()[index] : func.getArgumentTypes()[index];
  std::string name = (what + " #" + Twine(index)).str();
  return verifyNdSbp([&] { return op->emitError(); }, op, sharding, type, name);
}

/// A non-negative integer field `name` of `dict`, or -1 when it is absent
/// or not one.
int64_t getIndexField(DictionaryAttr dict, StringRef name) {
  auto value = dict.getAs<IntegerAttr>(name);
  return value && value.getInt() >= 0 ? value.getInt() : -1;
}

/// Verifies `sbp.source` on argument `index` of a stage function.
LogicalResult verifySource(Operation *op, unsigned index, Attribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto fail =
      [&] {
        return op->emitError()
               << "'" << SbpDialect::getSourceAttrName() << "' on argument #"
               << index
               << " must be {input = N [, micro_batch_dim = D | offset = O]}, "
                  "{stage = S, result = R}, {backward = S, result = R}, "
                  "{gradient = J} or {saved = J} with non-negative integers";
      };
  if (!dict || !func)
    return fail();
  auto has = [&](StringRef name) { return getIndexField(dict, name) >= 0; };
  bool isInput = dict.contains("input");
  size_t fields = dict.size();
  bool valid =
      isInput ? has("input") &&
                    (fields == 1 ||
                     (fields == 2 && (dict.contains("micro_batch_dim") ||
                                      getIndexField(dict, "offset") >= 0)))
      : dict.contains("gradient") ? has("gradient") && fields == 1
      : dict.contains("saved")
          ? has("saved") && fields == 1
          : (has("stage") || has("backward")) && has("result") && fields == 2;
  if (!valid)
    return fail();
  if (isInput && dict.contains("offset")) {
    auto type = dyn_cast<ShapedType>(func.getArgumentTypes()[index]);
    if (!type || !type.hasRank() || type.getRank() == 0 || type.isDynamicDim(0))
      return op->emitError()
             << "'" << SbpDialect::getSourceAttrName() << "' on argument #"
             << index
             << ": an offset needs an argument whose dimension 0 is static "
                "(the rows it takes)";
    return success();
  }
  if (isInput && fields == 2) {
    int64_t dim = getIndexField(dict, "micro_batch_dim");
    auto type = dyn_cast<ShapedType>(func.getArgumentTypes()[index]);
    if (dim < 0 || !type || !type.hasRank() || dim >= type.getRank())
      return op->emitError()
             << "'" << SbpDialect::getSourceAttrName() << "' on argument #"
             << index << ": micro_batch_dim must be a dimension of it";
  }
  return success();
}

/// Verifies the module's `sbp.pipeline`.
LogicalResult verifyPipeline(Operation *op, Attribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto fail = [&](const Twine &what) {
    return op->emitError() << "'" << SbpDialect::getPipelineAttrName() << "' "
                           << what;
  };
  if (!dict || !isa<ModuleOp>(op))
    return fail("must be a dictionary attribute of a module");
  auto stages = dict.getAs<ArrayAttr>("stages");
  auto microBatches = dict.getAs<IntegerAttr>("micro_batches");
  auto schedule = dict.getAs<StringAttr>("schedule");
  auto outputs = dict.getAs<ArrayAttr>("outputs");
  auto meshRef = dict.getAs<FlatSymbolRefAttr>("mesh");
  if (!stages || stages.empty() || !microBatches || !schedule || !outputs ||
      !dict.getAs<StringAttr>("function") || !meshRef)
    return fail("needs function, mesh, stages (a non-empty array), "
                "micro_batches, schedule and outputs");
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, meshRef);
  if (!mesh || mesh.getShape()[0] != int64_t(stages.size()))
    return fail("needs a mesh of the module whose first axis is the number "
                "of stages");
  if (microBatches.getInt() < 1)
    return fail("needs a positive micro_batches");
  if (schedule.getValue() != "gpipe" && schedule.getValue() != "1f1b")
    return fail("has schedule \"" + schedule.getValue() +
                "\"; expected \"gpipe\" or \"1f1b\"");
  auto lookup = [&](ArrayAttr refs,
                    SmallVectorImpl<FunctionOpInterface> &funcs) {
    for (Attribute stage : refs) {
      auto ref = dyn_cast<FlatSymbolRefAttr>(stage);
      auto func =
          ref ? SymbolTable::lookupNearestSymbolFrom<FunctionOpInterface>(op,
                                                                          ref)
              : FunctionOpInterface();
      if (!func)
        return false;
      funcs.push_back(func);
    }
    return true;
  };
  SmallVector<FunctionOpInterface> funcs, updates, backwards;
  if (!lookup(stages, funcs))
    return fail("names a stage that is not a function of the module");
  // A training pipeline: a backward and an update function per stage.
  auto backward = dict.getAs<ArrayAttr>("backward");
  auto update = dict.getAs<ArrayAttr>("update");
  if (dict.contains("backward") || dict.contains("update")) {
    if (!backward || !update || backward.size() != stages.size() ||
        update.size() != stages.size() || !lookup(backward, backwards) ||
        !lookup(update, updates))
      return fail("needs backward and update, both arrays of one function "
                  "of the module per stage, or neither");
  }
  for (Attribute element : outputs) {
    auto output = dyn_cast<DictionaryAttr>(element);
    auto combine = output ? output.getAs<StringAttr>("combine") : StringAttr();
    bool fromUpdate = output && output.contains("update");
    if (fromUpdate && (updates.empty() || !output.getAs<UnitAttr>("update")))
      return fail("has an output of an update function but no update "
                  "functions (or update is not a unit attribute)");
    MutableArrayRef<FunctionOpInterface> from = fromUpdate ? updates : funcs;
    // An update output may be the rows of several stages' results, in
    // order: `stage` and `result` are then arrays of one length.
    SmallVector<std::pair<int64_t, int64_t>> pieces;
    auto stageList = output ? output.getAs<ArrayAttr>("stage") : ArrayAttr();
    auto resultList = output ? output.getAs<ArrayAttr>("result") : ArrayAttr();
    if (fromUpdate && stageList && resultList &&
        stageList.size() == resultList.size()) {
      for (auto [s, r] : llvm::zip(stageList, resultList)) {
        auto stage = dyn_cast<IntegerAttr>(s),
             result = dyn_cast<IntegerAttr>(r);
        pieces.emplace_back(stage ? stage.getInt() : -1,
                            result ? result.getInt() : -1);
      }
    } else if (output) {
      pieces.emplace_back(getIndexField(output, "stage"),
                          getIndexField(output, "result"));
    }
    bool valid =
        !pieces.empty() && combine &&
        llvm::is_contained({"concat", "sum", "same"}, combine.getValue()) &&
        (combine.getValue() != "concat" || getIndexField(output, "dim") >= 0) &&
        (pieces.size() == 1 ||
         (combine.getValue() == "concat" && getIndexField(output, "dim") == 0));
    for (auto [stage, result] : pieces)
      valid &= stage >= 0 && stage < int64_t(from.size()) && result >= 0 &&
               result < int64_t(from[stage].getNumResults());
    if (!valid)
      return fail("has an output that is not {stage = S, result = R, combine "
                  "= \"concat\" (with dim = D) | \"sum\" | \"same\" [, "
                  "update]} of an existing stage (or update) result, nor an "
                  "update's {stage = [S...], result = [R...], combine = "
                  "\"concat\", dim = 0, update}");
  }
  return success();
}
/// `sbp.train_step = {optimizer, params, state}` on a function whose
/// results are its first params + state arguments updated, then the loss.
LogicalResult verifyTrainStep(Operation *op, Attribute attr) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto fail = [&]() {
    return op->emitError() << "'" << SbpDialect::getTrainStepAttrName() << "' ";
  };
  if (!dict || !func)
    return fail() << "must be a dictionary on a function";
  auto optimizer = dict.getAs<StringAttr>("optimizer");
  if (!optimizer ||
      (optimizer.getValue() != "sgd" && optimizer.getValue() != "adamw"))
    return fail() << "needs optimizer = \"sgd\" or \"adamw\"";
  int64_t params = getIndexField(dict, "params");
  int64_t state = getIndexField(dict, "state");
  if (params < 0 || state < 0)
    return fail() << "needs non-negative integers params and state";
  ArrayRef<Type> args = func.getArgumentTypes();
  ArrayRef<Type> results = func.getResultTypes();
  int64_t updated = params + state;
  if (updated > int64_t(args.size()))
    return fail() << "names " << updated << " parameters and states but the "
                  << "function has " << args.size() << " arguments";
  if (int64_t(results.size()) != updated + 1)
    return fail() << "needs " << updated + 1
                  << " results (the updated parameters and states, then the "
                     "loss), not "
                  << results.size();
  // Partitioned, both are shards of the same layout (and, lowered,
  // buffers).
  auto module = op->getParentOfType<ModuleOp>();
  bool local = module && module->hasAttr(SbpDialect::getPartitionedAttrName());
  for (int64_t i = 0; i < updated; ++i)
    if (local
            ? getElementTypeOrSelf(args[i]) != getElementTypeOrSelf(results[i])
            : args[i] != results[i])
      return fail() << "needs result #" << i << " of the type of argument #"
                    << i << " (" << args[i] << "), not " << results[i];
  auto loss = dyn_cast<ShapedType>(results.back());
  if (!loss || !loss.hasRank() || loss.getRank() != 0 ||
      !isa<FloatType>(loss.getElementType()))
    return fail() << "needs a loss result of type tensor<float>, not "
                  << results.back();
  return success();
}
} // namespace

LogicalResult SbpDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == getSourceAttrName())
    return verifySource(op, argIndex, attr.getValue());
  if (attr.getName() == getNameAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << getNameAttrName() << "' on argument #"
                             << argIndex << " must be a string";
    return success();
  }
  return verifyFunctionSharding(op, argIndex, attr, /*isResult=*/false);
}

LogicalResult SbpDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  return verifyFunctionSharding(op, resultIndex, attr, /*isResult=*/true);
}

LogicalResult SbpDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getPartitionedAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' must be a unit attribute of a module";
    return success();
  }
  if (name == getPipelineAttrName())
    return verifyPipeline(op, attr.getValue());
  if (name == getTrainStepAttrName())
    return verifyTrainStep(op, attr.getValue());
  if (name == getStageAttrName()) {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || stage.getInt() < 0 || isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' must be a non-negative integer on an op";
    return success();
  }
  if (name == getStopGradientAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) || op->getNumResults() == 0)
      return op->emitError()
             << "'" << name
             << "' must be a unit attribute of an op with results";
    return success();
  }
  bool isOperands = name == getOperandShardingsAttrName();
  if (!isOperands && name != getResultShardingsAttrName())
    return op->emitError() << "unknown sbp attribute '" << name
                           << "' on an operation";
  auto array = dyn_cast<ArrayAttr>(attr.getValue());
  TypeRange types = isOperands ? TypeRange(op->getOperandTypes())
                               : TypeRange(op->getResultTypes());
  if (!array || array.size() != types.size())
    return op->emitError() << "'" << name << "' must be an array of "
                           << types.size() << " #sbp.nd or unit attributes";
  for (auto [index, element, type] : llvm::enumerate(array, types)) {
    if (isa<UnitAttr>(element))
      continue;
    auto sharding = dyn_cast<NdSbpAttr>(element);
    std::string what =
        ((isOperands ? "operand #" : "result #") + Twine(index)).str();
    if (!sharding)
      return op->emitError() << "'" << name << "' entry for " << what
                             << " must be an #sbp.nd or unit attribute";
    if (failed(verifyNdSbp([&] { return op->emitError(); }, op, sharding, type,
                           what)))
      return failure();
  }
  return success();
}
