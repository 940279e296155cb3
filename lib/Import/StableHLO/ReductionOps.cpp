//===- ReductionOps.cpp - StableHLO reductions, windows, contractions -----===//
//
// Reductions and windows are generics whose payload is the op's combiner
// region in scalar form, so that any combiner (argmax's pair of value and
// index as well) converts; a combiner that is one add, mul, max or min is
// what sbp recognizes as P(sum/max/min). Plain matrix products become
// linalg.matmul / batch_matmul, so that the BLAS and tiling paths apply;
// other contractions and convolutions are generics.
//
//===----------------------------------------------------------------------===//

#include "StablehloToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
using Result = FailureOr<SmallVector<Value>>;

/// Tensors of `shapes` filled with the scalar values of `inits` (0-d).
SmallVector<Value> buildInits(OpBuilder &b, Location loc, ValueRange inits,
                              ArrayRef<SmallVector<int64_t>> shapes) {
  SmallVector<Value> filled;
  for (auto [init, shape] : llvm::zip(inits, shapes)) {
    Value scalar = extractScalar(b, loc, init);
    filled.push_back(
        linalg::FillOp::create(b, loc, scalar,
                               createEmpty(b, loc, shape, scalar.getType()))
            .getResult(0));
  }
  return filled;
}

/// A generic over loops `iterators` reading `inputs` through `inputMaps`
/// into `inits` (through `outMap`), combined by `body`: its block takes the
/// accumulators first, then the elements, one per init from the front of
/// `inputs` (inputs after those only give loop sizes).
FailureOr<SmallVector<Value>>
buildCombining(OpBuilder &b, Location loc, ValueRange inputs,
               ArrayRef<AffineMap> inputMaps, ValueRange inits,
               AffineMap outMap, ArrayRef<utils::IteratorType> iterators,
               Region &body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.append(inits.size(), outMap);
  bool failed = false;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(inits), inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        size_t n = inits.size();
        // Block: (accumulators..., elements...); generic: (inputs..., inits).
        SmallVector<Value> arguments(args.drop_front(inputs.size()));
        llvm::append_range(arguments, args.take_front(n));
        FailureOr<SmallVector<Value>> results =
            buildScalarRegion(nb, body, arguments);
        if (mlir::failed(results)) {
          failed = true;
          linalg::YieldOp::create(nb, l, args.drop_front(inputs.size()));
          return;
        }
        linalg::YieldOp::create(nb, l, *results);
      });
  if (failed) {
    generic->erase();
    return failure();
  }
  return SmallVector<Value>(generic.getResults());
}

