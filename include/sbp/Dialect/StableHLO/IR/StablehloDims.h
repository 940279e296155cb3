//===- StablehloDims.h - Parsing helpers of the StableHLO forms -*- C++ -*-===//

#ifndef SBP_DIALECT_STABLEHLO_IR_STABLEHLODIMS_H
#define SBP_DIALECT_STABLEHLO_IR_STABLEHLODIMS_H

#include "sbp/Dialect/StableHLO/IR/Stablehlo.h"

namespace mlir {
namespace sbp {
namespace stablehlo {

/// `[1, 2, 3]`.
ParseResult parseDimList(AsmParser &parser, SmallVectorImpl<int64_t> &dims);
void printDimList(AsmPrinter &printer, ArrayRef<int64_t> dims);

/// The compact convolution layout `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`;
/// null after reporting an error.
ConvDimensionNumbersAttr parseConvDimensions(AsmParser &parser);
void printConvDimensions(AsmPrinter &printer, ConvDimensionNumbersAttr dims);

} // namespace stablehlo
} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_STABLEHLO_IR_STABLEHLODIMS_H
