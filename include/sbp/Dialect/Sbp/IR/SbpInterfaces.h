//===- SbpInterfaces.h - SBP signature interface ----------------*- C++ -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBPINTERFACES_H
#define SBP_DIALECT_SBP_IR_SBPINTERFACES_H

#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include <optional>

namespace mlir {
namespace sbp {

/// One way to run an op on one mesh axis: an entry per operand and per
/// result, `std::nullopt` where the op takes any distribution unchanged.
struct SbpSignature {
  SmallVector<std::optional<SbpEntry>> operands;
  SmallVector<std::optional<SbpEntry>> results;

  bool operator==(const SbpSignature &other) const {
    return operands == other.operands && results == other.results;
  }
};

/// One way to run an op on a whole mesh: an nd-SBP per operand and per
/// result, null where the op takes any distribution unchanged.
struct NdSbpSignature {
  SmallVector<NdSbpAttr> operands;
  SmallVector<NdSbpAttr> results;

  bool operator==(const NdSbpSignature &other) const {
    return operands == other.operands && results == other.results;
  }
};

class SbpSignatureOpInterface;

namespace detail {
/// The products of one per-axis signature per axis of `mesh` that `op`
/// accepts as valid.
SmallVector<NdSbpSignature> getProductNdSbpSignatures(Operation *op,
                                                      MeshOp mesh);
/// Default validity: every static dimension split over `n` devices has at
/// least `n` elements, and no value mixes partial kinds across mesh axes.
bool isValidNdSbpSignature(Operation *op, const NdSbpSignature &signature,
                           ArrayRef<int64_t> meshShape);
} // namespace detail

/// Prints a per-axis signature as `S(0), B -> S(0)`; free entries as `*`.
void printSignature(llvm::raw_ostream &os, const SbpSignature &signature);
/// Prints an nd signature as `[S(0), B], [B, B] -> [S(0), B]`.
void printSignature(llvm::raw_ostream &os, const NdSbpSignature &signature);

} // namespace sbp
} // namespace mlir

#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h.inc"

#endif // SBP_DIALECT_SBP_IR_SBPINTERFACES_H