Result convertReduce(Operation *op, OpBuilder &b) {
  auto reduce = cast<shlo::ReduceOp>(op);
  RankedTensorType in = getStaticType(op, reduce.getInputs()[0]);
  if (!in)
    return failure();
  ArrayRef<int64_t> dims = reduce.getDimensions();
  int64_t rank = in.getRank();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(dims, d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    outShape.push_back(in.getDimSize(d));
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  for (Value input : reduce.getInputs())
    if (cast<ShapedType>(input.getType()).getShape() != in.getShape()) {
      op->emitError("all inputs of a reduce must have one shape");
      return failure();
    }
  Location loc = op->getLoc();
  SmallVector<SmallVector<int64_t>> shapes(reduce.getInitValues().size(),
                                           outShape);
  SmallVector<Value> inits = buildInits(b, loc, reduce.getInitValues(), shapes);
  SmallVector<AffineMap> inputMaps(reduce.getInputs().size(),
                                   b.getMultiDimIdentityMap(rank));
  return buildCombining(b, loc, reduce.getInputs(), inputMaps, inits,
                        AffineMap::get(rank, 0, outExprs, b.getContext()),
                        iterators, reduce.getBody());
}

Result convertReduceWindow(Operation *op, OpBuilder &b) {
  auto window = cast<shlo::ReduceWindowOp>(op);
  Location loc = op->getLoc();
  RankedTensorType in = getStaticType(op, window.getInputs()[0]);
  RankedTensorType out = getStaticType(op, op->getResult(0));
  if (!in || !out)
    return failure();
  int64_t rank = in.getRank();
  ArrayRef<int64_t> sizes = window.getWindowDimensions();
  SmallVector<int64_t> strides = getOrOnes(window.getWindowStrides(), rank),
                       dilations = getOrOnes(window.getWindowDilations(), rank),
                       baseDilations =
                           getOrOnes(window.getBaseDilations(), rank);
  SmallVector<int64_t> low, high;
  if (!getPadding(window.getPadding(), rank, low, high)) {
    op->emitError() << "expected " << rank << " [low, high] paddings";
    return failure();
  }
  if (static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(dilations.size()) != rank ||
      llvm::any_of(baseDilations, [](int64_t d) { return d != 1; }) ||
      llvm::any_of(low, [](int64_t p) { return p < 0; }) ||
      llvm::any_of(high, [](int64_t p) { return p < 0; })) {
    op->emitError("reduce_window needs one window size, stride and dilation "
                  "per dimension, no base dilation and no negative padding");
    return failure();
  }
  // Loops: the output's, then the window's.
  SmallVector<AffineExpr> inExprs, outExprs, windowExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    inExprs.push_back(b.getAffineDimExpr(d) * strides[d] +
                      b.getAffineDimExpr(rank + d) * dilations[d]);
    outExprs.push_back(b.getAffineDimExpr(d));
    windowExprs.push_back(b.getAffineDimExpr(rank + d));
    iterators.push_back(utils::IteratorType::parallel);
  }
  iterators.append(rank, utils::IteratorType::reduction);
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> inputs;
  for (auto [input, init] :
       llvm::zip(window.getInputs(), window.getInitValues()))
    inputs.push_back(
        buildPad(b, loc, input, extractScalar(b, loc, init), low, high));
  SmallVector<AffineMap> inputMaps(inputs.size(),
                                   AffineMap::get(2 * rank, 0, inExprs, ctx));
  // A shape-only operand gives the window loops their sizes.
  inputs.push_back(createEmpty(b, loc, sizes, b.getI1Type()));
  inputMaps.push_back(AffineMap::get(2 * rank, 0, windowExprs, ctx));
  SmallVector<SmallVector<int64_t>> shapes(
      window.getInitValues().size(), SmallVector<int64_t>(out.getShape()));
  SmallVector<Value> inits = buildInits(b, loc, window.getInitValues(), shapes);
  // The combiner sees the data inputs only: the shape-only operand comes
  // last, after them.
  return buildCombining(b, loc, inputs, inputMaps, inits,
                        AffineMap::get(2 * rank, 0, outExprs, ctx), iterators,
                        window.getBody());
}

/// Builds lhs x rhs as linalg.matmul or batch_matmul when the operands are
/// laid out as those expect (possibly after collapsing the lhs's leading
/// free dimensions); null otherwise.
Value buildNamedProduct(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        shlo::DotDimensionNumbersAttr dims,
                        RankedTensorType out) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t batch = dims.getLhsBatchingDimensions().size();
  if (dims.getLhsContractingDimensions().size() != 1 ||
      lhsType.getElementType() != out.getElementType() ||
      rhsType.getElementType() != out.getElementType())
    return nullptr;
  bool leadingBatch = llvm::equal(dims.getLhsBatchingDimensions(),
                                  llvm::seq<int64_t>(0, batch)) &&
                      llvm::equal(dims.getRhsBatchingDimensions(),
                                  llvm::seq<int64_t>(0, batch));
  if (!leadingBatch || batch > 1 || rhsType.getRank() != batch + 2 ||
      dims.getLhsContractingDimensions()[0] != lhsType.getRank() - 1 ||
      dims.getRhsContractingDimensions()[0] != batch)
    return nullptr;
  Type element = out.getElementType();
  if (batch == 1) {
    if (lhsType.getRank() != 3)
      return nullptr;
    Value init = createFilled(b, loc, out.getShape(), element, 0);
    return linalg::BatchMatmulOp::create(b, loc, ValueRange{lhs, rhs}, init)
        .getResult(0);
  }
  // [..., K] x [K, N]: the lhs's free dimensions collapse into one.
  int64_t k = lhsType.getDimSize(lhsType.getRank() - 1);
  int64_t m = lhsType.getNumElements() / std::max<int64_t>(k, 1);
  int64_t n = rhsType.getDimSize(1);
  Value flat = buildReshape(b, loc, lhs, {m, k});
  Value init = createFilled(b, loc, {m, n}, element, 0);
  Value product = linalg::MatmulOp::create(b, loc, ValueRange{flat, rhs}, init)
                      .getResult(0);
  return buildReshape(b, loc, product, out.getShape());
}

