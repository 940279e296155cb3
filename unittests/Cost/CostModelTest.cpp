//===- CostModelTest.cpp - Compute, boxing and memory predictions ---------===//

#include "sbp/Cost/CostModel.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "sbp/InitSbp.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

Cluster makeCluster() {
  auto cluster = parseCluster(R"({"name": "test", "mesh": [2, 4],
      "links": [{"bandwidth": 1e10, "latency": 1e-5},
                {"bandwidth": 1e11, "latency": 1e-6}],
      "device": {"peak_flops": {"f32": 1e12}, "loop_flops": {"f32": 1e11},
                 "memory_bandwidth": 1e11, "memory_capacity": 1e9}})",
                              "test.json");
  EXPECT_TRUE(bool(cluster));
  return *cluster;
}

/// A context with the dialects the tests' modules use.
std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerSbpDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// The last op named `name` in `module`.
Operation *findOp(ModuleOp module, StringRef name) {
  Operation *found = nullptr;
  module->walk([&](Operation *op) {
    if (op->getName().getStringRef() == name)
      found = op;
  });
  return found;
}

/// `[a, b]` on the module's mesh.
NdSbpAttr nd(ModuleOp module, SbpEntry a, SbpEntry b) {
  auto mesh = *module.getOps<MeshOp>().begin();
  return NdSbpAttr::get(module.getContext(),
                        FlatSymbolRefAttr::get(mesh.getSymNameAttr()), {a, b});
}

TEST(CostModel, CollectivesFollowAlphaBeta) {
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  // All-reduce of 8 MB over the 4 devices of axis 1: 2(p-1) latencies and
  // 2(p-1)/p of the bytes.
  double t = 8e6;
  double bytes = 2.0 * 3 / 4 * t;
  EXPECT_DOUBLE_EQ(model->getCollectiveTime(BoxingKind::AllReduce, 1, bytes),
                   6 * 1e-6 + bytes / 1e11);
  EXPECT_DOUBLE_EQ(model->getCollectiveTime(BoxingKind::AllGather, 0, 1e6),
                   1e-5 + 1e6 / 1e10);
  // The boxing table, through the plan: P -> B of a [1000, 2000] f32 over
  // axis 1 is that all-reduce.
  SmallVector<SbpEntry> partial = {SbpEntry::broadcast(), SbpEntry::partial()};
  SmallVector<SbpEntry> whole = {SbpEntry::broadcast(), SbpEntry::broadcast()};
  BoxingCost allReduce = model->getBoxingCost(partial, whole, {1000, 2000}, 4);
  EXPECT_DOUBLE_EQ(allReduce.time, 6 * 1e-6 + bytes / 1e11);
  EXPECT_DOUBLE_EQ(allReduce.bytes, bytes);
  // S(0) -> S(1) over axis 0 is an all-to-all of (p-1)/p^2 of the tensor.
  SmallVector<SbpEntry> rows = {SbpEntry::split(0), SbpEntry::broadcast()};
  SmallVector<SbpEntry> cols = {SbpEntry::split(1), SbpEntry::broadcast()};
  EXPECT_DOUBLE_EQ(model->getBoxingCost(rows, cols, {1000, 2000}, 4).time,
                   1e-5 + t / 4 / 1e10);
  EXPECT_EQ(model->getBoxingCost(rows, rows, {1000, 2000}, 4).time, 0);
}

TEST(CostModel, MatmulWorkOnLocalShapes) {
  std::unique_ptr<MLIRContext> context = makeContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    sbp.mesh @m shape = [2, 4]
    func.func @f(%a: tensor<256x512xf32>, %b: tensor<512x1024xf32>,
                 %c: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
      %d = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x1024xf32>)
                         outs(%c : tensor<256x1024xf32>) -> tensor<256x1024xf32>
      return %d : tensor<256x1024xf32>
    })mlir",
                                                             context.get());
  ASSERT_TRUE(module);
  Operation *matmul = findOp(*module, "linalg.matmul");
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  SbpEntry b = SbpEntry::broadcast();
  // Rows over axis 0, the reduction over axis 1: 1/8 of the loops.
  NdSbpSignature signature;
  signature.operands = {nd(*module, SbpEntry::split(0), SbpEntry::split(1)),
                        nd(*module, b, SbpEntry::split(0)),
                        nd(*module, SbpEntry::split(0), SbpEntry::partial())};
  signature.results = {nd(*module, SbpEntry::split(0), SbpEntry::partial())};
  OpWork work = model->getOpWork(matmul, signature);
  EXPECT_TRUE(work.contraction);
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * 256 * 512 * 1024 / 8);
  double bytes = 4.0 * (128 * 128 + 128 * 1024 + 2 * 128 * 1024);
  EXPECT_DOUBLE_EQ(work.bytes, bytes);
  // Compute bound: FLOPs at the peak.
  EXPECT_DOUBLE_EQ(model->getComputeTime(work),
                   std::max(work.flops / 1e12, bytes / 1e11));
  EXPECT_DOUBLE_EQ(model->getLocalBytes(
                       cast<RankedTensorType>(matmul->getResult(0).getType()),
                       signature.results[0]),
                   4.0 * 128 * 1024);
}

