//===- StablehloOps.cpp - StableHLO and CHLO ops in their printed forms ---===//
//
// The custom directives and parsers reproduce the textual forms that
// StableHLO's printer produces (and older releases produced), so that files
// exported by JAX, torch-xla and XLA parse unchanged.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "sbp/Dialect/StableHLO/IR/StablehloDims.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo;

#include "sbp/Dialect/StableHLO/IR/ChloOpsDialect.cpp.inc"
#include "sbp/Dialect/StableHLO/IR/StablehloEnums.cpp.inc"
#include "sbp/Dialect/StableHLO/IR/StablehloOpsDialect.cpp.inc"

namespace {
/// Exported programs call private functions (`_take`, `_where`); every op
/// may be inlined into its caller.
struct InlineEverything : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void StablehloDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sbp/Dialect/StableHLO/IR/StablehloOps.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<InlineEverything>();
}

void chlo::ChloDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sbp/Dialect/StableHLO/IR/ChloOps.cpp.inc"
      >();
  addInterfaces<InlineEverything>();
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

namespace {
/// `: tensor<4xf32>` when the operands and the result share one type, else
/// `: (tensor<4xi32>) -> tensor<4xf32>`. The last of `types` is the result.
ParseResult parseSameTypes(OpAsmParser &parser, ArrayRef<Type *> types) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type))
    return failure();
  auto function = dyn_cast<FunctionType>(type);
  if (!function) {
    for (Type *slot : types)
      *slot = type;
    return success();
  }
  if (function.getNumInputs() != types.size() - 1 ||
      function.getNumResults() != 1)
    return parser.emitError(loc)
           << "expected a function type with " << types.size() - 1
           << " inputs and one result";
  for (auto [slot, input] : llvm::zip(types.drop_back(), function.getInputs()))
    *slot = input;
  *types.back() = function.getResult(0);
  return success();
}

void printSameTypes(OpAsmPrinter &printer, ArrayRef<Type> types) {
  if (llvm::all_equal(types)) {
    printer << types.front();
    return;
  }
  printer.printFunctionalType(types.drop_back(), types.take_back());
}

template <typename... Types>
ParseResult parseSameOperandsAndResultType(OpAsmParser &parser,
                                           Types &...types) {
  return parseSameTypes(parser, {&types...});
}

template <typename... Types>
void printSameOperandsAndResultType(OpAsmPrinter &printer, Operation *,
                                    Types... types) {
  printSameTypes(printer, {types...});
}

/// `: tensor<i1>, tensor<4xf32>` (predicate and result types) or a function
/// type.
ParseResult parseSelectOpType(OpAsmParser &parser, Type &pred, Type &onTrue,
                              Type &onFalse, Type &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  SmallVector<Type> types;
  if (parser.parseTypeList(types))
    return failure();
  if (types.size() == 2) {
    pred = types[0];
    onTrue = onFalse = result = types[1];
    return success();
  }
  auto function =
      types.size() == 1 ? dyn_cast<FunctionType>(types[0]) : nullptr;
  if (!function || function.getNumInputs() != 3 ||
      function.getNumResults() != 1)
    return parser.emitError(loc) << "expected the predicate and result types, "
                                    "or a function type";
  pred = function.getInput(0);
  onTrue = function.getInput(1);
  onFalse = function.getInput(2);
  result = function.getResult(0);
  return success();
}

void printSelectOpType(OpAsmPrinter &printer, Operation *, Type pred,
                       Type onTrue, Type onFalse, Type result) {
  if (onTrue == result && onFalse == result) {
    printer << pred << ", " << result;
    return;
  }
  printer.printFunctionalType(TypeRange{pred, onTrue, onFalse},
                              TypeRange{result});
}

ParseResult parseDims(OpAsmParser &parser, DenseI64ArrayAttr &attr) {
  SmallVector<int64_t> dims;
  if (parseDimList(parser, dims))
    return failure();
  attr = DenseI64ArrayAttr::get(parser.getContext(), dims);
  return success();
}

void printDims(OpAsmPrinter &printer, Operation *, DenseI64ArrayAttr attr) {
  printDimList(printer, attr.asArrayRef());
}

