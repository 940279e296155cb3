//===- SbpAttrs.cpp - sbp dialect attributes ------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sbp;

#include "sbp/Dialect/Sbp/IR/SbpEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// SbpEntry
//===----------------------------------------------------------------------===//

void SbpEntry::print(llvm::raw_ostream &os) const {
  switch (kind) {
  case Kind::Split:
    os << "S(" << value << ")";
    return;
  case Kind::Broadcast:
    os << "B";
    return;
  case Kind::Partial:
    os << "P(" << stringifyReductionKind(getReduction()) << ")";
    return;
  }
}

FailureOr<SbpEntry> SbpEntry::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseOptionalKeyword(&keyword)))
    return parser.emitError(loc, "expected SBP entry: S(<dim>), B, P, "
                                 "P(sum), P(max) or P(min)");
  if (keyword == "B")
    return SbpEntry::broadcast();
  if (keyword == "S") {
    int64_t dim = 0;
    if (parser.parseLParen())
      return failure();
    SMLoc dimLoc = parser.getCurrentLocation();
    if (parser.parseInteger(dim) || parser.parseRParen())
      return failure();
    if (dim < 0)
      return parser.emitError(dimLoc, "split dimension must be non-negative");
    return SbpEntry::split(dim);
  }
  if (keyword == "P") {
    if (failed(parser.parseOptionalLParen()))
      return SbpEntry::partial(ReductionKind::Sum);
    FailureOr<ReductionKind> kind = parseReductionKindKeyword(parser);
    if (failed(kind) || parser.parseRParen())
      return failure();
    return SbpEntry::partial(*kind);
  }
  return parser.emitError(loc, "unknown SBP entry '")
         << keyword << "'; expected S(<dim>), B, P, P(sum), P(max) or P(min)";
}

FailureOr<ReductionKind> sbp::parseReductionKindKeyword(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<ReductionKind> kind = symbolizeReductionKind(name);
  if (!kind)
    return parser.emitError(loc, "unknown reduction kind '")
           << name << "'; expected sum, max or min";
  return *kind;
}

//===----------------------------------------------------------------------===//
// Balanced splits
//===----------------------------------------------------------------------===//

int64_t sbp::getBalancedChunkSize(int64_t size, int64_t parts, int64_t index) {
  assert(parts > 0 && index >= 0 && index < parts && "bad split");
  if (ShapedType::isDynamic(size))
    return size;
  return size / parts + (index < size % parts ? 1 : 0);
}

int64_t sbp::getBalancedChunkOffset(int64_t size, int64_t parts,
                                    int64_t index) {
  assert(parts > 0 && index >= 0 && index < parts && "bad split");
  if (ShapedType::isDynamic(size))
    return size;
  return index * (size / parts) + std::min(index, size % parts);
}

SmallVector<int64_t> sbp::getLocalShape(ArrayRef<int64_t> global,
                                        ArrayRef<SbpEntry> entries,
                                        ArrayRef<int64_t> meshShape,
                                        ArrayRef<int64_t> coords) {
  assert(entries.size() == meshShape.size() &&
         coords.size() == meshShape.size() && "one entry per mesh axis");
  SmallVector<int64_t> local(global);
  // Axes are applied in order so that later axes split the pieces of
  // earlier ones: this is the hierarchical split.
  for (auto [entry, axisSize, coord] : llvm::zip(entries, meshShape, coords)) {
    if (!entry.isSplit())
      continue;
    int64_t dim = entry.getDim();
    assert(dim < static_cast<int64_t>(local.size()) && "split out of range");
    local[dim] = getBalancedChunkSize(local[dim], axisSize, coord);
  }
  return local;
}

