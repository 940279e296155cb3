//===- LossOps.cpp - ONNX likelihood and cross-entropy losses -------------===//
//
// A model exported with its loss (PyTorch's cross_entropy and nll_loss)
// holds these; they become ops the search and autodiff already know: the
// labels made safe to read (ignored or out-of-range ones at class 0), a
// plain gather of each label's log-probability (whose gradient is the
// one-hot matrix product), an element-wise op applying the class weights
// and the ignore mask, and sum reductions.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// `table[label]` per label, `table` of rank 1 (class weights) or
/// `[N, C, d...]` read at `[n, label, d...]` (log-probabilities): a plain
/// gather, one index cast from the labels.
Value gatherAtLabels(OpBuilder &b, Location loc, Value table, Value labels) {
  auto tableType = cast<RankedTensorType>(table.getType());
  auto labelType = cast<RankedTensorType>(labels.getType());
  int64_t rank = labelType.getRank();
  Value init =
      createEmpty(b, loc, labelType.getShape(), tableType.getElementType());
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             b, loc, init.getType(), labels, init, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value label = arith::IndexCastOp::create(
                   nb, l, nb.getIndexType(), args[0]);
               SmallVector<Value> coords = {label};
               if (tableType.getRank() > 1) {
                 coords.insert(coords.begin(),
                               linalg::IndexOp::create(nb, l, 0));
                 for (int64_t d = 1; d < rank; ++d)
                   coords.push_back(linalg::IndexOp::create(nb, l, d));
               }
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{tensor::ExtractOp::create(nb, l, table, coords)});
             })
      .getResult(0);
}

/// NegativeLogLikelihoodLoss of `logProb` ([N, C, d...]) at `labels`
/// ([N, d...]) with the node's weights (input `weightInput`), reduction and
/// ignore_index.
FailureOr<Value> buildNllLoss(NodeImporter &n, Value logProb, Value labels,
                              unsigned weightInput) {
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  auto type = cast<RankedTensorType>(logProb.getType());
  auto labelType = cast<RankedTensorType>(labels.getType());
  Type element = type.getElementType(),
       labelElement = labelType.getElementType();
  int64_t classes = type.getDimSize(1);
  std::string reduction = n.stringAttr("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return n.error("reduction '" + reduction +
                   "': expected 'mean', 'sum' or 'none'");
  SmallVector<int64_t> expected(type.getShape());
  expected.erase(expected.begin() + 1);
  if (labelType.getShape() != ArrayRef<int64_t>(expected))
    return n.error("the labels' shape must be the input's without its class "
                   "dimension (dimension 1)");
  bool ignores = n.hasAttr("ignore_index");
  int64_t ignoreIndex = n.intAttr("ignore_index", 0);
  bool weighted = n.hasInput(weightInput);
  if (weighted) {
    RankedTensorType weightType = n.inputType(weightInput);
    if (!weightType || weightType.getRank() != 1 ||
        weightType.getDimSize(0) != classes ||
        weightType.getElementType() != element)
      return n.error("the weights must be a [C] tensor of the input's type");
  }

  // Labels outside [0, C) (an ignored -100) are read at class 0 and masked.
  Value safe = buildElementwise(
      b, loc, {labels}, labelElement,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value zero = createScalar(nb, l, labelElement, 0);
        Value last = createScalar(nb, l, labelElement, classes - 1);
        Value clamped = arith::MinSIOp::create(
            nb, l, arith::MaxSIOp::create(nb, l, a[0], zero), last);
        if (!ignores)
          return clamped;
        Value ignored = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::eq, a[0],
            createScalar(nb, l, labelElement, ignoreIndex));
        return arith::SelectOp::create(nb, l, ignored, zero, clamped);
      });
  SmallVector<Value> operands = {gatherAtLabels(b, loc, logProb, safe), labels};
  if (weighted)
    operands.push_back(gatherAtLabels(b, loc, n.input(weightInput), safe));
  // -logProb[label] * weight[label], and the weight (0 where ignored).
  auto elementLoss = [&](bool weightOnly) {
    return buildElementwise(
        b, loc, operands, element,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value weight = weighted ? a[2] : createScalar(nb, l, element, 1);
          Value value =
              weightOnly
                  ? weight
                  : Value(arith::MulFOp::create(
                        nb, l, arith::NegFOp::create(nb, l, a[0]), weight));
          if (!ignores)
            return value;
          Value ignored = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, a[1],
              createScalar(nb, l, labelElement, ignoreIndex));
          return arith::SelectOp::create(
              nb, l, ignored, createScalar(nb, l, element, 0), value);
        });
  };
  Value losses = elementLoss(false);
  if (reduction == "none")
    return losses;
  SmallVector<int64_t> all =
      llvm::to_vector(llvm::seq<int64_t>(0, labelType.getRank()));
  auto sum = [&](Value x) {
    return buildReduction(
        b, loc, x, all, false, 0, [](OpBuilder &nb, Location l, ValueRange a) {
          return Value(arith::AddFOp::create(nb, l, a[0], a[1]));
        });
  };
  Value total = sum(losses);
  if (reduction == "sum")
    return total;
  // The mean over the weights of the labels not ignored.
  Value weights;
  if (weighted || ignores)
    weights = sum(elementLoss(true));
  else
    weights = createFilled(b, loc, {}, element, labelType.getNumElements());
  return buildElementwise(b, loc, {total, weights}, element,
                          [](OpBuilder &nb, Location l, ValueRange a) {
                            return Value(
                                arith::DivFOp::create(nb, l, a[0], a[1]));
                          });
}

/// Checks the scores/log-probabilities and labels of either loss.
LogicalResult checkLossInputs(NodeImporter &n) {
  RankedTensorType type = n.inputType(0), labels = n.inputType(1);
  if (!type || !isFloat(type.getElementType()) || type.getRank() < 2)
    return n.error("needs a floating-point input of rank at least 2 ([N, C, "
                   "...])");
  if (!labels || !labels.getElementType().isInteger() ||
      labels.getElementType().isInteger(1))
    return n.error("needs integer labels");
  return success();
}

LogicalResult convertNllLoss(NodeImporter &n) {
  if (failed(checkLossInputs(n)))
    return failure();
  FailureOr<Value> loss = buildNllLoss(n, n.input(0), n.input(1), 2);
  if (failed(loss))
    return failure();
  n.setOutput(0, *loss);
  return success();
}

LogicalResult convertSoftmaxCrossEntropyLoss(NodeImporter &n) {
  if (failed(checkLossInputs(n)))
    return failure();
  Value logProb = softmax(n.builder(), n.getLoc(), n.input(0), 1, true);
  FailureOr<Value> loss = buildNllLoss(n, logProb, n.input(1), 2);
  if (failed(loss))
    return failure();
  n.setOutput(0, *loss);
  if (n.hasOutput(1))
    n.setOutput(1, logProb);
  return success();
}

} // namespace

void onnx_import::addLossConverters(ConverterTable &table) {
  table["NegativeLogLikelihoodLoss"] = convertNllLoss;
  table["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropyLoss;
}
