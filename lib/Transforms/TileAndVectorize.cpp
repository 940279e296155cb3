//===- TileAndVectorize.cpp - Matmul and transpose schedules --------------===//
//
// A transform-dialect schedule: cache tiles, register tiles of two vectors
// per row, vectorization and hoisting of the accumulators out of the
// reduction loop; transposes in vectorized square blocks. Each schedule is
// written as transform IR with the tiles of the element type and
// interpreted on ops tagged for it.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Parser/Parser.h"
#include "sbp/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"
#include <map>
#include <numeric>

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPTILEANDVECTORIZEPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;

namespace {

/// Tags the ops of one schedule; not `sbp.`-prefixed, which the dialect
/// would verify.
constexpr StringLiteral kScheduleAttr = "sbp_schedule";

/// Bits of one vector register of the host CPU.
unsigned getHostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx") || features.lookup("avx2"))
    return 256;
  return 128;
}

/// Tile sizes of one matmul: cache tiles, then `rows x cols x 1` register
/// tiles. All divide the matmul's sizes, so that no tile needs masks.
struct Tiles {
  int64_t m, n, k, rows, cols;
  /// Whether the matmul's element-wise consumer joins its cache tiles.
  bool fuseConsumer = false;
  /// Whether B is packed into panels of `cols` columns first (then `n` is
  /// counted in panels).
  bool packed = false;
  std::string getTag() const {
    return llvm::formatv("m{0}n{1}k{2}r{3}c{4}{5}{6}", m, n, k, rows, cols,
                         fuseConsumer ? "f" : "", packed ? "p" : "")
        .str();
  }
};

/// Rewrites `matmul` (C += A B) to read B packed in panels of `cols`
/// columns: B [K][N] is viewed as [K][N/cols][cols] and transposed to
/// [N/cols][K][cols], so that a register tile reads consecutive memory
/// along k; C is viewed as [M][N/cols][cols]. Without packing, rows of a
/// B with a power-of-two width fall into the same cache sets. Returns the
/// contraction that replaces the matmul.
linalg::GenericOp packMatmul(linalg::MatmulOp matmul, int64_t cols) {
  OpBuilder builder(matmul);
  Location loc = matmul.getLoc();
  Value lhs = matmul.getDpsInputs()[0], rhs = matmul.getDpsInputs()[1];
  Value init = matmul.getDpsInits()[0];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  Type element = rhsType.getElementType();
  int64_t k = rhsType.getDimSize(0), n = rhsType.getDimSize(1),
          m = initType.getDimSize(0);
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
  Value rhs3 = tensor::ExpandShapeOp::create(
      builder, loc, RankedTensorType::get({k, n / cols, cols}, element), rhs,
      split);
  Value panels = tensor::EmptyOp::create(
      builder, loc, ArrayRef<int64_t>{n / cols, k, cols}, element);
  Value packed = linalg::TransposeOp::create(builder, loc, rhs3, panels,
                                             ArrayRef<int64_t>{1, 0, 2})
                     ->getResult(0);
  auto init3Type = RankedTensorType::get({m, n / cols, cols}, element);
  Value init3 =
      tensor::ExpandShapeOp::create(builder, loc, init3Type, init, split);
  MLIRContext *context = matmul.getContext();
  AffineExpr i, jb, ji, r;
  bindDims(context, i, jb, ji, r);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {i, r}, context),
                                 AffineMap::get(4, 0, {jb, r, ji}, context),
                                 AffineMap::get(4, 0, {i, jb, ji}, context)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto contraction = linalg::GenericOp::create(
      builder, loc, init3Type, ValueRange{lhs, packed}, ValueRange{init3}, maps,
      iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(b, l, args[0], args[1]);
        linalg::YieldOp::create(
            b, l, {arith::AddFOp::create(b, l, args[2], product)});
      });
  Value result = tensor::CollapseShapeOp::create(
      builder, loc, initType, contraction->getResult(0), split);
  matmul->getResult(0).replaceAllUsesWith(result);
  matmul->erase();
  return contraction;
}

