//===- Stablehlo.h - Importing StableHLO programs ---------------*- C++ -*-===//
//
// StableHLO as JAX, torch-xla and XLA print it parses with the `stablehlo`
// and `chlo` dialects registered; importing turns it into the logical
// program (func/linalg/tensor/arith/math).
//
//===----------------------------------------------------------------------===//

#ifndef SBP_IMPORT_STABLEHLO_H
#define SBP_IMPORT_STABLEHLO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir {
namespace sbp {

/// True when `text` may hold StableHLO, CHLO or Shardy ops (a cheap look
/// before parsing).
inline bool mayHoldStablehlo(llvm::StringRef text) {
  return text.contains("stablehlo.") || text.contains("chlo.") ||
         text.contains("sdy.");
}

/// Reports, at their first location, every op name of the stablehlo, chlo
/// and sdy dialects in `buffer` that sbp does not know (the parser would stop
/// at the first); fails when there is one.
LogicalResult checkStablehloOpNames(const llvm::MemoryBuffer &buffer,
                                    MLIRContext *context);

/// True when `module` holds StableHLO, CHLO or Shardy ops.
bool isStablehloModule(ModuleOp module);

/// Inlining, `sbp-legalize-stablehlo`, then clean-up: the
/// `sbp-import-stablehlo` pipeline.
void buildImportStablehloPipeline(OpPassManager &pm);
void registerImportStablehloPipeline();

/// Runs the import pipeline on `module`; errors go to the context's
/// diagnostic handler.
LogicalResult importStablehlo(ModuleOp module);

} // namespace sbp
} // namespace mlir

#endif // SBP_IMPORT_STABLEHLO_H
