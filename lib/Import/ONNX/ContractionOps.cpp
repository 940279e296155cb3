//===- ContractionOps.cpp - ONNX MatMul, Gemm and Einsum ------------------===//
//
// 2-d matmuls become `linalg.matmul` (which the CPU lowering tiles or hands
// to BLAS); every other product is one contraction `linalg.generic`, whose
// batch loops split and whose reduction loops give partial sums.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// A 2-d matmul as `linalg.matmul`.
Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  Value init =
      createFilled(b, loc, {lhsType.getDimSize(0), rhsType.getDimSize(1)},
                   lhsType.getElementType(), 0);
  return linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs}, init)
      .getResult(0);
}

Value transpose2d(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = createEmpty(b, loc, {type.getDimSize(1), type.getDimSize(0)},
                           type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

LogicalResult convertMatMul(NodeImporter &n) {
  RankedTensorType lhsType = n.inputType(0), rhsType = n.inputType(1);
  if (!lhsType || !rhsType || lhsType.getRank() == 0 ||
      rhsType.getRank() == 0 ||
      lhsType.getElementType() != rhsType.getElementType())
    return n.error("needs two tensors of rank >= 1 and one element type");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Value lhs = n.input(0), rhs = n.input(1);
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  if (lhsType.getShape().back() !=
      rhsType.getDimSize(rhsRank == 1 ? 0 : rhsRank - 2))
    return n.error("the contracted dimensions differ");
  if (lhsRank >= 2 && rhsRank == 2) {
    // [..., M, K] x [K, N]: one 2-d matmul over the flattened rows.
    SmallVector<int64_t> outShape(lhsType.getShape().drop_back());
    outShape.push_back(rhsType.getDimSize(1));
    int64_t rows = lhsType.getNumElements() / lhsType.getShape().back();
    Value flat = buildReshape(b, loc, lhs, {rows, lhsType.getShape().back()});
    n.setOutput(0,
                buildReshape(b, loc, buildMatmul(b, loc, flat, rhs), outShape));
    return success();
  }
  // Labels: batch loops first (right-aligned), then m, n, k.
  int64_t batch = std::max<int64_t>(std::max(lhsRank, rhsRank) - 2, 0);
  int64_t m = batch, nLoop = batch + 1, k = batch + 2;
  SmallVector<int64_t> lhsLabels, rhsLabels, outLabels;
  for (int64_t d = 0; d < lhsRank - 2; ++d)
    lhsLabels.push_back(batch - (lhsRank - 2) + d);
  for (int64_t d = 0; d < rhsRank - 2; ++d)
    rhsLabels.push_back(batch - (rhsRank - 2) + d);
  for (int64_t d = 0; d < batch; ++d)
    outLabels.push_back(d);
  if (lhsRank >= 2) {
    lhsLabels.push_back(m);
    outLabels.push_back(m);
  }
  lhsLabels.push_back(k);
  rhsLabels.push_back(k);
  if (rhsRank >= 2) {
    rhsLabels.push_back(nLoop);
    outLabels.push_back(nLoop);
  }
  FailureOr<Value> result =
      buildContraction(b, loc, {lhs, rhs}, {lhsLabels, rhsLabels}, outLabels);
  if (failed(result))
    return n.error("the batch dimensions do not broadcast");
  n.setOutput(0, *result);
  return success();
}

LogicalResult convertGemm(NodeImporter &n) {
  RankedTensorType aType = n.inputType(0), bType = n.inputType(1);
  if (!aType || !bType || aType.getRank() != 2 || bType.getRank() != 2 ||
      !isFloat(aType.getElementType()))
    return n.error("needs two 2-d floating-point tensors");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Value lhs = n.input(0), rhs = n.input(1);
  if (n.intAttr("transA", 0))
    lhs = transpose2d(b, loc, lhs);
  if (n.intAttr("transB", 0))
    rhs = transpose2d(b, loc, rhs);
  if (cast<RankedTensorType>(lhs.getType()).getDimSize(1) !=
      cast<RankedTensorType>(rhs.getType()).getDimSize(0))
    return n.error("the contracted dimensions differ");
  Value product = buildMatmul(b, loc, lhs, rhs);
  float alpha = n.floatAttr("alpha", 1), beta = n.floatAttr("beta", 1);
  Type element = aType.getElementType();
  auto shape = cast<RankedTensorType>(product.getType()).getShape();
  SmallVector<Value> operands = {product};
  if (n.hasInput(2) && beta != 0) {
    if (failed(broadcastShapes({shape, n.inputType(2).getShape()})))
      return n.error("C does not broadcast to the product");
    operands.push_back(n.input(2));
  }
  if (alpha == 1 && operands.size() == 1) {
    n.setOutput(0, product);
    return success();
  }
  n.setOutput(
      0, buildElementwise(
             b, loc, operands, element,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value y = a[0];
               if (alpha != 1)
                 y = createMul(nb, l, y, createScalar(nb, l, element, alpha));
               if (a.size() == 1)
                 return y;
               Value c = a[1];
               if (beta != 1)
                 c = createMul(nb, l, c, createScalar(nb, l, element, beta));
               return createAdd(nb, l, y, c);
             },
             shape));
  return success();
}

LogicalResult convertEinsum(NodeImporter &n) {
  std::string equation = n.stringAttr("equation", "");
  equation.erase(llvm::remove_if(equation, ::isspace), equation.end());
  StringRef text(equation);
  auto [lhsText, rhsText] = text.split("->");
  bool explicitOut = text.contains("->");
  SmallVector<StringRef> terms;
  lhsText.split(terms, ',');
  if (terms.size() != n.getNumInputs())
    return n.error("the equation names " + Twine(terms.size()) +
                   " operands for " + Twine(n.getNumInputs()) + " inputs");
  // Letters are labels 0..51; the dimensions under "..." get labels from 52.
  int64_t ellipsisRank = 0;
  SmallVector<SmallVector<int64_t>> labels;
  SmallVector<Value> inputs;
  llvm::DenseMap<int64_t, int> counts;
  auto letter = [](char c) -> int64_t {
    return c >= 'a' && c <= 'z'   ? c - 'a'
           : c >= 'A' && c <= 'Z' ? 26 + c - 'A'
                                  : -1;
  };
  for (auto [i, term] : llvm::enumerate(terms)) {
    RankedTensorType type = n.inputType(i);
    if (!type)
      return n.error("input " + Twine(i) + " is missing");
    size_t dots = term.find("...");
    int64_t letters = term.size() - (dots == StringRef::npos ? 0 : 3);
    int64_t ellipsis = type.getRank() - letters;
    if (ellipsis < 0 || (dots == StringRef::npos && ellipsis != 0))
      return n.error("term '" + term + "' does not match input rank " +
                     Twine(type.getRank()));
    ellipsisRank = std::max(ellipsisRank, ellipsis);
    SmallVector<int64_t> operand;
    for (size_t c = 0; c < term.size(); ++c) {
      if (c == dots) {
        // Right-aligned, so that "..." dimensions broadcast like numpy's.
        for (int64_t e = 0; e < ellipsis; ++e)
          operand.push_back(-(ellipsis - e));
        c += 2;
        continue;
      }
      int64_t label = letter(term[c]);
      if (label < 0)
        return n.error("bad character in the equation");
      // A label repeated within one operand reads its diagonal.
      if (!llvm::is_contained(operand, label))
        ++counts[label];
      operand.push_back(label);
    }
    labels.push_back(operand);
    inputs.push_back(n.input(i));
  }
  // Ellipsis label -j (j = 1 is the innermost) becomes 52 + ellipsisRank - j.
  for (SmallVector<int64_t> &operand : labels)
    for (int64_t &label : operand)
      if (label < 0)
        label = 52 + ellipsisRank + label;
  SmallVector<int64_t> out;
  if (explicitOut) {
    size_t dots = rhsText.find("...");
    for (size_t c = 0; c < rhsText.size(); ++c) {
      if (c == dots) {
        for (int64_t e = 0; e < ellipsisRank; ++e)
          out.push_back(52 + e);
        c += 2;
        continue;
      }
      int64_t label = letter(rhsText[c]);
      if (label < 0 || !counts.count(label))
        return n.error("the output names an index no input has");
      out.push_back(label);
    }
  } else {
    for (int64_t e = 0; e < ellipsisRank; ++e)
      out.push_back(52 + e);
    for (int64_t label = 0; label < 52; ++label)
      if (counts.lookup(label) == 1)
        out.push_back(label);
  }
  // Compact the labels to loop numbers.
  llvm::DenseMap<int64_t, int64_t> loops;
  auto loopOf = [&](int64_t label) {
    return loops.try_emplace(label, loops.size()).first->second;
  };
  for (int64_t &label : out)
    label = loopOf(label);
  for (SmallVector<int64_t> &operand : labels)
    for (int64_t &label : operand)
      label = loopOf(label);
  FailureOr<Value> result =
      buildContraction(n.builder(), n.getLoc(), inputs, labels, out);
  if (failed(result))
    return n.error("the operands' sizes disagree");
  n.setOutput(0, *result);
  return success();
}

} // namespace

void onnx_import::addContractionConverters(ConverterTable &table) {
  table["MatMul"] = convertMatMul;
  table["Gemm"] = convertGemm;
  table["Einsum"] = convertEinsum;
}