/// Rewrites a static `batch_matmul` as a loop over the batch of
/// `linalg.matmul`s on its slices (C[b] = A[b] B[b]), which the matmul
/// schedule then tiles and vectorizes; returns the loop's matmul.
linalg::MatmulOp unrollBatch(linalg::BatchMatmulOp batch) {
  OpBuilder builder(batch);
  Location loc = batch.getLoc();
  Value lhs = batch.getDpsInputs()[0], rhs = batch.getDpsInputs()[1];
  Value init = batch.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper =
      arith::ConstantIndexOp::create(builder, loc, initType.getDimSize(0));
  Value step = arith::ConstantIndexOp::create(builder, loc, 1);
  linalg::MatmulOp matmul;
  auto loop = scf::ForOp::create(
      builder, loc, lower, upper, step, ValueRange{init},
      [&](OpBuilder &b, Location l, Value index, ValueRange carried) {
        // One batch element of `value`, its leading dimension dropped.
        auto slice = [&](Value value) {
          auto type = cast<RankedTensorType>(value.getType());
          SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0)),
              sizes = {b.getIndexAttr(1), b.getIndexAttr(type.getDimSize(1)),
                       b.getIndexAttr(type.getDimSize(2))},
              strides(3, b.getIndexAttr(1));
          offsets[0] = index;
          return tensor::ExtractSliceOp::create(
              b, l,
              RankedTensorType::get(type.getShape().drop_front(),
                                    type.getElementType()),
              value, offsets, sizes, strides);
        };
        tensor::ExtractSliceOp accumulator = slice(carried[0]);
        matmul =
            linalg::MatmulOp::create(b, l, ValueRange{slice(lhs), slice(rhs)},
                                     ValueRange{accumulator.getResult()});
        Value updated = tensor::InsertSliceOp::create(
            b, l, matmul->getResult(0), carried[0],
            accumulator.getMixedOffsets(), accumulator.getMixedSizes(),
            accumulator.getMixedStrides());
        scf::YieldOp::create(b, l, updated);
      });
  batch->getResult(0).replaceAllUsesWith(loop.getResult(0));
  batch->erase();
  return matmul;
}

