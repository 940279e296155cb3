//===- HloSharding.h - XLA sharding strings as nd-SBP -----------*- C++ -*-===//

#ifndef SBP_LIB_IMPORT_STABLEHLO_HLOSHARDING_H
#define SBP_LIB_IMPORT_STABLEHLO_HLOSHARDING_H

#include "sbp/Dialect/Sbp/IR/SbpAttrs.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace mlir {
namespace sbp {
namespace stablehlo_import {

/// The mesh all the shardings of a module are expressed on, and each
/// sharding's per-axis entries.
class HloShardingSet {
public:
  /// Adds an XLA sharding string (`{replicated}`,
  /// `{devices=[2,1,2]<=[4] last_tile_dim_replicate}`, `{devices=[2]0,1}`);
  /// returns its index, or -1 with `error` set.
  int add(llvm::StringRef text, std::string &error);

  /// Chooses the mesh: the coarsest one on which every added sharding is an
  /// nd-SBP. Fails with `error` when the shardings' device orders cannot
  /// share one mesh.
  bool buildMesh(std::string &error);

  /// The mesh shape (empty when every sharding replicates).
  llvm::ArrayRef<int64_t> getMeshShape() const { return meshShape; }

  /// The entries of sharding `index` on the mesh; fails with `error` when
  /// splits of one dimension do not follow mesh-axis order.
  bool getEntries(int index, llvm::SmallVectorImpl<SbpEntry> &entries,
                  std::string &error) const;

private:
  /// A run of device-id digits: `size` values at stride `stride`.
  struct Piece {
    int64_t size, stride;
  };
  struct Sharding {
    bool replicated = false;
    /// Pieces of the device id that each tile dimension enumerates, major
    /// first; the last tile dimension replicates when `replicateLast`.
    llvm::SmallVector<llvm::SmallVector<Piece>> tiles;
    bool replicateLast = false;
  };
  llvm::SmallVector<Sharding> shardings;
  int64_t numDevices = 0;
  /// Strides of the mesh axes, major first, and the mesh shape.
  llvm::SmallVector<int64_t> axisStrides, meshShape;
};

} // namespace stablehlo_import
} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_IMPORT_STABLEHLO_HLOSHARDING_H
