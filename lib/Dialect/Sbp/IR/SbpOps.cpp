//===- SbpOps.cpp - sbp dialect operations --------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::sbp;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// The operand and nd-SBP attributes of `sbp.annotate` and `sbp.boxing` are
/// printed as users write them, `%x #sbp.nd<...>`. MLIR's parser cannot read
/// that form back: it takes `%x #...` for a result number of `%x`, and a
/// dialect attribute followed by `: type` for a typed attribute. The sbp
/// tools therefore rewrite it before parsing into `%x, <...>` (see
/// `normalizeSbpSyntax`), which other MLIR parsers accept as written; the
/// full `#sbp.nd<...>` is also accepted where no `:` follows it.
static ParseResult
parseValueBeforeHash(OpAsmParser &parser,
                     OpAsmParser::UnresolvedOperand &operand) {
  if (parser.parseOperand(operand))
    return failure();
  (void)parser.parseOptionalComma();
  return success();
}

static void printValueBeforeHash(OpAsmPrinter &printer, Operation *,
                                 Value operand) {
  printer.printOperand(operand);
}

static ParseResult parseNdSbp(OpAsmParser &parser, NdSbpAttr &sharding) {
  return parser.parseCustomAttributeWithFallback(sharding);
}

static void printNdSbp(OpAsmPrinter &printer, Operation *, NdSbpAttr sharding) {
  printer.printAttribute(sharding);
}

static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &kind) {
  FailureOr<ReductionKind> parsed = parseReductionKindKeyword(parser);
  if (failed(parsed))
    return failure();
  kind = ReductionKindAttr::get(parser.getContext(), *parsed);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr kind) {
  printer << stringifyReductionKind(kind.getValue());
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

MeshOp sbp::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                       SymbolTableCollection *symbolTable) {
  if (symbolTable)
    return symbolTable->lookupNearestSymbolFrom<MeshOp>(from, name);
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, name);
}

NdSbpAttr sbp::getReplicated(MeshOp mesh) {
  return NdSbpAttr::get(
      mesh.getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
      SmallVector<SbpEntry>(mesh.getRank(), SbpEntry::broadcast()));
}

LogicalResult sbp::verifyNdSbp(function_ref<InFlightDiagnostic()> emitError,
                               Operation *from, NdSbpAttr sharding, Type type,
                               StringRef what,
                               SymbolTableCollection *symbolTable) {
  MeshOp mesh = lookupMesh(from, sharding.getMesh(), symbolTable);
  if (!mesh)
    return emitError() << "sharding of " << what << " names unknown mesh "
                       << sharding.getMesh();
  if (static_cast<int64_t>(sharding.size()) != mesh.getRank())
    return emitError() << "sharding of " << what << " has " << sharding.size()
                       << " entries but mesh " << sharding.getMesh() << " has "
                       << mesh.getRank() << " axes";
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped) {
    if (sharding.isReplicated())
      return success();
    return emitError() << "sharding of " << what << " of non-tensor type "
                       << type << " must be all B";
  }
  for (auto [axis, entry] : llvm::enumerate(sharding.getEntries()))
    if (entry.isSplit() && entry.getDim() >= shaped.getRank())
      return emitError() << "sharding of " << what << " splits dimension "
                         << entry.getDim() << " (mesh axis " << axis
                         << ") of a rank-" << shaped.getRank() << " tensor";
  return success();
}

namespace {
/// Checks the mesh and mesh axes of a collective and returns the size of
/// the device group the collective works on.
FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                               ArrayRef<int64_t> axes,
                               SymbolTableCollection &symbolTable) {
  MeshOp mesh = lookupMesh(op, meshName, &symbolTable);
  if (!mesh)
    return op->emitOpError() << "names unknown mesh " << meshName;
  llvm::SmallDenseSet<int64_t> seen;
  int64_t groupSize = 1;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= mesh.getRank())
      return op->emitOpError()
             << "mesh axis " << axis << " is out of range for mesh " << meshName
             << " of rank " << mesh.getRank();
    if (!seen.insert(axis).second)
      return op->emitOpError() << "mesh axis " << axis << " appears twice";
    groupSize *= mesh.getShape()[axis];
  }
  return groupSize;
}

LogicalResult verifyReductionKind(Operation *op, ReductionKind kind,
                                  Type elementType) {
  if (isa<ComplexType>(elementType)) {
    if (kind != ReductionKind::Sum)
      return op->emitOpError()
             << "reduction '" << stringifyReductionKind(kind)
             << "' is not defined on complex element type " << elementType;
    return success();
  }
  if (!isa<IntegerType, FloatType>(elementType))
    return op->emitOpError() << "cannot reduce element type " << elementType;
  return success();
}