/// Splits a static `matmul` whose `m` rows are no multiple of 4 (and more
/// than 4) into one on the first `m - m % 4` rows, which whole register
/// tiles of 4 rows cover, and one on the last `m % 4`, each reading its
/// slice of A and C; returns both. A 7 x 7 convolution's 49 rows would
/// otherwise take tiles of one row, each reading all of B.
std::pair<linalg::MatmulOp, linalg::MatmulOp>
splitRows(linalg::MatmulOp matmul) {
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  Value lhs = matmul.getDpsInputs()[0], rhs = matmul.getDpsInputs()[1];
  Value result = matmul.getDpsInits()[0];
  auto type = cast<RankedTensorType>(result.getType());
  int64_t m = type.getDimSize(0), first = m - m % 4;
  auto rows = [&](Value value, int64_t offset, int64_t size) {
    auto valueType = cast<RankedTensorType>(value.getType());
    return tensor::ExtractSliceOp::create(
        b, loc,
        RankedTensorType::get({size, valueType.getDimSize(1)},
                              valueType.getElementType()),
        value,
        ArrayRef<OpFoldResult>{b.getIndexAttr(offset), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(size),
                               b.getIndexAttr(valueType.getDimSize(1))},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  };
  linalg::MatmulOp parts[2];
  for (auto [i, offset, size] :
       {std::tuple{0, int64_t(0), first}, std::tuple{1, first, m % 4}}) {
    tensor::ExtractSliceOp accumulator = rows(result, offset, size);
    parts[i] = linalg::MatmulOp::create(
        b, loc, ValueRange{rows(lhs, offset, size), rhs},
        ValueRange{accumulator.getResult()});
    result = tensor::InsertSliceOp::create(
        b, loc, parts[i]->getResult(0), result, accumulator.getMixedOffsets(),
        accumulator.getMixedSizes(), accumulator.getMixedStrides());
  }
  matmul->getResult(0).replaceAllUsesWith(result);
  matmul->erase();
  return {parts[0], parts[1]};
}

/// Whether `op` (a matmul or batch_matmul) is one the schedules handle: on
/// tensors of static shape, all f32 or all f64, with the default maps.
template <typename OpTy> bool isTileable(OpTy op) {
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  return op.hasPureTensorSemantics() && !op.hasUserDefinedMaps() &&
         (element.isF32() || element.isF64()) &&
         llvm::all_of(op->getOperandTypes(), [&](Type type) {
           auto shaped = cast<ShapedType>(type);
           return shaped.hasStaticShape() && shaped.getElementType() == element;
         });
}

/// Whether `matmul`'s only user is an element-wise linalg op over its
/// result's shape, which can run in the matmul's cache tiles.
bool hasFusableConsumer(linalg::MatmulOp matmul) {
  Value result = matmul->getResult(0);
  if (!result.hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || !consumer.hasPureTensorSemantics() ||
      consumer.getNumResults() != 1 || consumer.getNumLoops() != 2 ||
      consumer.getNumParallelLoops() != 2 ||
      consumer.getResultTypes()[0] != result.getType())
    return false;
  // Memory holds an i1 a byte, as the scalar loops store it, but LLVM
  // loads and stores a vector of i1 as packed bits: a consumer reading a
  // mask (a select's condition, say) would read other elements' bits.
  if (llvm::any_of(consumer->getOperandTypes(), [](Type type) {
        Type element = getElementTypeOrSelf(type);
        return element.isIntOrFloat() && element.getIntOrFloatBitWidth() < 8;
      }))
    return false;
  // A sum of two products (gradients add up) fuses into one of them only.
  if (llvm::count_if(consumer->getOperands(), [](Value operand) {
        return operand.getDefiningOp<linalg::MatmulOp>();
      }) != 1)
    return false;
  return llvm::all_of(consumer.getIndexingMapsArray(),
                      [](AffineMap map) {
                        return map.isProjectedPermutation() &&
                               map.isMinorIdentityWithBroadcasting();
                      }) &&
         consumer.getIndexingMapsArray().back().isIdentity();
}

/// The largest multiple of `step` that divides `size` and is at most
/// `limit`, or `step`: rows of cache tiles that share each block of B
/// (`size` 49 gets 49, not the 1 that its gcd with a power of two gives).
int64_t getRowTile(int64_t size, int64_t limit, int64_t step) {
  for (int64_t tile = limit - limit % step; tile > step; tile -= step)
    if (size % tile == 0)
      return tile;
  return step;
}

/// The tiles for a static `m x n x k` matmul on vectors of `lanes`
/// elements with `registers` vector registers, or nothing when its sizes do
/// not divide into whole register tiles.
std::optional<Tiles> getTiles(int64_t m, int64_t n, int64_t k, int64_t lanes,
                              int64_t registers) {
  // The accumulators (rows x 2 vectors) take half of the registers.
  Tiles tiles{0, 0, 0, registers / 4, 2 * lanes};
  if (n % tiles.cols != 0)
    tiles.cols = lanes;
  // Fewer rows where they do not divide `m` (one to three rows, or the
  // last rows of a split matmul): plain loops would read B down its
  // columns, two orders of magnitude slower than one row of vectors.
  while (m % tiles.rows != 0)
    tiles.rows /= 2;
  if (n % tiles.cols != 0)
    return std::nullopt;
  // Cache tiles measured best for f32 1024^3 on AVX2 (docs/benchmarks.md):
  // with power-of-two leading dimensions, taller k tiles thrash L1 sets.
  tiles.m = getRowTile(m, 64, tiles.rows);
  tiles.n = std::gcd(n, int64_t(512));
  tiles.k = std::gcd(k, int64_t(32));
  if (tiles.n % tiles.cols != 0)
    tiles.n = tiles.cols;
  return tiles;
}

/// A transform module that applies `body` (transform IR on the handle
/// `%op`) to each op tagged `tag`.
std::string wrapSchedule(StringRef tag, StringRef body) {
  return (R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(
      %root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match attributes{sbp_schedule = ")mlir" +
          tag + R"mlir("}
        in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):)mlir" +
          body + R"mlir(
    }
    transform.yield
  }
}
)mlir")
      .str();
}

