//===- ShardyOps.cpp - Shardy meshes and shardings as JAX prints them -----===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "sbp/Dialect/StableHLO/IR/Stablehlo.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp::sdy;

#include "sbp/Dialect/StableHLO/IR/ShardyOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/StableHLO/IR/ShardyAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "sbp/Dialect/StableHLO/IR/ShardyOps.cpp.inc"

void SdyDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sbp/Dialect/StableHLO/IR/ShardyOps.cpp.inc"
      >();
  registerAttributes();
}

void SdyDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sbp/Dialect/StableHLO/IR/ShardyAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #sdy.mesh<["x"=2, "y"=4]>
//===----------------------------------------------------------------------===//

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    names.push_back(StringAttr::get(parser.getContext(), name));
    sizes.push_back(size);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    parser.emitError(parser.getCurrentLocation(),
                     "meshes with device_ids are not supported");
    return {};
  }
  if (parser.parseGreater())
    return {};
  return get(parser.getContext(), ArrayAttr::get(parser.getContext(), names),
             sizes);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(
      llvm::zip(getNames(), getSizes()), printer, [&](auto axis) {
        printer << std::get<0>(axis) << "=" << std::get<1>(axis);
      });
  printer << "]>";
}

//===----------------------------------------------------------------------===//
// #sdy.sharding<@mesh, [{"x", ?}, {}], replicated={"y"}>
//===----------------------------------------------------------------------===//

namespace {
/// `{"x", "y", ?}`: axis names, an optional open marker, then an optional
/// priority `p0`.
ParseResult parseAxisList(AsmParser &parser, SmallVectorImpl<Attribute> &axes) {
  if (parser.parseLBrace())
    return failure();
  if (failed(parser.parseOptionalRBrace())) {
    auto parseEntry = [&]() -> ParseResult {
      if (succeeded(parser.parseOptionalQuestion()))
        return success();
      std::string name;
      if (parser.parseString(&name))
        return failure();
      if (succeeded(parser.parseOptionalColon()))
        return parser.emitError(parser.getCurrentLocation(),
                                "sub-axes of a mesh axis are not supported");
      axes.push_back(StringAttr::get(parser.getContext(), name));
      return success();
    };
    if (parser.parseCommaSeparatedList(parseEntry) || parser.parseRBrace())
      return failure();
  }
  StringRef priority;
  if (succeeded(parser.parseOptionalKeyword(&priority)) &&
      !priority.starts_with("p"))
    return parser.emitError(parser.getCurrentLocation(),
                            "expected a priority such as p0");
  return success();
}

void printAxisList(AsmPrinter &printer, ArrayAttr axes) {
  printer << '{';
  llvm::interleaveComma(axes, printer, [&](Attribute axis) {
    printer << cast<StringAttr>(axis);
  });
  printer << '}';
}
} // namespace

Attribute TensorShardingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SymbolRefAttr mesh;
  if (parser.parseLess())
    return {};
  OptionalParseResult named = parser.parseOptionalAttribute(mesh);
  if (!named.has_value() || failed(*named)) {
    parser.emitError(parser.getCurrentLocation(),
                     "expected a mesh name (inline meshes are not supported)");
    return {};
  }
  SmallVector<Attribute> dims;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<Attribute> axes;
    if (parseAxisList(parser, axes))
      return failure();
    dims.push_back(ArrayAttr::get(ctx, axes));
    return success();
  };
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  SmallVector<Attribute> replicated;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    SmallVector<Attribute> axes;
    if (parseAxisList(parser, axes))
      return {};
    if (key == "replicated")
      replicated = axes;
    else if (key != "unreduced") {
      parser.emitError(parser.getCurrentLocation(), "unknown field '")
          << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return get(ctx, FlatSymbolRefAttr::get(mesh.getRootReference()),
             ArrayAttr::get(ctx, dims), ArrayAttr::get(ctx, replicated));
}

void TensorShardingAttr::print(AsmPrinter &printer) const {
  printer << '<' << getMesh() << ", [";
  llvm::interleaveComma(getDims(), printer, [&](Attribute dim) {
    printAxisList(printer, cast<ArrayAttr>(dim));
  });
  printer << ']';
  if (!getReplicated().empty()) {
    printer << ", replicated=";
    printAxisList(printer, getReplicated());
  }
  printer << '>';
}