/// `[0:2, 1:8:2]`: start, limit and an optional stride per dimension.
ParseResult parseSliceRanges(OpAsmParser &parser, DenseI64ArrayAttr &start,
                             DenseI64ArrayAttr &limit,
                             DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> starts, limits, steps;
  auto parseRange = [&]() -> ParseResult {
    int64_t first, last, step = 1;
    if (parser.parseInteger(first) || parser.parseColon() ||
        parser.parseInteger(last))
      return failure();
    if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(step))
      return failure();
    starts.push_back(first);
    limits.push_back(last);
    steps.push_back(step);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRange))
    return failure();
  MLIRContext *context = parser.getContext();
  start = DenseI64ArrayAttr::get(context, starts);
  limit = DenseI64ArrayAttr::get(context, limits);
  strides = DenseI64ArrayAttr::get(context, steps);
  return success();
}

void printSliceRanges(OpAsmPrinter &printer, Operation *,
                      DenseI64ArrayAttr start, DenseI64ArrayAttr limit,
                      DenseI64ArrayAttr strides) {
  printer << '[';
  for (size_t i = 0; i < start.size(); ++i) {
    printer << (i ? ", " : "") << start[i] << ':' << limit[i];
    if (i < strides.size() && strides[i] != 1)
      printer << ':' << strides[i];
  }
  printer << ']';
}

/// `%a, %b, ` before a keyword: the operands and the comma after them.
/// `type, type, ...`: the operands' types, which the results repeat.
ParseResult parseSameTypes(OpAsmParser &parser,
                           SmallVectorImpl<Type> &operandTypes,
                           SmallVectorImpl<Type> &resultTypes) {
  if (parser.parseTypeList(operandTypes))
    return failure();
  resultTypes.assign(operandTypes.begin(), operandTypes.end());
  return success();
}

void printSameTypes(OpAsmPrinter &printer, Operation *, TypeRange operandTypes,
                    TypeRange) {
  llvm::interleaveComma(operandTypes, printer);
}

ParseResult parseVariadicOperandWithAttribute(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands) {
  while (true) {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult parsed = parser.parseOptionalOperand(operand);
    if (!parsed.has_value())
      return success();
    if (failed(*parsed))
      return failure();
    operands.push_back(operand);
    if (parser.parseComma())
      return failure();
  }
}

void printVariadicOperandWithAttribute(OpAsmPrinter &printer, Operation *,
                                       OperandRange operands) {
  for (Value operand : operands)
    printer << operand << ", ";
}

/// `, precision = [DEFAULT, HIGHEST]`, optional. A following
/// `, algorithm = <...>` (an accumulation hint) is read and dropped.
ParseResult parsePrecisionConfig(OpAsmParser &parser, ArrayAttr &attr) {
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (key == "algorithm") {
      Attribute ignored;
      if (parser.parseAttribute(ignored))
        return failure();
      continue;
    }
    if (key != "precision")
      return parser.emitError(loc) << "expected 'precision' or 'algorithm'";
    SmallVector<Attribute> values;
    auto parseValue = [&]() -> ParseResult {
      StringRef name;
      llvm::SMLoc at = parser.getCurrentLocation();
      if (parser.parseKeyword(&name))
        return failure();
      std::optional<Precision> precision = symbolizePrecision(name);
      if (!precision)
        return parser.emitError(at) << "unknown precision '" << name << "'";
      values.push_back(PrecisionAttr::get(parser.getContext(), *precision));
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       parseValue))
      return failure();
    attr = ArrayAttr::get(parser.getContext(), values);
  }
  return success();
}

void printPrecisionConfig(OpAsmPrinter &printer, Operation *, ArrayAttr attr) {
  if (!attr)
    return;
  printer << ", precision = [";
  llvm::interleaveComma(attr, printer, [&](Attribute value) {
    printer << stringifyPrecision(cast<PrecisionAttr>(value).getValue());
  });
  printer << ']';
}

/// `batching_dims = [0] x [0], contracting_dims = [2] x [1]` and the
/// optional precision config after it.
ParseResult parseDotDimensionNumbers(OpAsmParser &parser,
                                     DotDimensionNumbersAttr &attr,
                                     ArrayAttr &precision) {
  SmallVector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
  auto parsePair = [&](SmallVectorImpl<int64_t> &lhs,
                       SmallVectorImpl<int64_t> &rhs) -> ParseResult {
    return failure(parser.parseEqual() || parseDimList(parser, lhs) ||
                   parser.parseKeyword("x") || parseDimList(parser, rhs));
  };
  if (succeeded(parser.parseOptionalKeyword("batching_dims")) &&
      (parsePair(lhsBatch, rhsBatch) || parser.parseComma()))
    return failure();
  if (parser.parseKeyword("contracting_dims") ||
      parsePair(lhsContract, rhsContract))
    return failure();
  attr = DotDimensionNumbersAttr::get(parser.getContext(), lhsBatch, rhsBatch,
                                      lhsContract, rhsContract);
  return parsePrecisionConfig(parser, precision);
}