/// Replaces every `@KEY@` of `values` in `text`.
void substitute(std::string &text,
                ArrayRef<std::pair<StringRef, std::string>> values) {
  for (const auto &[key, value] : values)
    for (size_t at; (at = text.find(key.str())) != std::string::npos;)
      text.replace(at, key.size(), value);
}

/// `sizes` written out, `separator` between them.
std::string joinSizes(ArrayRef<int64_t> sizes, StringRef separator) {
  return llvm::join(
      llvm::map_range(sizes, [](int64_t size) { return std::to_string(size); }),
      separator);
}

/// `, !transform.any_op` once per loop: the handles a tiling returns.
std::string getLoopHandles(size_t loops) {
  std::string handles;
  for (size_t l = 0; l < loops; ++l)
    handles += ", !transform.any_op";
  return handles;
}

/// The schedule for the ops tagged with `tiles`' tag.
std::string getSchedule(const Tiles &tiles) {
  std::string schedule = R"mlir(
@CACHE@
      %reg, %l2:@LOOPS@ = transform.structured.tile_using_for %cache
          tile_sizes [@REGISTER@] : (!transform.any_op)
          -> (!transform.any_op@HANDLES@)
      transform.structured.vectorize %reg vector_sizes [@REGISTER@]
          : !transform.any_op
      transform.apply_licm to %l2#@INNER@ : !transform.any_op
      transform.loop.hoist_loop_invariant_subsets %l2#@INNER@
          : !transform.any_op
@CONSUMER@)mlir";
  // Without a consumer: the matmul's own cache tiles. With one: the
  // consumer is tiled for the cache, the matmul fused into its loops and
  // tiled along k, and the consumer's tile is vectorized row by row.
  std::string cache = R"mlir(
      %cache, %l1:3 = transform.structured.tile_using_for %op
          tile_sizes [@CM@, @CN@, @CK@] : (!transform.any_op)
          -> (!transform.any_op, !transform.any_op, !transform.any_op,
              !transform.any_op))mlir";
  std::string consumer, registerTile = "@ROWS@, @COLS@, 1";
  int64_t loops = 3;
  if (tiles.packed) {
    // Loops (i, panel, j in panel, k) on the packed contraction.
    cache = R"mlir(
      %cache, %l1:3 = transform.structured.tile_using_for %op
          tile_sizes [@CM@, @CN@, 0, @CK@] : (!transform.any_op)
          -> (!transform.any_op, !transform.any_op, !transform.any_op,
              !transform.any_op))mlir";
    registerTile = "@ROWS@, 1, @COLS@, 1";
    loops = 4;
  }
  if (tiles.fuseConsumer) {
    cache = R"mlir(
      %user = transform.get_consumers_of_result %op[0]
          : (!transform.any_op) -> !transform.any_op
      %userTile, %l0:2 = transform.structured.tile_using_for %user
          tile_sizes [@CM@, @CN@] : (!transform.any_op)
          -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %fused, %into = transform.structured.fuse_into_containing_op %op
          into %l0#1 : (!transform.any_op, !transform.any_op)
          -> (!transform.any_op, !transform.any_op)
      %cache, %l1 = transform.structured.tile_using_for %fused
          tile_sizes [0, 0, @CK@] : (!transform.any_op)
          -> (!transform.any_op, !transform.any_op))mlir";
    consumer = R"mlir(
      %row, %l3:2 = transform.structured.tile_using_for %userTile
          tile_sizes [1, @COLS@] : (!transform.any_op)
          -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %row vector_sizes [1, @COLS@]
          : !transform.any_op)mlir";
  }
  substitute(schedule, {{"@CACHE@", cache},
                        {"@CONSUMER@", consumer},
                        {"@REGISTER@", registerTile},
                        {"@LOOPS@", std::to_string(loops)},
                        {"@INNER@", std::to_string(loops - 1)},
                        {"@HANDLES@", getLoopHandles(loops)},
                        {"@ROWS@", std::to_string(tiles.rows)},
                        {"@COLS@", std::to_string(tiles.cols)},
                        {"@CM@", std::to_string(tiles.m)},
                        {"@CN@", std::to_string(tiles.n)},
                        {"@CK@", std::to_string(tiles.k)}});
  return wrapSchedule(tiles.getTag(), schedule);
}