Result buildDotGeneral(Operation *op, OpBuilder &b, Value lhs, Value rhs,
                       shlo::DotDimensionNumbersAttr dims) {
  RankedTensorType lhsType = getStaticType(op, lhs);
  RankedTensorType rhsType = getStaticType(op, rhs);
  RankedTensorType out = getStaticType(op, op->getResult(0));
  if (!lhsType || !rhsType || !out)
    return failure();
  Location loc = op->getLoc();
  ArrayRef<int64_t> lb = dims.getLhsBatchingDimensions(),
                    rb = dims.getRhsBatchingDimensions(),
                    lc = dims.getLhsContractingDimensions(),
                    rc = dims.getRhsContractingDimensions();
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    op->emitError("lhs and rhs need as many batching and contracting "
                  "dimensions");
    return failure();
  }
  if (lhsType.getElementType() != out.getElementType() ||
      rhsType.getElementType() != out.getElementType()) {
    op->emitError() << "mixed element types are not supported: "
                    << lhsType.getElementType() << " x "
                    << rhsType.getElementType() << " -> "
                    << out.getElementType();
    return failure();
  }
  if (Value product = buildNamedProduct(b, loc, lhs, rhs, dims, out))
    return SmallVector<Value>{product};
  // Loop labels: batch, lhs free, rhs free, then contracting.
  SmallVector<int64_t> lhsLabels(lhsType.getRank(), -1),
      rhsLabels(rhsType.getRank(), -1), outLabels;
  int64_t next = 0;
  for (auto [l, r] : llvm::zip(lb, rb)) {
    lhsLabels[l] = rhsLabels[r] = next;
    outLabels.push_back(next++);
  }
  auto labelFree = [&](SmallVector<int64_t> &labels, ArrayRef<int64_t> skip) {
    for (auto [dim, label] : llvm::enumerate(labels))
      if (label == -1 && !llvm::is_contained(skip, dim)) {
        label = next;
        outLabels.push_back(next++);
      }
  };
  labelFree(lhsLabels, lc);
  labelFree(rhsLabels, rc);
  for (auto [l, r] : llvm::zip(lc, rc))
    lhsLabels[l] = rhsLabels[r] = next++;
  if (llvm::is_contained(lhsLabels, -1) || llvm::is_contained(rhsLabels, -1)) {
    op->emitError("batching and contracting dimensions must be distinct and "
                  "in range");
    return failure();
  }
  FailureOr<Value> product =
      buildContraction(b, loc, {lhs, rhs}, {lhsLabels, rhsLabels}, outLabels);
  if (failed(product) ||
      cast<RankedTensorType>(product->getType()).getShape() != out.getShape()) {
    op->emitError() << "operand sizes do not agree with the result " << out;
    return failure();
  }
  return SmallVector<Value>{*product};
}

Result convertDotGeneral(Operation *op, OpBuilder &b) {
  auto dot = cast<shlo::DotGeneralOp>(op);
  return buildDotGeneral(op, b, dot.getLhs(), dot.getRhs(),
                         dot.getDotDimensionNumbers());
}

Result convertDot(Operation *op, OpBuilder &b) {
  auto dot = cast<shlo::DotOp>(op);
  int64_t lhsRank = cast<ShapedType>(dot.getLhs().getType()).getRank();
  auto dims = shlo::DotDimensionNumbersAttr::get(b.getContext(), {}, {},
                                                 {lhsRank - 1}, {0});
  return buildDotGeneral(op, b, dot.getLhs(), dot.getRhs(), dims);
}