void printDotDimensionNumbers(OpAsmPrinter &printer, Operation *op,
                              DotDimensionNumbersAttr attr,
                              ArrayAttr precision) {
  if (!attr.getLhsBatchingDimensions().empty()) {
    printer << "batching_dims = ";
    printDimList(printer, attr.getLhsBatchingDimensions());
    printer << " x ";
    printDimList(printer, attr.getRhsBatchingDimensions());
    printer << ", ";
  }
  printer << "contracting_dims = ";
  printDimList(printer, attr.getLhsContractingDimensions());
  printer << " x ";
  printDimList(printer, attr.getRhsContractingDimensions());
  printPrecisionConfig(printer, op, precision);
}

ParseResult parseCustomCallTarget(OpAsmParser &parser, StringAttr &target) {
  return parser.parseSymbolName(target);
}

void printCustomCallTarget(OpAsmPrinter &printer, Operation *,
                           StringAttr target) {
  printer.printSymbolName(target.getValue());
}
} // namespace

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/StablehloOps.cpp.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/ChloOps.cpp.inc"

//===----------------------------------------------------------------------===//
// stablehlo.constant
//===----------------------------------------------------------------------===//

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  Attribute value;
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseAttribute(value))
    return failure();
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return parser.emitError(loc) << "expected a dense elements value";
  result.addAttribute(getValueAttrName(result.name), elements);
  result.addTypes(elements.getType());
  return success();
}

void ConstantOp::print(OpAsmPrinter &printer) {
  printer.printOptionalAttrDict((*this)->getAttrs(), {"value"});
  printer << ' ';
  printer.printAttribute(getValue());
}

//===----------------------------------------------------------------------===//
// stablehlo.reduce
//===----------------------------------------------------------------------===//

ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> inputs, inits;
  auto parsePair = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand input, init;
    if (parser.parseLParen() || parser.parseOperand(input) ||
        parser.parseKeyword("init") || parser.parseColon() ||
        parser.parseOperand(init) || parser.parseRParen())
      return failure();
    inputs.push_back(input);
    inits.push_back(init);
    return success();
  };
  if (parser.parseCommaSeparatedList(parsePair))
    return failure();
  StringRef combiner;
  llvm::SMLoc combinerLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("applies")) &&
      parser.parseKeyword(&combiner))
    return failure();
  SmallVector<int64_t> dims;
  FunctionType type;
  if (parser.parseKeyword("across") || parser.parseKeyword("dimensions") ||
      parser.parseEqual() || parseDimList(parser, dims) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  size_t n = inputs.size();
  if (type.getNumInputs() != 2 * n || type.getNumResults() != n)
    return parser.emitError(loc)
           << "expected " << 2 * n << " input and " << n << " result types";
  if (parser.resolveOperands(inputs, type.getInputs().take_front(n), loc,
                             result.operands) ||
      parser.resolveOperands(inits, type.getInputs().drop_front(n), loc,
                             result.operands))
    return failure();
  result.addAttribute(getDimensionsAttrName(result.name),
                      parser.getBuilder().getDenseI64ArrayAttr(dims));
  result.addTypes(type.getResults());
  Region *body = result.addRegion();

  if (!combiner.empty()) {
    // The short form: one binary op combines accumulator and element.
    if (n != 1)
      return parser.emitError(combinerLoc)
             << "'applies' takes one input; use the reducer form";
    auto scalar = RankedTensorType::get(
        {}, cast<ShapedType>(type.getInput(1)).getElementType());
    Location at = parser.getEncodedSourceLoc(combinerLoc);
    Block *block = new Block();
    body->push_back(block);
    block->addArguments({scalar, scalar}, {at, at});
    OpBuilder builder(parser.getContext());
    builder.setInsertionPointToEnd(block);
    OperationState state(at, combiner);
    if (!state.name.isRegistered())
      return parser.emitError(combinerLoc)
             << "unknown combiner '" << combiner << "'";
    state.addOperands(block->getArguments());
    state.addTypes(scalar);
    Operation *combine = builder.create(state);
    ReturnOp::create(builder, at, combine->getResults());
    return success();
  }
  // reducer(%a: t, %b: t) (%c: t, %d: t) { ... }: pairs of accumulator and
  // element; the block takes all accumulators first.
  if (parser.parseKeyword("reducer"))
    return failure();
  SmallVector<OpAsmParser::Argument> accumulators, elements;
  for (size_t i = 0; i < n; ++i) {
    OpAsmParser::Argument accumulator, element;
    if (parser.parseLParen() ||
        parser.parseArgument(accumulator, /*allowType=*/true) ||
        parser.parseComma() ||
        parser.parseArgument(element, /*allowType=*/true) ||
        parser.parseRParen())
      return failure();
    accumulators.push_back(accumulator);
    elements.push_back(element);
  }
  llvm::append_range(accumulators, elements);
  return parser.parseRegion(*body, accumulators);
}