/// The tile sizes of a transpose's loops (its result's dimensions) that
/// make it square blocks of one vector register's elements along the
/// result's innermost dimension and the one reading the input's innermost,
/// one element along the others: a block is read and written as rows. The
/// plain loops read with the stride of a whole row, which for a
/// power-of-two row falls into one cache set (1.3 GB/s for a 512x1024 f32
/// transpose). Nothing where the innermost dimension stays in place (rows
/// copied whole) or no block divides the sizes.
std::optional<SmallVector<int64_t>> getTransposeBlocks(linalg::TransposeOp op,
                                                       unsigned bits) {
  ArrayRef<int64_t> permutation = op.getPermutation();
  int64_t rank = permutation.size();
  auto type = dyn_cast<RankedTensorType>(op.getInit().getType());
  if (!op.hasPureTensorSemantics() || rank < 2 || !type ||
      !type.hasStaticShape() || permutation.back() == rank - 1)
    return std::nullopt;
  // Blocks of one vector register's elements square, which divide both
  // dimensions: no masks.
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 16)
    return std::nullopt;
  int64_t lanes = bits / element.getIntOrFloatBitWidth();
  int64_t reader = llvm::find(permutation, rank - 1) - permutation.begin();
  if (type.getDimSize(rank - 1) % lanes != 0 ||
      type.getDimSize(reader) % lanes != 0)
    return std::nullopt;
  SmallVector<int64_t> sizes(rank, 1);
  sizes.back() = lanes;
  sizes[reader] = lanes;
  return sizes;
}

/// The schedule tiling the transposes tagged `tag` by `sizes` and
/// vectorizing each block.
std::string getTransposeSchedule(StringRef tag, ArrayRef<int64_t> sizes) {
  std::string body = R"mlir(
      %block, %loops:@LOOPS@ = transform.structured.tile_using_for %op
          tile_sizes [@SIZES@] : (!transform.any_op)
          -> (!transform.any_op@HANDLES@)
      transform.structured.vectorize %block : !transform.any_op
      transform.apply_patterns to %loops#@INNER@ {
        transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
        transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      } : !transform.any_op)mlir";
  substitute(body, {{"@LOOPS@", std::to_string(sizes.size())},
                    {"@INNER@", std::to_string(sizes.size() - 1)},
                    {"@SIZES@", joinSizes(sizes, ", ")},
                    {"@HANDLES@", getLoopHandles(sizes.size())}});
  return wrapSchedule(tag, body);
}