Result convertConvolution(Operation *op, OpBuilder &b) {
  auto conv = cast<shlo::ConvolutionOp>(op);
  RankedTensorType in = getStaticType(op, conv.getLhs());
  RankedTensorType kernel = getStaticType(op, conv.getRhs());
  RankedTensorType out = getStaticType(op, conv.getResult());
  if (!in || !kernel || !out)
    return failure();
  shlo::ConvDimensionNumbersAttr dims = conv.getDimensionNumbers();
  int64_t spatial = dims.getInputSpatialDimensions().size();
  int64_t groups = conv.getFeatureGroupCount();
  SmallVector<int64_t> strides = getOrOnes(conv.getWindowStrides(), spatial),
                       lhsDilation = getOrOnes(conv.getLhsDilation(), spatial),
                       rhsDilation = getOrOnes(conv.getRhsDilation(), spatial);
  SmallVector<int64_t> pads(2 * spatial, 0);
  if (std::optional<DenseIntElementsAttr> padding = conv.getPadding())
    pads.assign(padding->getValues<int64_t>().begin(),
                padding->getValues<int64_t>().end());
  SmallVector<bool> reversed(spatial, false);
  if (std::optional<ArrayRef<bool>> reversal = conv.getWindowReversal())
    reversed.assign(reversal->begin(), reversal->end());
  auto isPositive = [](int64_t v) { return v >= 1; };
  auto hasSpatialSize = [&](ArrayRef<int64_t> values) {
    return static_cast<int64_t>(values.size()) == spatial &&
           llvm::all_of(values, isPositive);
  };
  if (conv.getBatchGroupCount() != 1 || groups < 1) {
    op->emitError("convolutions with batch groups are not supported");
    return failure();
  }
  if (static_cast<int64_t>(pads.size()) != 2 * spatial ||
      static_cast<int64_t>(reversed.size()) != spatial ||
      !hasSpatialSize(strides) || !hasSpatialSize(lhsDilation) ||
      !hasSpatialSize(rhsDilation)) {
    op->emitError() << "expected " << spatial
                    << " positive strides and dilations, window reversals "
                       "and pairs of padding sizes";
    return failure();
  }
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  // The input's spatial dimensions with the padding's positive part and
  // `dilation - 1` zeros between neighbours (input dilation: the transposed
  // convolution of a strided one); negative padding then crops.
  int64_t rank = in.getRank();
  SmallVector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  SmallVector<int64_t> cropLow(rank, 0), cropHigh(rank, 0);
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t dim = dims.getInputSpatialDimensions()[s];
    low[dim] = std::max<int64_t>(pads[2 * s], 0);
    high[dim] = std::max<int64_t>(pads[2 * s + 1], 0);
    cropLow[dim] = std::max<int64_t>(-pads[2 * s], 0);
    cropHigh[dim] = std::max<int64_t>(-pads[2 * s + 1], 0);
    interior[dim] = lhsDilation[s] - 1;
  }
  Value zero = createScalar(b, loc, in.getElementType(), 0);
  Value input = buildPad(b, loc, conv.getLhs(), zero, low, high, interior);
  if (llvm::any_of(llvm::concat<int64_t>(cropLow, cropHigh),
                   [](int64_t c) { return c > 0; })) {
    auto padded = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(padded.getDimSize(d) - cropLow[d] - cropHigh[d]);
    if (llvm::any_of(sizes, [](int64_t size) { return size < 0; })) {
      op->emitError("the negative padding crops more than the input");
      return failure();
    }
    input = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, in.getElementType()), input,
        ValueRange(), ValueRange(), ValueRange(), cropLow, sizes,
        SmallVector<int64_t>(rank, 1));
  }
  // Loops: batch, group, output feature within the group, output spatial,
  // then input feature within the group and kernel spatial (reductions).
  int64_t outFeatures =
      kernel.getDimSize(dims.getKernelOutputFeatureDimension());
  int64_t inPerGroup = kernel.getDimSize(dims.getKernelInputFeatureDimension());
  if (outFeatures % groups ||
      in.getDimSize(dims.getInputFeatureDimension()) != inPerGroup * groups) {
    op->emitError("feature sizes do not match the feature group count");
    return failure();
  }
  // A reversed window reads the kernel back to front.
  SmallVector<int64_t> reversedDims;
  for (int64_t s = 0; s < spatial; ++s)
    if (reversed[s])
      reversedDims.push_back(dims.getKernelSpatialDimensions()[s]);
  Value weights = conv.getRhs();
  if (!reversedDims.empty())
    weights = buildReverse(b, loc, weights, reversedDims);
  // Every window the output asks for lies in the padded input.
  auto padded = cast<RankedTensorType>(input.getType());
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t window =
        (kernel.getDimSize(dims.getKernelSpatialDimensions()[s]) - 1) *
            rhsDilation[s] +
        1;
    int64_t size = padded.getDimSize(dims.getInputSpatialDimensions()[s]);
    int64_t expected = size < window ? 0 : (size - window) / strides[s] + 1;
    if (out.getDimSize(dims.getOutputSpatialDimensions()[s]) != expected) {
      op->emitError() << "output spatial dimension " << s << " has size "
                      << out.getDimSize(dims.getOutputSpatialDimensions()[s])
                      << "; the padded input and window give " << expected;
      return failure();
    }
  }
  int64_t outPerGroup = outFeatures / groups;
  unsigned nBatch = 0, nGroup = 1, nOutF = 2, nOutS = 3, nInF = 3 + spatial,
           nK = 4 + spatial, numLoops = 4 + 2 * spatial;
  auto d = [&](unsigned loop) { return b.getAffineDimExpr(loop); };
  SmallVector<AffineExpr> inExprs(in.getRank()), kExprs(kernel.getRank()),
      outExprs(out.getRank());
  inExprs[dims.getInputBatchDimension()] = d(nBatch);
  // One group reads the features directly: a feature loop inside a
  // compound index could not be split (tensor parallelism over channels),
  // and its gradient would be scattered.
  inExprs[dims.getInputFeatureDimension()] =
      groups == 1 ? d(nInF) : d(nGroup) * inPerGroup + d(nInF);
  kExprs[dims.getKernelInputFeatureDimension()] = d(nInF);
  kExprs[dims.getKernelOutputFeatureDimension()] =
      groups == 1 ? d(nOutF) : d(nGroup) * outPerGroup + d(nOutF);
  outExprs[dims.getOutputBatchDimension()] = d(nBatch);
  // The output feature is group-major: one expression over two loops.
  SmallVector<int64_t> outShape(out.getShape());
  for (int64_t s = 0; s < spatial; ++s) {
    inExprs[dims.getInputSpatialDimensions()[s]] =
        d(nOutS + s) * strides[s] + d(nK + s) * rhsDilation[s];
    kExprs[dims.getKernelSpatialDimensions()[s]] = d(nK + s);
    outExprs[dims.getOutputSpatialDimensions()[s]] = d(nOutS + s);
  }
  // Groups > 1 need the output feature split in (group, feature): the
  // result is computed as [..., groups, outPerGroup] and reshaped.
  SmallVector<AffineExpr> resultExprs;
  SmallVector<int64_t> resultShape;
  int64_t featureDim = dims.getOutputFeatureDimension();
  for (int64_t r = 0; r < out.getRank(); ++r) {
    if (r == featureDim) {
      resultExprs.push_back(d(nGroup));
      resultShape.push_back(groups);
      resultExprs.push_back(d(nOutF));
      resultShape.push_back(outPerGroup);
      continue;
    }
    resultExprs.push_back(outExprs[r]);
    resultShape.push_back(out.getDimSize(r));
  }
  SmallVector<utils::IteratorType> iterators(3 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  Value init = createFilled(b, loc, resultShape, out.getElementType(), 0);
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, kExprs, ctx),
                                 AffineMap::get(numLoops, 0, resultExprs, ctx)};
  Value result =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{input, weights}, init, maps,
          iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l,
                createAdd(nb, l, args[2], createMul(nb, l, args[0], args[1])));
          })
          .getResult(0);
  // The batch loop does not appear with a stride: the window is only valid
  // when the padded input holds every window position.
  return SmallVector<Value>{buildReshape(b, loc, result, out.getShape())};
}
} // namespace

bool stablehlo_import::getPadding(std::optional<DenseIntElementsAttr> padding,
                                  int64_t rank, SmallVectorImpl<int64_t> &low,
                                  SmallVectorImpl<int64_t> &high) {
  low.assign(rank, 0);
  high.assign(rank, 0);
  if (!padding)
    return true;
  SmallVector<int64_t> pads(padding->getValues<int64_t>());
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return false;
  for (int64_t d = 0; d < rank; ++d) {
    low[d] = pads[2 * d];
    high[d] = pads[2 * d + 1];
  }
  return true;
}

void stablehlo_import::addReductionConverters(ConverterTable &table) {
  table["stablehlo.reduce"] = convertReduce;
  table["stablehlo.reduce_window"] = convertReduceWindow;
  table["stablehlo.dot_general"] = convertDotGeneral;
  table["stablehlo.dot"] = convertDot;
  table["stablehlo.convolution"] = convertConvolution;
}
