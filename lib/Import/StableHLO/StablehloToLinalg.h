//===- StablehloToLinalg.h - Shared state of the StableHLO importer -*- C++
//-*-===//
//
// Each StableHLO op is converted by a function registered under its name,
// which builds the op's logical meaning in func/linalg/tensor/arith/math in
// front of it and returns the values that replace its results. StableHLO's
// values are tensors already, so no type conversion is involved and ops can
// be converted in any order.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_IMPORT_STABLEHLO_STABLEHLOTOLINALG_H
#define SBP_LIB_IMPORT_STABLEHLO_STABLEHLOTOLINALG_H

#include "mlir/IR/BuiltinOps.h"
#include "sbp/Dialect/StableHLO/IR/Stablehlo.h"
#include "sbp/Import/TensorBuilders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <functional>

namespace mlir {
namespace sbp {
namespace stablehlo_import {

using namespace ::mlir::sbp::tensor_builders;

/// Converts one op, building in front of it; returns the values replacing
/// its results, or failure after reporting an error on the op.
using Converter =
    std::function<FailureOr<SmallVector<Value>>(Operation *, OpBuilder &)>;
using ConverterTable = llvm::StringMap<Converter>;

void addElementwiseConverters(ConverterTable &table);
void addShapeConverters(ConverterTable &table);
void addReductionConverters(ConverterTable &table);
void addIndexingConverters(ConverterTable &table);
void addControlFlowConverters(ConverterTable &table);
void addSelectionConverters(ConverterTable &table);

/// Turns GSPMD's `mhlo.sharding` attributes and `@Sharding` custom calls
/// into sbp layouts on one `sbp.mesh @mesh`.
LogicalResult importHloShardings(ModuleOp module);

/// Turns Shardy's meshes, `sdy.sharding` attributes and sharding
/// constraints into sbp's: one `sbp.mesh` per `sdy.mesh`, of the same name
/// and axes.
LogicalResult importShardyShardings(ModuleOp module);

/// The scalar form of the element-wise op `op` on `operands` (its operands'
/// elements); failure when `op` is not element-wise or has no scalar form.
FailureOr<Value> buildScalarOp(OpBuilder &b, Location loc, Operation *op,
                               ValueRange operands);

/// Builds the scalar computation of a region of StableHLO ops on 0-d
/// tensors (a reduce or scatter combiner) with `arguments` for its block
/// arguments; returns the values its `stablehlo.return` yields.
FailureOr<SmallVector<Value>> buildScalarRegion(OpBuilder &b, Region &region,
                                                ValueRange arguments);

/// Unit attributes that markUnsigned sets on the StableHLO ops whose
/// operands, or results, had unsigned integer elements.
constexpr llvm::StringLiteral kUnsignedOperands = "sbp.unsigned_operands";
constexpr llvm::StringLiteral kUnsignedResults = "sbp.unsigned_results";

/// Makes every unsigned integer type in `module` signless (arith has no
/// others), keeping on each StableHLO op whether its operands or results
/// were unsigned, for the conversions whose meaning depends on it.
void markUnsigned(ModuleOp module);

/// The ranked static type of `value`; null after reporting on `op`.
RankedTensorType getStaticType(Operation *op, Value value);

/// The value of an integer scalar computed from constants only (an index
/// given as an operand), when it can be evaluated; `known` gives values of
/// block arguments (a loop's counter).
std::optional<int64_t>
evaluateIndex(Value value,
              const llvm::DenseMap<Value, int64_t> *known = nullptr);

/// `input` with `low`/`high` (non-negative) elements of the scalar `value`
/// added per dimension, and `interior[d]` of them between neighbours (none
/// when `interior` is empty).
Value buildPad(OpBuilder &b, Location loc, Value input, Value value,
               ArrayRef<int64_t> low, ArrayRef<int64_t> high,
               ArrayRef<int64_t> interior = {});

/// An optional attribute of window sizes, strides or dilations: its values,
/// or `count` ones where it is absent.
inline SmallVector<int64_t> getOrOnes(std::optional<ArrayRef<int64_t>> values,
                                      int64_t count) {
  return values ? SmallVector<int64_t>(*values)
                : SmallVector<int64_t>(count, 1);
}

/// The [low, high] padding of a window op's `rank` dimensions into `low` and
/// `high` (zeros where the attribute is absent); false where it does not
/// hold `rank` pairs.
bool getPadding(std::optional<DenseIntElementsAttr> padding, int64_t rank,
                SmallVectorImpl<int64_t> &low, SmallVectorImpl<int64_t> &high);

/// `input` (static) read back to front along `dims`.
Value buildReverse(OpBuilder &b, Location loc, Value input,
                   ArrayRef<int64_t> dims);

/// A scalar of `tensor` (0-d): the constant itself when it is one.
Value extractScalar(OpBuilder &b, Location loc, Value tensor);

/// The integer scalar `value` as an index (sign-extended).
Value toIndex(OpBuilder &b, Location loc, Value value);

} // namespace stablehlo_import
} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_IMPORT_STABLEHLO_STABLEHLOTOLINALG_H
