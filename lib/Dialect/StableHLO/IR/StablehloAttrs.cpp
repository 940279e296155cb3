//===- StablehloAttrs.cpp - StableHLO dimension-number attributes ---------===//
//
// The keyed forms `#stablehlo.gather<offset_dims = [1], ...>` (fields in any
// order, empty lists left out) and the compact convolution layout
// `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "sbp/Dialect/StableHLO/IR/StablehloDims.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp::stablehlo;

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/StableHLO/IR/StablehloAttrs.cpp.inc"

void StablehloDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sbp/Dialect/StableHLO/IR/StablehloAttrs.cpp.inc"
      >();
}

ParseResult mlir::sbp::stablehlo::parseDimList(AsmParser &parser,
                                               SmallVectorImpl<int64_t> &dims) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        [&]() -> ParseResult {
                                          int64_t value;
                                          if (parser.parseInteger(value))
                                            return failure();
                                          dims.push_back(value);
                                          return success();
                                        });
}

void mlir::sbp::stablehlo::printDimList(AsmPrinter &printer,
                                        ArrayRef<int64_t> dims) {
  printer << '[';
  llvm::interleaveComma(dims, printer);
  printer << ']';
}

namespace {
/// Parses `<key = [..] | int, ...>` into `fields`, whose order gives `keys`.
/// Keys not given keep their value; unknown and repeated keys are errors.
ParseResult parseKeyedFields(AsmParser &parser, ArrayRef<StringRef> keys,
                             MutableArrayRef<SmallVector<int64_t>> fields) {
  if (parser.parseLess())
    return failure();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  SmallVector<bool> seen(keys.size(), false);
  auto parseField = [&]() -> ParseResult {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    const auto *it = llvm::find(keys, key);
    if (it == keys.end())
      return parser.emitError(loc) << "unknown field '" << key << "'";
    size_t index = it - keys.begin();
    if (seen[index])
      return parser.emitError(loc) << "field '" << key << "' given twice";
    seen[index] = true;
    fields[index].clear();
    int64_t value;
    OptionalParseResult integer = parser.parseOptionalInteger(value);
    if (integer.has_value()) {
      fields[index].push_back(value);
      return *integer;
    }
    return parseDimList(parser, fields[index]);
  };
  if (parser.parseCommaSeparatedList(parseField) || parser.parseGreater())
    return failure();
  return success();
}

/// Prints the fields that are not empty; scalar fields are printed always.
void printKeyedFields(AsmPrinter &printer, ArrayRef<StringRef> keys,
                      ArrayRef<ArrayRef<int64_t>> lists,
                      ArrayRef<std::pair<StringRef, int64_t>> scalars) {
  printer << '<';
  bool first = true;
  for (auto [key, list] : llvm::zip(keys, lists)) {
    if (list.empty())
      continue;
    printer << (first ? "" : ", ") << key << " = ";
    printDimList(printer, list);
    first = false;
  }
  for (auto [key, value] : scalars) {
    printer << (first ? "" : ", ") << key << " = " << value;
    first = false;
  }
  printer << '>';
}

/// Reads a scalar field given as a one-element list by parseKeyedFields.
FailureOr<int64_t> getScalar(AsmParser &parser, ArrayRef<int64_t> field,
                             StringRef key) {
  if (field.size() != 1)
    return parser.emitError(parser.getCurrentLocation())
           << "expected an integer for '" << key << "'";
  return field[0];
}
} // namespace

//===----------------------------------------------------------------------===//
// #stablehlo.dot
//===----------------------------------------------------------------------===//

Attribute DotDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  StringRef keys[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                      "lhs_contracting_dimensions",
                      "rhs_contracting_dimensions"};
  SmallVector<int64_t> fields[4];
  if (parseKeyedFields(parser, keys, fields))
    return {};
  return get(parser.getContext(), fields[0], fields[1], fields[2], fields[3]);
}

void DotDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printKeyedFields(printer,
                   {"lhs_batching_dimensions", "rhs_batching_dimensions",
                    "lhs_contracting_dimensions", "rhs_contracting_dimensions"},
                   {getLhsBatchingDimensions(), getRhsBatchingDimensions(),
                    getLhsContractingDimensions(),
                    getRhsContractingDimensions()},
                   {});
}

//===----------------------------------------------------------------------===//
// #stablehlo.gather and #stablehlo.scatter
//===----------------------------------------------------------------------===//

namespace {
/// Gather and scatter dimension numbers: five lists, then the index vector
/// dimension, under `keys`.
template <typename AttrT>
Attribute parseIndexingDims(AsmParser &parser, ArrayRef<StringRef> keys) {
  SmallVector<int64_t> fields[6];
  if (parseKeyedFields(parser, keys, fields))
    return {};
  // StableHLO leaves out an index vector dimension of 0, as it does lists
  // that are empty.
  int64_t indexVectorDim = 0;
  if (!fields[5].empty()) {
    FailureOr<int64_t> given = getScalar(parser, fields[5], keys[5]);
    if (failed(given))
      return {};
    indexVectorDim = *given;
  }
  return AttrT::get(parser.getContext(), fields[0], fields[1], fields[2],
                    fields[3], fields[4], indexVectorDim);
}
} // namespace

Attribute GatherDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  return parseIndexingDims<GatherDimensionNumbersAttr>(
      parser,
      {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
       "start_indices_batching_dims", "start_index_map", "index_vector_dim"});
}

void GatherDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printKeyedFields(
      printer,
      {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
       "start_indices_batching_dims", "start_index_map"},
      {getOffsetDims(), getCollapsedSliceDims(), getOperandBatchingDims(),
       getStartIndicesBatchingDims(), getStartIndexMap()},
      {{"index_vector_dim", getIndexVectorDim()}});
}

Attribute ScatterDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  return parseIndexingDims<ScatterDimensionNumbersAttr>(
      parser, {"update_window_dims", "inserted_window_dims",
               "input_batching_dims", "scatter_indices_batching_dims",
               "scatter_dims_to_operand_dims", "index_vector_dim"});
}

void ScatterDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printKeyedFields(
      printer,
      {"update_window_dims", "inserted_window_dims", "input_batching_dims",
       "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"},
      {getUpdateWindowDims(), getInsertedWindowDims(), getInputBatchingDims(),
       getScatterIndicesBatchingDims(), getScatterDimsToOperandDims()},
      {{"index_vector_dim", getIndexVectorDim()}});
}

//===----------------------------------------------------------------------===//
// #stablehlo.conv
//===----------------------------------------------------------------------===//

namespace {
/// One operand's layout: `[b, 0, 1, f]`. `roles` names the two non-spatial
/// letters (`bf` or `io`); their positions go to `first` and `second`.
ParseResult parseConvLayout(AsmParser &parser, StringRef roles, int64_t &first,
                            int64_t &second,
                            SmallVectorImpl<int64_t> &spatial) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  first = second = -1;
  SmallVector<std::pair<int64_t, int64_t>> spatialAt;
  int64_t position = 0;
  auto parseEntry = [&]() -> ParseResult {
    int64_t number;
    OptionalParseResult integer = parser.parseOptionalInteger(number);
    if (integer.has_value()) {
      if (failed(*integer))
        return failure();
      spatialAt.push_back({number, position++});
      return success();
    }
    StringRef letter;
    if (parser.parseKeyword(&letter))
      return failure();
    if (letter.size() != 1 || !roles.contains(letter[0]))
      return parser.emitError(parser.getCurrentLocation())
             << "expected a spatial dimension number or one of '" << roles
             << "' in a convolution layout, got '" << letter << "'";
    int64_t &slot = letter[0] == roles[0] ? first : second;
    if (slot >= 0)
      return parser.emitError(parser.getCurrentLocation())
             << "'" << letter << "' given twice in a convolution layout";
    slot = position++;
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseEntry))
    return failure();
  if (first < 0 || second < 0)
    return parser.emitError(loc) << "a convolution layout needs both '"
                                 << roles[0] << "' and '" << roles[1] << "'";
  spatial.assign(spatialAt.size(), -1);
  for (auto [number, at] : spatialAt) {
    if (number < 0 || number >= static_cast<int64_t>(spatialAt.size()) ||
        spatial[number] >= 0)
      return parser.emitError(loc)
             << "spatial dimensions of a convolution layout must be 0.."
             << spatialAt.size() - 1 << ", each once";
    spatial[number] = at;
  }
  return success();
}

void printConvLayout(AsmPrinter &printer, StringRef roles, int64_t first,
                     int64_t second, ArrayRef<int64_t> spatial) {
  SmallVector<std::string> entries(spatial.size() + 2);
  if (first < static_cast<int64_t>(entries.size()))
    entries[first] = roles[0];
  if (second < static_cast<int64_t>(entries.size()))
    entries[second] = roles[1];
  for (auto [number, at] : llvm::enumerate(spatial))
    if (at < static_cast<int64_t>(entries.size()))
      entries[at] = std::to_string(number);
  printer << '[';
  llvm::interleaveComma(entries, printer);
  printer << ']';
}
} // namespace

ConvDimensionNumbersAttr
mlir::sbp::stablehlo::parseConvDimensions(AsmParser &parser) {
  int64_t inBatch, inFeature, kIn, kOut, outBatch, outFeature;
  SmallVector<int64_t> inSpatial, kSpatial, outSpatial;
  if (parseConvLayout(parser, "bf", inBatch, inFeature, inSpatial) ||
      parser.parseKeyword("x") ||
      parseConvLayout(parser, "io", kIn, kOut, kSpatial) ||
      parser.parseArrow() ||
      parseConvLayout(parser, "bf", outBatch, outFeature, outSpatial))
    return {};
  return ConvDimensionNumbersAttr::get(parser.getContext(), inBatch, inFeature,
                                       inSpatial, kIn, kOut, kSpatial, outBatch,
                                       outFeature, outSpatial);
}

void mlir::sbp::stablehlo::printConvDimensions(AsmPrinter &printer,
                                               ConvDimensionNumbersAttr dims) {
  printConvLayout(printer, "bf", dims.getInputBatchDimension(),
                  dims.getInputFeatureDimension(),
                  dims.getInputSpatialDimensions());
  printer << 'x';
  printConvLayout(printer, "io", dims.getKernelInputFeatureDimension(),
                  dims.getKernelOutputFeatureDimension(),
                  dims.getKernelSpatialDimensions());
  printer << "->";
  printConvLayout(printer, "bf", dims.getOutputBatchDimension(),
                  dims.getOutputFeatureDimension(),
                  dims.getOutputSpatialDimensions());
}

Attribute ConvDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  ConvDimensionNumbersAttr dims = parseConvDimensions(parser);
  if (!dims || parser.parseGreater())
    return {};
  return dims;
}

void ConvDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printConvDimensions(printer, *this);
  printer << '>';
}
