//===- SbpAttrs.h - sbp dialect attributes ----------------------*- C++ -*-===//
//
// SBP entries, the nd-SBP attribute and balanced-split shape arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_IR_SBPATTRS_H
#define SBP_DIALECT_SBP_IR_SBPATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"

#include "sbp/Dialect/Sbp/IR/SbpEnums.h.inc"

namespace mlir {
namespace sbp {

/// The distribution of a tensor over one mesh axis: `S(dim)`, `B` or
/// `P(kind)`.
class SbpEntry {
public:
  enum class Kind : uint8_t { Split, Broadcast, Partial };

  SbpEntry() = default;
  static SbpEntry split(int64_t dim) { return SbpEntry(Kind::Split, dim); }
  static SbpEntry broadcast() { return SbpEntry(Kind::Broadcast, 0); }
  static SbpEntry partial(ReductionKind kind = ReductionKind::Sum) {
    return SbpEntry(Kind::Partial, static_cast<int64_t>(kind));
  }

  Kind getKind() const { return kind; }
  bool isSplit() const { return kind == Kind::Split; }
  bool isBroadcast() const { return kind == Kind::Broadcast; }
  bool isPartial() const { return kind == Kind::Partial; }
  /// The split dimension; only for `S`.
  int64_t getDim() const {
    assert(isSplit() && "not a split");
    return value;
  }
  /// The reduction kind; only for `P`.
  ReductionKind getReduction() const {
    assert(isPartial() && "not a partial");
    return static_cast<ReductionKind>(value);
  }

  bool operator==(const SbpEntry &other) const {
    return kind == other.kind && value == other.value;
  }
  bool operator!=(const SbpEntry &other) const { return !(*this == other); }
  friend llvm::hash_code hash_value(const SbpEntry &entry) {
    return llvm::hash_combine(entry.kind, entry.value);
  }

  /// Prints `S(0)`, `B`, `P(sum)`, `P(max)` or `P(min)`.
  void print(llvm::raw_ostream &os) const;
  /// Parses any of the printed forms and `P` (partial sum).
  static FailureOr<SbpEntry> parse(AsmParser &parser);

private:
  SbpEntry(Kind kind, int64_t value) : kind(kind), value(value) {}
  Kind kind = Kind::Broadcast;
  int64_t value = 0;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const SbpEntry &entry) {
  entry.print(os);
  return os;
}

/// Parses a reduction kind keyword: `sum`, `max` or `min`.
FailureOr<ReductionKind> parseReductionKindKeyword(AsmParser &parser);

/// Size of piece `index` of a balanced split of `size` into `parts`: the
/// first `size % parts` pieces are one larger. A dynamic size stays dynamic.
int64_t getBalancedChunkSize(int64_t size, int64_t parts, int64_t index);
/// Offset of piece `index` of a balanced split of `size` into `parts`.
int64_t getBalancedChunkOffset(int64_t size, int64_t parts, int64_t index);

/// Shape held by the device at `coords` of a mesh of shape `meshShape` for
/// a tensor of shape `global` distributed as `entries` (one per mesh axis).
/// Several axes splitting one dimension split it hierarchically, in mesh
/// axis order.
SmallVector<int64_t> getLocalShape(ArrayRef<int64_t> global,
                                   ArrayRef<SbpEntry> entries,
                                   ArrayRef<int64_t> meshShape,
                                   ArrayRef<int64_t> coords);
/// Shape common to all devices: dimensions whose pieces differ in size
/// between devices are dynamic.
SmallVector<int64_t> getLocalShape(ArrayRef<int64_t> global,
                                   ArrayRef<SbpEntry> entries,
                                   ArrayRef<int64_t> meshShape);

} // namespace sbp
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "sbp/Dialect/Sbp/IR/SbpAttrs.h.inc"

#endif // SBP_DIALECT_SBP_IR_SBPATTRS_H