SmallVector<int64_t> sbp::getLocalShape(ArrayRef<int64_t> global,
                                        ArrayRef<SbpEntry> entries,
                                        ArrayRef<int64_t> meshShape) {
  // Balanced pieces never grow with the index, so the first device holds
  // the largest piece and the last the smallest; they agree iff all do.
  SmallVector<int64_t> first(meshShape.size(), 0);
  SmallVector<int64_t> last;
  for (int64_t size : meshShape)
    last.push_back(size - 1);
  SmallVector<int64_t> largest =
      getLocalShape(global, entries, meshShape, first);
  SmallVector<int64_t> smallest =
      getLocalShape(global, entries, meshShape, last);
  for (auto [l, s] : llvm::zip(largest, smallest))
    if (l != s)
      l = ShapedType::kDynamic;
  return largest;
}

//===----------------------------------------------------------------------===//
// NdSbpAttr
//===----------------------------------------------------------------------===//

Attribute NdSbpAttr::parse(AsmParser &parser, Type) {
  FlatSymbolRefAttr mesh;
  SmallVector<SbpEntry> entries;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  auto parseEntry = [&]() -> ParseResult {
    FailureOr<SbpEntry> entry = SbpEntry::parse(parser);
    if (failed(entry))
      return failure();
    entries.push_back(*entry);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseEntry,
                                     " in nd-SBP entry list") ||
      parser.parseGreater())
    return {};
  return parser.getChecked<NdSbpAttr>(parser.getContext(), mesh, entries);
}

void NdSbpAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(getEntries(), printer.getStream());
  printer << "]>";
}

LogicalResult NdSbpAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                FlatSymbolRefAttr mesh,
                                ArrayRef<SbpEntry> entries) {
  if (!mesh)
    return emitError() << "nd-SBP needs a mesh";
  if (entries.empty())
    return emitError() << "nd-SBP needs at least one entry";
  std::optional<ReductionKind> partial;
  for (const SbpEntry &entry : entries) {
    if (entry.isSplit() && entry.getDim() < 0)
      return emitError() << "split dimension must be non-negative";
    // Partial values of different kinds on two axes would make the logical
    // value depend on the order of the reductions.
    if (entry.isPartial() && partial && *partial != entry.getReduction())
      return emitError() << "partial entries of one nd-SBP must use one "
                            "reduction kind";
    if (entry.isPartial())
      partial = entry.getReduction();
  }
  return success();
}

bool NdSbpAttr::isReplicated() const {
  return llvm::all_of(getEntries(),
                      [](const SbpEntry &e) { return e.isBroadcast(); });
}

bool NdSbpAttr::hasPartial() const {
  return llvm::any_of(getEntries(),
                      [](const SbpEntry &e) { return e.isPartial(); });
}

SmallVector<int64_t> NdSbpAttr::getSplitAxes(int64_t dim) const {
  SmallVector<int64_t> axes;
  for (auto [axis, entry] : llvm::enumerate(getEntries()))
    if (entry.isSplit() && entry.getDim() == dim)
      axes.push_back(axis);
  return axes;
}

std::string NdSbpAttr::toOneFlowString() const {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << "(";
  llvm::interleaveComma(getEntries(), os, [&](const SbpEntry &entry) {
    if (entry.isPartial() && entry.getReduction() == ReductionKind::Sum)
      os << "P";
    else
      os << entry;
  });
  os << ")";
  return result;
}

SmallVector<int64_t> NdSbpAttr::getLocalShape(ArrayRef<int64_t> global,
                                              ArrayRef<int64_t> meshShape,
                                              ArrayRef<int64_t> coords) const {
  return sbp::getLocalShape(global, getEntries(), meshShape, coords);
}

SmallVector<int64_t>
NdSbpAttr::getLocalShape(ArrayRef<int64_t> global,
                         ArrayRef<int64_t> meshShape) const {
  return sbp::getLocalShape(global, getEntries(), meshShape);
}

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/Sbp/IR/SbpAttrs.cpp.inc"

void SbpDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sbp/Dialect/Sbp/IR/SbpAttrs.cpp.inc"
      >();
}