void ReduceOp::print(OpAsmPrinter &printer) {
  size_t n = getInputs().size();
  for (size_t i = 0; i < n; ++i)
    printer << (i ? ", (" : "(") << getInputs()[i]
            << " init: " << getInitValues()[i] << ')';
  printer << " across dimensions = ";
  printDimList(printer, getDimensions());
  printer.printOptionalAttrDict((*this)->getAttrs(), {"dimensions"});
  printer << " : ";
  printer.printFunctionalType(*this);
  printer.printNewline();
  printer << " reducer";
  Block &block = getBody().front();
  for (size_t i = 0; i < n; ++i) {
    printer << '(';
    printer.printRegionArgument(block.getArgument(i));
    printer << ", ";
    printer.printRegionArgument(block.getArgument(n + i));
    printer << ')';
  }
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

//===----------------------------------------------------------------------===//
// stablehlo.convolution
//===----------------------------------------------------------------------===//

ParseResult ConvolutionOp::parse(OpAsmParser &parser, OperationState &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  if (parser.parseOperandList(operands, 2, AsmParser::Delimiter::Paren) ||
      parser.parseKeyword("dim_numbers") || parser.parseEqual())
    return failure();
  ConvDimensionNumbersAttr dims = parseConvDimensions(parser);
  if (!dims)
    return failure();
  result.addAttribute(getDimensionNumbersAttrName(result.name), dims);
  Builder &builder = parser.getBuilder();
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("window") || parser.parseEqual() ||
        parser.parseLBrace())
      return failure();
    auto parseEntry = [&]() -> ParseResult {
      StringRef key;
      llvm::SMLoc keyLoc = parser.getCurrentLocation();
      if (parser.parseKeyword(&key) || parser.parseEqual())
        return failure();
      if (key == "pad") {
        SmallVector<int64_t> pads;
        auto parsePadPair = [&]() { return parseDimList(parser, pads); };
        if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                           parsePadPair))
          return failure();
        auto type = RankedTensorType::get(
            {static_cast<int64_t>(pads.size() / 2), 2}, builder.getI64Type());
        if (pads.size() % 2)
          return parser.emitError(keyLoc) << "pad takes [low, high] pairs";
        result.addAttribute(getPaddingAttrName(result.name),
                            DenseIntElementsAttr::get(type, pads));
        return success();
      }
      if (key == "reverse") {
        SmallVector<bool> flags;
        auto parseFlag = [&]() -> ParseResult {
          int64_t value;
          OptionalParseResult integer = parser.parseOptionalInteger(value);
          if (integer.has_value()) {
            flags.push_back(value != 0);
            return *integer;
          }
          StringRef word;
          if (parser.parseKeyword(&word))
            return failure();
          flags.push_back(word == "true");
          return success(word == "true" || word == "false");
        };
        if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                           parseFlag))
          return failure();
        result.addAttribute(getWindowReversalAttrName(result.name),
                            builder.getDenseBoolArrayAttr(flags));
        return success();
      }
      StringAttr name =
          llvm::StringSwitch<StringAttr>(key)
              .Case("stride", getWindowStridesAttrName(result.name))
              .Case("lhs_dilate", getLhsDilationAttrName(result.name))
              .Case("rhs_dilate", getRhsDilationAttrName(result.name))
              .Default(nullptr);
      if (!name)
        return parser.emitError(keyLoc)
               << "unknown convolution window field '" << key << "'";
      SmallVector<int64_t> values;
      if (parseDimList(parser, values))
        return failure();
      result.addAttribute(name, builder.getDenseI64ArrayAttr(values));
      return success();
    };
    if (failed(parser.parseOptionalRBrace()) &&
        (parser.parseCommaSeparatedList(parseEntry) || parser.parseRBrace()))
      return failure();
  }
  FunctionType type;
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  if (type.getNumInputs() != 2 || type.getNumResults() != 1)
    return parser.emitError(loc) << "expected two input and one result type";
  if (parser.resolveOperands(operands, type.getInputs(), loc, result.operands))
    return failure();
  result.addTypes(type.getResults());
  return success();
}