TEST(CostModel, SlicesMoveTheirRowsOnly) {
  std::unique_ptr<MLIRContext> context = makeContext();
  // A layer's row of stacked weights, and its gradient written back.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    sbp.mesh @m shape = [2, 4]
    func.func @f(%stack: tensor<16x64x128xf32>, %g: tensor<64x128xf32>,
                 %i: index) -> (tensor<64x128xf32>, tensor<16x64x128xf32>) {
      %w = tensor.extract_slice %stack[%i, 0, 0] [1, 64, 128] [1, 1, 1]
          : tensor<16x64x128xf32> to tensor<64x128xf32>
      %s = tensor.insert_slice %g into %stack[%i, 0, 0] [1, 64, 128] [1, 1, 1]
          : tensor<64x128xf32> into tensor<16x64x128xf32>
      return %w, %s : tensor<64x128xf32>, tensor<16x64x128xf32>
    })mlir",
                                                             context.get());
  ASSERT_TRUE(module);
  Operation *extract = findOp(*module, "tensor.extract_slice");
  Operation *insert = findOp(*module, "tensor.insert_slice");
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  SbpEntry b = SbpEntry::broadcast();
  // Columns over axis 1: a quarter of each row per device, read and
  // written once; the other 15 rows are not touched.
  double row = 4.0 * 64 * 128 / 4;
  NdSbpSignature slice;
  slice.operands = {nd(*module, b, SbpEntry::split(2)), nd(*module, b, b)};
  slice.results = {nd(*module, b, SbpEntry::split(1))};
  EXPECT_DOUBLE_EQ(model->getOpWork(extract, slice).bytes, 2 * row);
  NdSbpSignature update;
  update.operands = {nd(*module, b, SbpEntry::split(1)),
                     nd(*module, b, SbpEntry::split(2)), nd(*module, b, b)};
  update.results = {nd(*module, b, SbpEntry::split(2))};
  EXPECT_DOUBLE_EQ(model->getOpWork(insert, update).bytes, 2 * row);
}

TEST(CostModel, BatchedProductsAreContractionsOnHosts) {
  std::unique_ptr<MLIRContext> context = makeContext();
  // Attention's scores: a product over batch and head loops, which
  // sbp-specialize-contractions makes a batch_matmul and the CPU lowering
  // runs as a loop of tiled matmuls.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    sbp.mesh @m shape = [2, 4]
    func.func @f(%q: tensor<2x8x4x16xf32>, %k: tensor<2x8x4x16xf32>,
                 %s: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
      %r = linalg.generic {indexing_maps = [
          affine_map<(b, a, i, j, d) -> (b, i, a, d)>,
          affine_map<(b, a, i, j, d) -> (b, j, a, d)>,
          affine_map<(b, a, i, j, d) -> (b, a, i, j)>],
          iterator_types = ["parallel", "parallel", "parallel", "parallel",
                            "reduction"]}
          ins(%q, %k : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>)
          outs(%s : tensor<2x4x8x8xf32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %t = arith.addf %acc, %p : f32
        linalg.yield %t : f32
      } -> tensor<2x4x8x8xf32>
      return %r : tensor<2x4x8x8xf32>
    })mlir",
                                                             context.get());
  ASSERT_TRUE(module);
  Cluster host = makeCluster();
  host.hostCores = 8;
  auto model = CostModel::get(host, {2, 4});
  ASSERT_TRUE(bool(model));
  SbpEntry b = SbpEntry::broadcast();
  NdSbpAttr whole = nd(*module, b, b);
  NdSbpSignature signature;
  signature.operands = {whole, whole, whole};
  signature.results = {whole};
  OpWork work = model->getOpWork(findOp(*module, "linalg.generic"), signature);
  EXPECT_TRUE(work.contraction);
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * 2 * 4 * 8 * 8 * 16);
}