LogicalResult verifyDim(Operation *op, StringRef name, int64_t dim,
                        int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << name << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// Checks that `result` is `input` with dimension `grown` multiplied and
/// dimension `shrunk` divided by `factor` (either may be absent); only
/// static sizes are compared.
LogicalResult verifyResized(Operation *op, RankedTensorType input,
                            RankedTensorType result, int64_t factor,
                            std::optional<int64_t> grown,
                            std::optional<int64_t> shrunk) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "element types differ: " << input.getElementType() << " vs "
           << result.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError()
           << "ranks differ: " << input.getRank() << " vs " << result.getRank();
  for (int64_t d = 0, e = input.getRank(); d < e; ++d) {
    int64_t in = input.getDimSize(d), out = result.getDimSize(d);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out))
      continue;
    int64_t expected = in;
    if (grown == d && shrunk != d)
      expected = in * factor;
    if (shrunk == d && grown != d) {
      if (in % factor != 0)
        return op->emitOpError()
               << "dimension " << d << " of size " << in
               << " is not divisible by the group size " << factor
               << "; uneven shards have dynamic sizes";
      expected = in / factor;
    }
    if (out != expected)
      return op->emitOpError()
             << "result dimension " << d << " has size " << out << " but "
             << expected << " was expected (operand size " << in
             << ", group size " << factor << ")";
  }
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("needs at least one mesh axis");
  for (auto [axis, size] : llvm::enumerate(shape))
    if (size <= 0)
      return emitOpError() << "mesh axis " << axis << " has size " << size
                           << "; sizes must be positive";
  if (std::optional<ArrayAttr> axes = getAxes()) {
    if (axes->size() != shape.size())
      return emitOpError() << "has " << axes->size() << " axis names for "
                           << shape.size() << " axes";
    llvm::StringSet<> seen;
    for (Attribute name : *axes)
      if (!seen.insert(cast<StringAttr>(name).getValue()).second)
        return emitOpError() << "axis name " << name << " appears twice";
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  int64_t count = 1;
  for (int64_t size : getShape())
    count *= size;
  return count;
}

SmallVector<int64_t> MeshOp::getCoords(int64_t device) {
  ArrayRef<int64_t> shape = getShape();
  SmallVector<int64_t> coords(shape.size());
  for (int64_t axis = shape.size() - 1; axis >= 0; --axis) {
    coords[axis] = device % shape[axis];
    device /= shape[axis];
  }
  return coords;
}

//===----------------------------------------------------------------------===//
// AxisIndexOp
//===----------------------------------------------------------------------===//

LogicalResult
AxisIndexOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  MeshOp mesh = lookupMesh(*this, getMeshAttr(), &symbolTable);
  if (!mesh)
    return emitOpError() << "names unknown mesh " << getMeshAttr();
  // I64Attr getters return the value as unsigned.
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= mesh.getRank())
    return emitOpError() << "mesh axis " << axis << " is out of range for mesh "
                         << getMeshAttr() << " of rank " << mesh.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// AnnotateOp / BoxingOp
//===----------------------------------------------------------------------===//

LogicalResult AnnotateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyNdSbp([&] { return emitOpError(); }, *this, getSharding(),
                     getType(), "the annotated value", &symbolTable);
}

LogicalResult BoxingOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (getSrc().getMesh() != getDst().getMesh())
    return emitOpError() << "converts between different meshes "
                         << getSrc().getMesh() << " and " << getDst().getMesh();
  if (failed(verifyNdSbp([&] { return emitOpError(); }, *this, getSrc(),
                         getType(), "the source", &symbolTable)))
    return failure();
  return verifyNdSbp([&] { return emitOpError(); }, *this, getDst(), getType(),
                     "the destination", &symbolTable);
}

OpFoldResult BoxingOp::fold(FoldAdaptor) {
  if (getSrc() == getDst())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable)))
    return failure();
  return verifyReductionKind(*this, getReduction(),
                             getInput().getType().getElementType());
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable);
  if (failed(group))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  if (failed(verifyDim(*this, "gather_dim", getGatherDim(), input.getRank())))
    return failure();
  return verifyResized(*this, input, result, *group, getGatherDim(),
                       std::nullopt);
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable);
  if (failed(group))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  if (failed(
          verifyReductionKind(*this, getReduction(), input.getElementType())) ||
      failed(verifyDim(*this, "scatter_dim", getScatterDim(), input.getRank())))
    return failure();
  return verifyResized(*this, input, result, *group, std::nullopt,
                       getScatterDim());
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable);
  if (failed(group))
    return failure();
  auto input = getInput().getType(), result = getResult().getType();
  if (failed(verifyDim(*this, "split_dim", getSplitDim(), input.getRank())) ||
      failed(verifyDim(*this, "concat_dim", getConcatDim(), input.getRank())))
    return failure();
  return verifyResized(*this, input, result, *group, getConcatDim(),
                       getSplitDim());
}

/// Checks that a group rank attribute names a member of the group.
static LogicalResult verifyGroupRank(Operation *op, StringRef name,
                                     int64_t rank, FailureOr<int64_t> group) {
  if (failed(group))
    return failure();
  if (rank < 0 || rank >= *group)
    return op->emitOpError()
           << name << " " << rank << " is not a rank of a group of " << *group
           << " devices";
  return success();
}

LogicalResult
BroadcastOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupRank(
      *this, "root", getRoot(),
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable));
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupRank(
      *this, "peer", getPeer(),
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable));
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupRank(
      *this, "peer", getPeer(),
      verifyGroup(*this, getMeshAttr(), getMeshAxes(), symbolTable));
}

#define GET_OP_CLASSES
#include "sbp/Dialect/Sbp/IR/SbpOps.cpp.inc"
