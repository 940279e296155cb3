//===- TrainStep.h - Training steps and their optimizer ---------*- C++ -*-===//
//
// What sbp-make-train-step writes into `sbp.train_step` and what the
// passes that cut a step apart (pipeline stages) need to rebuild its
// optimizer update piece by piece.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_TRAINSTEP_H
#define SBP_TRANSFORMS_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include <string>

namespace mlir {
namespace sbp {

/// An optimizer and its hyperparameters.
struct OptimizerSpec {
  /// "sgd" or "adamw".
  std::string kind = "adamw";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8,
         weightDecay = 0.01;

  bool isAdam() const { return kind == "adamw"; }
  /// State tensors per parameter (AdamW's two moments), and the shared
  /// ones after all of them (AdamW's step count).
  int64_t getStatePerParam() const { return isAdam() ? 2 : 0; }
  int64_t getSharedState() const { return isAdam() ? 1 : 0; }
};

/// The update of one step: new `params` then new `state` (laid out as the
/// step's arguments: per-parameter state in parameter order, then the
/// shared state) from `gradients`, one element-wise `linalg.generic` per
/// parameter.
SmallVector<Value> buildOptimizerUpdate(OpBuilder &b, Location loc,
                                        const OptimizerSpec &spec,
                                        ValueRange params, ValueRange state,
                                        ArrayRef<Value> gradients);

/// Erases the operands that gradient ops do not read, canonicalizes and
/// CSEs `func`: what every function with a backward pass gets.
LogicalResult simplifyGradients(func::FuncOp func);

/// `sbp.train_step` for a step with `params` parameters and `state` state
/// arguments updated by `spec`.
DictionaryAttr getTrainStepAttr(MLIRContext *context, const OptimizerSpec &spec,
                                int64_t params, int64_t state);

/// The optimizer that `sbp.train_step` of `step` names, with its
/// hyperparameters (the defaults where it gives none).
OptimizerSpec getOptimizerSpec(func::FuncOp step);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_TRAINSTEP_H
