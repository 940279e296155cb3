//===- Stablehlo.h - The StableHLO and CHLO subsets sbp reads ---*- C++ -*-===//

#ifndef SBP_DIALECT_STABLEHLO_IR_STABLEHLO_H
#define SBP_DIALECT_STABLEHLO_IR_STABLEHLO_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "sbp/Dialect/StableHLO/IR/StablehloEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/StableHLO/IR/StablehloAttrs.h.inc"

#include "sbp/Dialect/StableHLO/IR/StablehloOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/StablehloOps.h.inc"

#include "sbp/Dialect/StableHLO/IR/ChloOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/ChloOps.h.inc"

#include "sbp/Dialect/StableHLO/IR/ShardyOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/StableHLO/IR/ShardyAttrs.h.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/ShardyOps.h.inc"

#endif // SBP_DIALECT_STABLEHLO_IR_STABLEHLO_H