void ConvolutionOp::print(OpAsmPrinter &printer) {
  printer << '(' << getLhs() << ", " << getRhs() << ") dim_numbers = ";
  printConvDimensions(printer, getDimensionNumbers());
  printer << ", window = {";
  llvm::ListSeparator separator;
  auto printList = [&](StringRef key, std::optional<ArrayRef<int64_t>> list) {
    if (list) {
      printer << StringRef(separator) << key << " = ";
      printDimList(printer, *list);
    }
  };
  printList("stride", getWindowStrides());
  if (std::optional<DenseIntElementsAttr> padding = getPadding()) {
    printer << StringRef(separator) << "pad = [";
    SmallVector<int64_t> pads(padding->getValues<int64_t>());
    for (size_t i = 0; i + 1 < pads.size(); i += 2)
      printer << (i ? ", [" : "[") << pads[i] << ", " << pads[i + 1] << ']';
    printer << ']';
  }
  printList("lhs_dilate", getLhsDilation());
  printList("rhs_dilate", getRhsDilation());
  if (std::optional<ArrayRef<bool>> reversal = getWindowReversal()) {
    printer << StringRef(separator) << "reverse = [";
    llvm::interleaveComma(*reversal, printer, [&](bool flag) {
      printer << (flag ? "true" : "false");
    });
    printer << ']';
  }
  printer << '}';
  printer.printOptionalAttrDict(
      (*this)->getAttrs(), {"dimension_numbers", "window_strides", "padding",
                            "lhs_dilation", "rhs_dilation", "window_reversal"});
  printer << " : ";
  printer.printFunctionalType(*this);
}

//===----------------------------------------------------------------------===//
// stablehlo.while
//===----------------------------------------------------------------------===//

ParseResult WhileOp::parse(OpAsmParser &parser, OperationState &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::Argument> iterArgs;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  auto parseIterArg = [&]() -> ParseResult {
    OpAsmParser::Argument arg;
    OpAsmParser::UnresolvedOperand operand;
    if (parser.parseArgument(arg) || parser.parseEqual() ||
        parser.parseOperand(operand))
      return failure();
    iterArgs.push_back(arg);
    operands.push_back(operand);
    return success();
  };
  SmallVector<Type> types;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren,
                                     parseIterArg) ||
      parser.parseColon() || parser.parseTypeList(types) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  if (types.size() != operands.size())
    return parser.emitError(loc) << "expected " << operands.size() << " types";
  for (auto [arg, type] : llvm::zip(iterArgs, types))
    arg.type = type;
  if (parser.resolveOperands(operands, types, loc, result.operands))
    return failure();
  result.addTypes(types);
  Region *cond = result.addRegion();
  Region *body = result.addRegion();
  return failure(
      parser.parseKeyword("cond") || parser.parseRegion(*cond, iterArgs) ||
      parser.parseKeyword("do") || parser.parseRegion(*body, iterArgs));
}

void WhileOp::print(OpAsmPrinter &printer) {
  printer << '(';
  Block &cond = getCond().front();
  for (auto [i, operand] : llvm::enumerate(getOperand()))
    printer << (i ? ", " : "") << cond.getArgument(i) << " = " << operand;
  printer << ") : ";
  llvm::interleaveComma(getOperand().getTypes(), printer);
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  printer.printNewline();
  printer << " cond ";
  printer.printRegion(getCond(), /*printEntryBlockArgs=*/false);
  printer << " do ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}
