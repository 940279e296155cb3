//===- SignatureTest.cpp - nd-SBP signature products ----------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"
#include "sbp/InitSbp.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

class SignatureTest : public ::testing::Test {
protected:
  SignatureTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerSbpDialects(registry);
    return registry;
  }

  /// Parses `body` as the body of a function after a mesh of `meshShape`
  /// and returns the signatures of the op whose name is `opName`.
  SmallVector<std::string> ndSignatures(StringRef meshShape, StringRef args,
                                        StringRef body, StringRef opName) {
    std::string text =
        ("sbp.mesh @m shape = [" + meshShape + "]\n" + "func.func @f(" + args +
         ") {\n" + body + "\n  return\n}\n")
            .str();
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    SmallVector<std::string> printed;
    if (!module)
      return printed;
    auto mesh = cast<MeshOp>(module->getBody()->front());
    module->walk([&](SbpSignatureOpInterface op) {
      if (op->getName().getStringRef() != opName)
        return;
      for (const NdSbpSignature &signature : op.getNdSbpSignatures(mesh)) {
        std::string line;
        llvm::raw_string_ostream os(line);
        printSignature(os, signature);
        printed.push_back(line);
      }
    });
    return printed;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr StringLiteral kMatmul =
    "  %c = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) "
    "outs(%i : tensor<8x32xf32>) -> tensor<8x32xf32>";
constexpr StringLiteral kMatmulArgs =
    "%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %i: tensor<8x32xf32>";

TEST_F(SignatureTest, MatmulOnOneAxis) {
  SmallVector<std::string> signatures =
      ndSignatures("4", kMatmulArgs, kMatmul, "linalg.matmul");
  // B; split m, n, k; partial a or b.
  EXPECT_EQ(signatures.size(), 6u);
  EXPECT_TRUE(llvm::is_contained(signatures,
                                 "([S(1)], [S(0)], [P(sum)]) -> ([P(sum)])"));
}

TEST_F(SignatureTest, MatmulOnTwoAxesIsTheProduct) {
  SmallVector<std::string> signatures =
      ndSignatures("2, 4", kMatmulArgs, kMatmul, "linalg.matmul");
  // Six per axis; the products mixing the partial kinds of different
  // operands (P on a over one axis, P on b over the other) are kept: they
  // are all sums.
  EXPECT_EQ(signatures.size(), 36u);
  // Data parallel over axis 0, Megatron-style column split over axis 1.
  EXPECT_TRUE(llvm::is_contained(
      signatures, "([S(0), B], [B, S(1)], [S(0), S(1)]) -> ([S(0), S(1)])"));
  // m split hierarchically over both axes.
  EXPECT_TRUE(llvm::is_contained(
      signatures, "([S(0), S(0)], [B, B], [S(0), S(0)]) -> ([S(0), S(0)])"));
}

TEST_F(SignatureTest, SplitsSmallerThanTheMeshAreDropped) {
  // m = 8 cannot be split 16 ways.
  SmallVector<std::string> signatures =
      ndSignatures("4, 4", kMatmulArgs, kMatmul, "linalg.matmul");
  EXPECT_FALSE(llvm::is_contained(
      signatures, "([S(0), S(0)], [B, B], [S(0), S(0)]) -> ([S(0), S(0)])"));
  EXPECT_TRUE(llvm::is_contained(
      signatures,
      "([S(1), S(1)], [S(0), S(0)], [P(sum), P(sum)]) -> ([P(sum), P(sum)])"));
}

TEST_F(SignatureTest, ReshapeNeedsEvenSplitsOfMergedDims) {
  constexpr StringLiteral collapse =
      "  %r = tensor.collapse_shape %x [[0, 1]] : tensor<6x4xf32> into "
      "tensor<24xf32>";
  // 6 rows over 3 devices stay aligned with 24 elements over 3 ...
  EXPECT_TRUE(
      llvm::is_contained(ndSignatures("3", "%x: tensor<6x4xf32>", collapse,
                                      "tensor.collapse_shape"),
                         "([S(0)]) -> ([S(0)])"));
  // ... but 6 rows over 4 devices (2, 2, 1, 1) do not match 24 over 4.
  EXPECT_FALSE(
      llvm::is_contained(ndSignatures("4", "%x: tensor<6x4xf32>", collapse,
                                      "tensor.collapse_shape"),
                         "([S(0)]) -> ([S(0)])"));
}

TEST_F(SignatureTest, PartialKindsDoNotMixOnOneValue) {
  SmallVector<std::string> signatures = ndSignatures(
      "2, 2", "", "  %e = tensor.empty() : tensor<4x4xf32>", "tensor.empty");
  EXPECT_TRUE(llvm::is_contained(signatures, "() -> ([P(max), P(max)])"));
  EXPECT_FALSE(llvm::is_contained(signatures, "() -> ([P(sum), P(max)])"));
}

TEST_F(SignatureTest, CallFollowsTheCalleeAnnotations) {
  std::string text = R"mlir(
    sbp.mesh @m shape = [2]
    func.func private @g(tensor<4x4xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>})
        -> (tensor<4x4xf32> {sbp.sharding = #sbp.nd<@m, [P]>})
    func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %y = func.call @g(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      return %y : tensor<4x4xf32>
    })mlir";
  module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  auto mesh = cast<MeshOp>(module->getBody()->front());
  func::CallOp call;
  module->walk([&](func::CallOp op) { call = op; });
  auto signatures = cast<SbpSignatureOpInterface>(call.getOperation())
                        .getNdSbpSignatures(mesh);
  ASSERT_EQ(signatures.size(), 1u);
  std::string line;
  llvm::raw_string_ostream os(line);
  printSignature(os, signatures.front());
  EXPECT_EQ(line, "([S(1)]) -> ([P(sum)])");
}

} // namespace
