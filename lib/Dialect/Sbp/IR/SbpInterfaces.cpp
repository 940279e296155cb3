//===- SbpInterfaces.cpp - SBP signature interface ------------------------===//

#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::sbp;

#include "sbp/Dialect/Sbp/IR/SbpInterfaces.cpp.inc"

namespace {
/// Combines the entries that the per-axis signatures `choice` give to one
/// value into an nd-SBP: null when every axis leaves it free, failure when
/// only some do (a free axis has no single entry to put in the attribute).
FailureOr<NdSbpAttr>
combine(MeshOp mesh, ArrayRef<const SbpSignature *> choice,
        function_ref<std::optional<SbpEntry>(const SbpSignature &)> entryOf) {
  SmallVector<SbpEntry> entries;
  unsigned numFree = 0;
  for (const SbpSignature *signature : choice) {
    std::optional<SbpEntry> entry = entryOf(*signature);
    if (!entry) {
      ++numFree;
      continue;
    }
    entries.push_back(*entry);
  }
  if (numFree == choice.size())
    return NdSbpAttr();
  if (numFree != 0)
    return failure();
  return NdSbpAttr::get(mesh.getContext(),
                        FlatSymbolRefAttr::get(mesh.getSymNameAttr()), entries);
}

/// Whether `sharding` is a sensible distribution of a value of `type`:
/// every static dimension it splits has at least one element per piece, and
/// its partial entries share one reduction kind (a sum over one axis of
/// maxima over another depends on the order of the reductions).
bool isValidValueSharding(Type type, NdSbpAttr sharding,
                          ArrayRef<int64_t> meshShape) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !sharding)
    return true;
  std::optional<ReductionKind> partialKind;
  for (const SbpEntry &entry : sharding.getEntries()) {
    if (!entry.isPartial())
      continue;
    if (partialKind && *partialKind != entry.getReduction())
      return false;
    partialKind = entry.getReduction();
  }
  for (int64_t dim = 0, rank = shaped.getRank(); dim < rank; ++dim) {
    int64_t size = shaped.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      continue;
    int64_t pieces = 1;
    for (int64_t axis : sharding.getSplitAxes(dim))
      pieces *= meshShape[axis];
    if (size < pieces)
      return false;
  }
  return true;
}

void printEntry(llvm::raw_ostream &os, const std::optional<SbpEntry> &entry) {
  if (entry)
    os << *entry;
  else
    os << "*";
}

void printEntry(llvm::raw_ostream &os, NdSbpAttr sharding) {
  if (!sharding) {
    os << "*";
    return;
  }
  os << "[";
  llvm::interleaveComma(sharding.getEntries(), os);
  os << "]";
}

template <typename Signature>
void printSignatureImpl(llvm::raw_ostream &os, const Signature &signature) {
  os << "(";
  llvm::interleaveComma(signature.operands, os,
                        [&](const auto &e) { printEntry(os, e); });
  os << ") -> (";
  llvm::interleaveComma(signature.results, os,
                        [&](const auto &e) { printEntry(os, e); });
  os << ")";
}
} // namespace

SmallVector<NdSbpSignature>
sbp::detail::getProductNdSbpSignatures(Operation *op, MeshOp mesh) {
  auto iface = cast<SbpSignatureOpInterface>(op);
  // Distinct per-axis signatures give distinct products (they differ in a
  // fixed entry, or are both all free), so deduplicating them here is enough.
  SmallVector<SbpSignature> perAxis;
  for (SbpSignature &signature : iface.getSbpSignatures())
    if (!llvm::is_contained(perAxis, signature))
      perAxis.push_back(std::move(signature));
  SmallVector<NdSbpSignature> result;
  int64_t rank = mesh.getRank();
  if (perAxis.empty())
    return result;
  ArrayRef<int64_t> meshShape = mesh.getShape();

  // Odometer over one per-axis signature per mesh axis.
  SmallVector<size_t> index(rank, 0);
  SmallVector<const SbpSignature *> choice(rank);
  while (true) {
    for (int64_t axis = 0; axis < rank; ++axis)
      choice[axis] = &perAxis[index[axis]];

    NdSbpSignature nd;
    bool representable = true;
    for (unsigned i = 0, e = op->getNumOperands(); i < e && representable;
         ++i) {
      FailureOr<NdSbpAttr> attr = combine(
          mesh, choice, [&](const SbpSignature &s) { return s.operands[i]; });
      representable = succeeded(attr);
      if (representable)
        nd.operands.push_back(*attr);
    }
    for (unsigned i = 0, e = op->getNumResults(); i < e && representable; ++i) {
      FailureOr<NdSbpAttr> attr = combine(
          mesh, choice, [&](const SbpSignature &s) { return s.results[i]; });
      representable = succeeded(attr);
      if (representable)
        nd.results.push_back(*attr);
    }
    if (representable && iface.isValidNdSbpSignature(nd, meshShape))
      result.push_back(std::move(nd));

    int64_t axis = rank - 1;
    while (axis >= 0 && ++index[axis] == perAxis.size())
      index[axis--] = 0;
    if (axis < 0)
      break;
  }
  return result;
}

bool sbp::detail::isValidNdSbpSignature(Operation *op,
                                        const NdSbpSignature &signature,
                                        ArrayRef<int64_t> meshShape) {
  for (auto [value, sharding] :
       llvm::zip_equal(op->getOperands(), signature.operands))
    if (!isValidValueSharding(value.getType(), sharding, meshShape))
      return false;
  for (auto [value, sharding] :
       llvm::zip_equal(op->getResults(), signature.results))
    if (!isValidValueSharding(value.getType(), sharding, meshShape))
      return false;
  return true;
}

void sbp::printSignature(llvm::raw_ostream &os, const SbpSignature &signature) {
  printSignatureImpl(os, signature);
}

void sbp::printSignature(llvm::raw_ostream &os,
                         const NdSbpSignature &signature) {
  printSignatureImpl(os, signature);
}
