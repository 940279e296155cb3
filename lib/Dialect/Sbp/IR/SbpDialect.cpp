//===- SbpDialect.cpp - sbp dialect ---------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
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
} // namespace

LogicalResult SbpDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
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
