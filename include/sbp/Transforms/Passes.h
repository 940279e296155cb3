//===- Passes.h - sbp passes ------------------------------------*- C++ -*-===//

#ifndef SBP_TRANSFORMS_PASSES_H
#define SBP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"

namespace mlir {
namespace sbp {

#define GEN_PASS_DECL
#include "sbp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sbp/Transforms/Passes.h.inc"

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_PASSES_H