TEST(CostModel, ConvolutionsAreContractions) {
  std::unique_ptr<MLIRContext> context = makeContext();
  // A strided 3x3 convolution as the importers write it, which
  // sbp-unfold-convolutions makes a matmul, and a max pooling over the
  // same windows, which stays a loop.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    sbp.mesh @m shape = [2, 4]
    func.func @f(%x: tensor<2x9x9x4xf32>, %w: tensor<3x3x4x8xf32>,
                 %y: tensor<2x4x4x1x8xf32>, %window: tensor<3x3xf32>,
                 %p: tensor<2x4x4x4xf32>)
        -> (tensor<2x4x4x1x8xf32>, tensor<2x4x4x4xf32>) {
      %conv = linalg.generic {indexing_maps = [
          affine_map<(n, g, o, h, v, c, i, j) -> (n, h * 2 + i, v * 2 + j, c)>,
          affine_map<(n, g, o, h, v, c, i, j) -> (i, j, c, o)>,
          affine_map<(n, g, o, h, v, c, i, j) -> (n, h, v, g, o)>],
          iterator_types = ["parallel", "parallel", "parallel", "parallel",
                            "parallel", "reduction", "reduction",
                            "reduction"]}
          ins(%x, %w : tensor<2x9x9x4xf32>, tensor<3x3x4x8xf32>)
          outs(%y : tensor<2x4x4x1x8xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %t = arith.addf %acc, %m : f32
        linalg.yield %t : f32
      } -> tensor<2x4x4x1x8xf32>
      %pool = linalg.generic {indexing_maps = [
          affine_map<(n, h, v, c, i, j) -> (n, h * 2 + i, v * 2 + j, c)>,
          affine_map<(n, h, v, c, i, j) -> (i, j)>,
          affine_map<(n, h, v, c, i, j) -> (n, h, v, c)>],
          iterator_types = ["parallel", "parallel", "parallel", "parallel",
                            "reduction", "reduction"]}
          ins(%x, %window : tensor<2x9x9x4xf32>, tensor<3x3xf32>)
          outs(%p : tensor<2x4x4x4xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %t = arith.maximumf %acc, %a : f32
        linalg.yield %t : f32
      } -> tensor<2x4x4x4xf32>
      return %conv, %pool : tensor<2x4x4x1x8xf32>, tensor<2x4x4x4xf32>
    })mlir",
                                                             context.get());
  ASSERT_TRUE(module);
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  SbpEntry b = SbpEntry::broadcast();
  NdSbpAttr whole = nd(*module, b, b);
  NdSbpSignature signature;
  signature.operands = {whole, whole, whole};
  signature.results = {whole};
  SmallVector<Operation *> generics;
  module->walk([&](linalg::GenericOp op) { generics.push_back(op); });
  ASSERT_EQ(generics.size(), 2u);
  OpWork conv = model->getOpWork(generics[0], signature);
  EXPECT_TRUE(conv.contraction);
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 2 * 8 * 4 * 4 * 4 * 3 * 3);
  EXPECT_FALSE(model->getOpWork(generics[1], signature).contraction);
}

TEST(CostModel, SoftmaxReadsItsInputOnly) {
  std::unique_ptr<MLIRContext> context = makeContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    sbp.mesh @m shape = [2, 4]
    func.func @f(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
      %e = tensor.empty() : tensor<64x128xf32>
      %y = linalg.softmax dimension(1) ins(%x : tensor<64x128xf32>)
                                       outs(%e : tensor<64x128xf32>)
                                       -> tensor<64x128xf32>
      return %y : tensor<64x128xf32>
    })mlir",
                                                             context.get());
  ASSERT_TRUE(module);
  Operation *softmax = findOp(*module, "linalg.softmax");
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  // Rows over both axes: 8 of the 64 rows per device, five operations per
  // element; the input read and the result written, the output operand
  // (`tensor.empty`) not read.
  NdSbpAttr rows = nd(*module, SbpEntry::split(0), SbpEntry::split(0));
  NdSbpSignature signature;
  signature.operands = {rows, rows};
  signature.results = {rows};
  OpWork work = model->getOpWork(softmax, signature);
  EXPECT_FALSE(work.contraction);
  EXPECT_DOUBLE_EQ(work.flops, 5.0 * 8 * 128);
  EXPECT_DOUBLE_EQ(work.bytes, 2 * 4.0 * 8 * 128);
}

TEST(CostModel, ElementwiseTimeOfOneShard) {
  std::unique_ptr<MLIRContext> context = makeContext();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>("sbp.mesh @m shape = [2, 4]", context.get());
  ASSERT_TRUE(module);
  auto model = CostModel::get(makeCluster(), {2, 4});
  ASSERT_TRUE(bool(model));
  auto type = RankedTensorType::get({64, 128}, Float32Type::get(context.get()));
  SbpEntry b = SbpEntry::broadcast();
  // `sum += x` on a quarter of the value: 2048 elements, 8 KiB read twice
  // and written once at 1e11 B/s (the additions, at 1e11 a second, take
  // less).
  EXPECT_DOUBLE_EQ(model->getElementwiseTime(
                       type, nd(*module, b, SbpEntry::split(1)), /*inputs=*/2),
                   3 * 8192 / 1e11);
  // Replicated: all 8192 elements.
  EXPECT_DOUBLE_EQ(model->getElementwiseTime(type, nd(*module, b, b), 2),
                   3 * 32768 / 1e11);
}

} // namespace
