//===- Sbp.h - sbp dialect --------------------------------------*- C++ -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBP_H
#define SBP_DIALECT_SBP_IR_SBP_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpAttrs.h"

#include "sbp/Dialect/Sbp/IR/SbpOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/Sbp/IR/SbpOps.h.inc"

namespace mlir {
namespace sbp {

/// The mesh named `name` in the nearest symbol table around `from`, or null.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr name,
                  SymbolTableCollection *symbolTable = nullptr);

/// The all-`B` layout on `mesh`.
NdSbpAttr getReplicated(MeshOp mesh);

/// Checks `sharding` for a value of type `type`: its mesh exists, it has one
/// entry per mesh axis, and split dimensions are in range. Errors are
/// reported through `emitError`; `what` names the checked value in them.
LogicalResult verifyNdSbp(function_ref<InFlightDiagnostic()> emitError,
                          Operation *from, NdSbpAttr sharding, Type type,
                          StringRef what,
                          SymbolTableCollection *symbolTable = nullptr);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_IR_SBP_H
