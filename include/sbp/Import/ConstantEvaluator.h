//===- ConstantEvaluator.h - Evaluating constant computations at import ---===//
//
// The importers build every node as ordinary ops; a node whose inputs are all
// constants is then evaluated here, as onnxruntime's and onnx-simplifier's
// constant folding do, so that shapes computed from constants (and anything
// else computed from constants alone) are known while the model is read.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_IMPORT_CONSTANTEVALUATOR_H
#define SBP_IMPORT_CONSTANTEVALUATOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

namespace mlir::sbp {

/// Evaluates `value`, a ranked tensor computed from `arith.constant`s alone
/// by linalg structured ops, tensor ops and scalar ops with folders (arith,
/// math), and returns its elements. Returns null when the value depends on
/// a block argument, on an op the evaluator does not know or that does not
/// fold (a division by zero, say), or when evaluating it takes more than
/// `budget` scalar operations.
DenseElementsAttr evaluateConstant(Value value, int64_t budget);

} // namespace mlir::sbp

#endif // SBP_IMPORT_CONSTANTEVALUATOR_H