struct SbpTileAndVectorizePass
    : public sbp::impl::SbpTileAndVectorizePassBase<SbpTileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned bits = vectorBits ? vectorBits : getHostVectorBits();
    if (bits != 128 && bits != 256 && bits != 512) {
      module.emitError() << "sbp-tile-and-vectorize: vector-bits must be 0, "
                            "128, 256 or 512, not "
                         << bits;
      return signalPassFailure();
    }
    // Tag each op with its tiles; each tag is one schedule (by tag, the
    // transform IR).
    std::map<std::string, std::string> schedules;
    // Packing replaces matmuls: collect them first. A batched product is a
    // loop of them (attention's products, batch x heads of small matrices).
    SmallVector<linalg::MatmulOp> matmuls;
    SmallVector<linalg::BatchMatmulOp> batches;
    module.walk([&](Operation *op) {
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
        matmuls.push_back(matmul);
      if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
        if (isTileable(batch))
          batches.push_back(batch);
    });
    for (linalg::BatchMatmulOp batch : batches)
      matmuls.push_back(unrollBatch(batch));
    // The register and cache tiles of a matmul the schedules handle.
    auto getMatmulTiles = [&](linalg::MatmulOp matmul) -> std::optional<Tiles> {
      if (!isTileable(matmul))
        return std::nullopt;
      auto lhs = cast<RankedTensorType>(matmul.getDpsInputs()[0].getType());
      auto rhs = cast<RankedTensorType>(matmul.getDpsInputs()[1].getType());
      // 16 vector registers below AVX-512, 32 with it.
      return getTiles(lhs.getDimSize(0), rhs.getDimSize(1), lhs.getDimSize(1),
                      bits / lhs.getElementTypeBitWidth(),
                      bits == 512 ? 32 : 16);
    };
    // The last rows of a split matmul read each element of B once: packing
    // B would cost them more than their product.
    llvm::SmallPtrSet<Operation *, 8> unpacked;
    for (linalg::MatmulOp &matmul : matmuls) {
      if (!getMatmulTiles(matmul))
        continue;
      int64_t m = cast<RankedTensorType>(matmul.getDpsInputs()[0].getType())
                      .getDimSize(0);
      if (m % 4 == 0 || m < 4)
        continue;
      auto [first, last] = splitRows(matmul);
      matmul = first;
      unpacked.insert(last);
    }
    for (Operation *last : unpacked)
      matmuls.push_back(cast<linalg::MatmulOp>(last));
    for (linalg::MatmulOp matmul : matmuls) {
      std::optional<Tiles> tiles = getMatmulTiles(matmul);
      if (!tiles)
        continue;
      tiles->fuseConsumer = hasFusableConsumer(matmul);
      Operation *scheduled = matmul;
      if (!tiles->fuseConsumer && !unpacked.contains(matmul)) {
        // Panels of B; cache tiles measured best for f32 1024^3 on AVX2:
        // 32 rows, 32 panels, 256 deep (docs/benchmarks.md).
        auto lhs = cast<RankedTensorType>(matmul.getDpsInputs()[0].getType());
        int64_t m = lhs.getDimSize(0), k = lhs.getDimSize(1),
                n = cast<RankedTensorType>(matmul.getDpsInputs()[1].getType())
                        .getDimSize(1);
        tiles->packed = true;
        tiles->m = getRowTile(m, 32, tiles->rows);
        tiles->n = std::gcd(n / tiles->cols, int64_t(32));
        tiles->k = std::gcd(k, int64_t(256));
        scheduled = packMatmul(matmul, tiles->cols);
      }
      std::string tag = tiles->getTag();
      scheduled->setAttr(kScheduleAttr, StringAttr::get(&getContext(), tag));
      if (!schedules.count(tag))
        schedules.emplace(tag, getSchedule(*tiles));
    }
    // Transposes (the operands sbp-specialize-contractions puts in order
    // for the products) in blocks.
    module.walk([&](linalg::TransposeOp op) {
      std::optional<SmallVector<int64_t>> sizes = getTransposeBlocks(op, bits);
      if (!sizes)
        return;
      std::string tag = "t" + joinSizes(*sizes, "x");
      op->setAttr(kScheduleAttr, StringAttr::get(&getContext(), tag));
      if (!schedules.count(tag))
        schedules.emplace(tag, getTransposeSchedule(tag, *sizes));
    });
    for (const auto &[tag, text] : schedules) {
      OwningOpRef<ModuleOp> schedule =
          parseSourceString<ModuleOp>(text, &getContext());
      if (!schedule)
        return signalPassFailure();
      auto entry = schedule->lookupSymbol<transform::TransformOpInterface>(
          "__transform_main");
      if (failed(transform::applyTransforms(
              module, entry, {}, transform::TransformOptions(),
              /*enforceToplevelTransformOp=*/false)))
        return signalPassFailure();
    }
    module.walk([](Operation *op) { op->removeAttr(kScheduleAttr); });
  }
};

} // namespace
