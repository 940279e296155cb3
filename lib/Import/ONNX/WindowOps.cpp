//===- WindowOps.cpp - ONNX convolutions, pooling, batch norm -------------===//
//
// Convolutions (groups as a loop), transposed convolutions and pooling
// windows are one `linalg.generic` each with sliding indexing maps
// (`o * stride + k * dilation`): batch and channel loops split in the
// derived SBP rules, windows do not.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// The geometry of a sliding window over the spatial dimensions.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd, out;
};

/// Reads kernel, strides, dilations, pads and auto_pad for spatial sizes
/// `in`; `ceil` rounds the output size up (pooling's ceil_mode).
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> in,
                             ArrayRef<int64_t> kernel, bool ceil) {
  size_t rank = in.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = n.intsAttr("strides").value_or(SmallVector<int64_t>(rank, 1));
  w.dilations = n.intsAttr("dilations").value_or(SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> pads =
      n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * rank, 0));
  if (w.kernel.size() != rank || w.strides.size() != rank ||
      w.dilations.size() != rank || pads.size() != 2 * rank) {
    (void)n.error("kernel_shape, strides, dilations and pads must match the " +
                  Twine(rank) + " spatial dimensions");
    return failure();
  }
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in[d] + w.strides[d] - 1) / w.strides[d];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - in[d]);
      int64_t small = total / 2;
      w.padBegin.push_back(autoPad == "SAME_UPPER" ? small : total - small);
      w.padEnd.push_back(total - w.padBegin.back());
      w.out.push_back(out);
      continue;
    }
    if (autoPad == "VALID") {
      pads[d] = pads[rank + d] = 0;
    } else if (autoPad != "NOTSET") {
      (void)n.error("unknown auto_pad '" + autoPad + "'");
      return failure();
    }
    w.padBegin.push_back(pads[d]);
    w.padEnd.push_back(pads[rank + d]);
    int64_t span = in[d] + pads[d] + pads[rank + d] - extent;
    if (span < 0 || w.strides[d] <= 0) {
      (void)n.error("the window is larger than the padded input");
      return failure();
    }
    int64_t out = (ceil ? span + w.strides[d] - 1 : span) / w.strides[d] + 1;
    // A window that would start in the end padding is dropped.
    if (ceil && (out - 1) * w.strides[d] >= in[d] + pads[d])
      --out;
    w.out.push_back(out);
  }
  return w;
}

/// Pads the trailing spatial dimensions of `input` with `value`, to make
/// room for the window's last position.
Value padSpatial(OpBuilder &b, Location loc, Value input, const Window &w,
                 double value) {
  auto type = cast<RankedTensorType>(input.getType());
  size_t spatialStart = type.getRank() - w.kernel.size();
  SmallVector<int64_t> shape(type.getShape()), offsets(type.getRank(), 0);
  bool any = false;
  for (size_t d = 0; d < w.kernel.size(); ++d) {
    int64_t needed =
        (w.out[d] - 1) * w.strides[d] + (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t size =
        std::max(needed, type.getDimSize(spatialStart + d) + w.padBegin[d]);
    size = std::max(size, needed);
    offsets[spatialStart + d] = w.padBegin[d];
    shape[spatialStart + d] = size;
    any |= size != type.getDimSize(spatialStart + d) || w.padBegin[d];
  }
  if (!any)
    return input;
  Value filled = createFilled(b, loc, shape, type.getElementType(), value);
  SmallVector<int64_t> strides(type.getRank(), 1);
  // Only the part of the input the windows reach is inserted.
  SmallVector<int64_t> sizes(type.getShape());
  for (size_t d = 0; d < w.kernel.size(); ++d)
    sizes[spatialStart + d] =
        std::min(sizes[spatialStart + d],
                 shape[spatialStart + d] - offsets[spatialStart + d]);
  if (sizes != SmallVector<int64_t>(type.getShape())) {
    SmallVector<int64_t> zeros(type.getRank(), 0);
    input = tensor::ExtractSliceOp::create(
        b, loc, input, getAsIndexOpFoldResult(b.getContext(), zeros),
        getAsIndexOpFoldResult(b.getContext(), sizes),
        getAsIndexOpFoldResult(b.getContext(), strides));
  }
  return tensor::InsertSliceOp::create(
      b, loc, input, filled, getAsIndexOpFoldResult(b.getContext(), offsets),
      getAsIndexOpFoldResult(b.getContext(), sizes),
      getAsIndexOpFoldResult(b.getContext(), strides));
}

/// The sliding index `o * stride + k * dilation` of spatial dimension `d`.
AffineExpr slide(OpBuilder &b, const Window &w, size_t d, unsigned outLoop,
                 unsigned kernelLoop) {
  return b.getAffineDimExpr(outLoop) * w.strides[d] +
         b.getAffineDimExpr(kernelLoop) * w.dilations[d];
}

/// A grouped convolution of `x` [N, C, spatial...] (already padded) with
/// `w`: [F, C/G, k...], or for a transposed convolution [C, F/G, k...] read
/// flipped. Adds `bias` [F] when given.
Value buildConv(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                int64_t group, int64_t filters, const Window &window,
                bool transposed) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t spatial = window.kernel.size();
  int64_t batch = xType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t perGroup = channels / group, filtersPerGroup = filters / group;
  // Loops: n, g, f, o..., c, k...
  unsigned nLoop = 0, gLoop = 1, fLoop = 2, oLoop = 3, cLoop = 3 + spatial,
           kLoop = 4 + spatial;
  unsigned numLoops = 4 + 2 * spatial;
  SmallVector<int64_t> xShape = {batch, group, perGroup};
  SmallVector<int64_t> wShape =
      transposed ? SmallVector<int64_t>{group, perGroup, filtersPerGroup}
                 : SmallVector<int64_t>{group, filtersPerGroup, perGroup};
  SmallVector<int64_t> outShape = {batch, group, filtersPerGroup};
  auto dim = [&](unsigned loop) { return b.getAffineDimExpr(loop); };
  SmallVector<AffineExpr> xExprs = {dim(nLoop), dim(gLoop), dim(cLoop)};
  SmallVector<AffineExpr> wExprs =
      transposed ? SmallVector<AffineExpr>{dim(gLoop), dim(cLoop), dim(fLoop)}
                 : SmallVector<AffineExpr>{dim(gLoop), dim(fLoop), dim(cLoop)};
  SmallVector<AffineExpr> outExprs = {dim(nLoop), dim(gLoop), dim(fLoop)};
  for (int64_t d = 0; d < spatial; ++d) {
    xShape.push_back(xType.getDimSize(2 + d));
    wShape.push_back(window.kernel[d]);
    outShape.push_back(window.out[d]);
    // A flipped kernel is read forwards against the input read backwards,
    // so that every loop still indexes some operand directly.
    xExprs.push_back(transposed ? dim(oLoop + d) * window.strides[d] +
                                      (window.kernel[d] - 1 - dim(kLoop + d)) *
                                          window.dilations[d]
                                : slide(b, window, d, oLoop + d, kLoop + d));
    wExprs.push_back(dim(kLoop + d));
    outExprs.push_back(dim(oLoop + d));
  }
  x = buildReshape(b, loc, x, xShape);
  w = buildReshape(b, loc, w, wShape);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned l = cLoop; l < numLoops; ++l)
    iterators[l] = utils::IteratorType::reduction;
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, xExprs, ctx),
                                 AffineMap::get(numLoops, 0, wExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  Type element = xType.getElementType();
  Value init = createFilled(b, loc, outShape, element, 0);
  Value conv =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{x, w}, init, maps, iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l,
                createAdd(nb, l, args[2], createMul(nb, l, args[0], args[1])));
          })
          .getResult(0);
  SmallVector<int64_t> resultShape = {batch, filters};
  llvm::append_range(resultShape, window.out);
  Value result = buildReshape(b, loc, conv, resultShape);
  if (!bias)
    return result;
  SmallVector<int64_t> biasShape = {filters};
  biasShape.append(spatial, 1);
  return buildElementwise(b, loc,
                          {result, buildReshape(b, loc, bias, biasShape)},
                          element, [](OpBuilder &nb, Location l, ValueRange a) {
                            return createAdd(nb, l, a[0], a[1]);
                          });
}

LogicalResult convertConv(NodeImporter &n) {
  RankedTensorType xType = n.inputType(0), wType = n.inputType(1);
  if (!xType || !wType || xType.getRank() < 3 ||
      wType.getRank() != xType.getRank() || !isFloat(xType.getElementType()))
    return n.error("needs floating-point X [N, C, ...] and W [M, C/group, "
                   "...] of one rank");
  int64_t group = n.intAttr("group", 1);
  int64_t channels = xType.getDimSize(1), filters = wType.getDimSize(0);
  if (group <= 0 || channels % group || filters % group ||
      wType.getDimSize(1) != channels / group)
    return n.error("the channels do not divide into " + Twine(group) +
                   " groups");
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  if (auto given = n.intsAttr("kernel_shape"); given && *given != kernel)
    return n.error("kernel_shape does not match W");
  FailureOr<Window> window =
      readWindow(n, xType.getShape().drop_front(2), kernel, false);
  if (failed(window))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Value x = padSpatial(b, loc, n.input(0), *window, 0);
  n.setOutput(0, buildConv(b, loc, x, n.input(1),
                           n.hasInput(2) ? n.input(2) : Value(), group, filters,
                           *window, /*transposed=*/false));
  return success();
}

/// A transposed convolution is a convolution, with the kernel flipped, of
/// the input spread out by the strides (zeros between elements) and padded
/// by the kernel extent less the given pads.
LogicalResult convertConvTranspose(NodeImporter &n) {
  RankedTensorType xType = n.inputType(0), wType = n.inputType(1);
  if (!xType || !wType || xType.getRank() < 3 ||
      wType.getRank() != xType.getRank() || !isFloat(xType.getElementType()))
    return n.error("needs floating-point X [N, C, ...] and W [C, M/group, "
                   "...] of one rank");
  int64_t group = n.intAttr("group", 1);
  int64_t channels = xType.getDimSize(1);
  if (group <= 0 || channels % group || wType.getDimSize(0) != channels)
    return n.error("W does not match the input channels in " + Twine(group) +
                   " groups");
  int64_t filters = wType.getDimSize(1) * group;
  size_t spatial = xType.getRank() - 2;
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  SmallVector<int64_t> strides =
      n.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations =
      n.intsAttr("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> outputPadding =
      n.intsAttr("output_padding").value_or(SmallVector<int64_t>(spatial, 0));
  SmallVector<int64_t> pads =
      n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  std::optional<SmallVector<int64_t>> outputShape = n.intsAttr("output_shape");
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial ||
      outputPadding.size() != spatial || pads.size() != 2 * spatial ||
      (outputShape && outputShape->size() != spatial))
    return n.error("strides, dilations, pads, output_padding and "
                   "output_shape must match the spatial dimensions");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = xType.getElementType();
  // The spread, fully padded input, then cut to the requested pads.
  SmallVector<int64_t> spreadShape(xType.getShape().take_front(2)),
      offsets(xType.getRank(), 0), steps(xType.getRank(), 1),
      cutOffsets(xType.getRank(), 0), cutSizes(xType.getShape().take_front(2));
  Window window;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t in = xType.getDimSize(2 + d);
    int64_t extent = (kernel[d] - 1) * dilations[d] + 1;
    int64_t full = strides[d] * (in - 1) + outputPadding[d] + extent;
    int64_t begin = pads[d], end = pads[spatial + d];
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t target = outputShape ? (*outputShape)[d] : in * strides[d];
      int64_t total = full - target;
      int64_t half = llvm::divideFloorSigned(total, 2);
      begin = autoPad == "SAME_UPPER" ? half : total - half;
      end = total - begin;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    }
    // Negative pads (an output_shape beyond the natural size) add zeros.
    int64_t margin = extent - 1;
    int64_t front = std::max<int64_t>(0, -begin),
            back = std::max<int64_t>(0, -end);
    int64_t length = strides[d] * (in - 1) + 1 + 2 * margin + outputPadding[d];
    spreadShape.push_back(front + length + back);
    offsets[2 + d] = front + margin;
    steps[2 + d] = strides[d];
    cutOffsets[2 + d] = front + begin;
    cutSizes.push_back(length - begin - end);
    window.kernel.push_back(kernel[d]);
    window.strides.push_back(1);
    window.dilations.push_back(dilations[d]);
    window.out.push_back(full - begin - end);
    if (window.out.back() <= 0)
      return n.error("the pads leave no output");
  }
  Value spread = createFilled(b, loc, spreadShape, element, 0);
  auto indices = [&](ArrayRef<int64_t> values) {
    return getAsIndexOpFoldResult(b.getContext(), values);
  };
  spread = tensor::InsertSliceOp::create(
      b, loc, n.input(0), spread, indices(offsets), indices(xType.getShape()),
      indices(steps));
  SmallVector<int64_t> ones(xType.getRank(), 1);
  Value cut = tensor::ExtractSliceOp::create(
      b, loc, spread, indices(cutOffsets), indices(cutSizes), indices(ones));
  n.setOutput(0, buildConv(b, loc, cut, n.input(1),
                           n.hasInput(2) ? n.input(2) : Value(), group, filters,
                           window, /*transposed=*/true));
  return success();
}

/// Sums (or maxes) each window of `input` [N, C, spatial...], padded with
/// `padValue`.
Value pool(OpBuilder &b, Location loc, Value input, const Window &w, bool max,
           double padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  Value padded = padSpatial(b, loc, input, w, padValue);
  size_t spatial = w.kernel.size();
  size_t lead = type.getRank() - spatial;
  unsigned numLoops = lead + 2 * spatial;
  SmallVector<AffineExpr> inExprs, outExprs, windowExprs;
  SmallVector<int64_t> outShape(type.getShape().take_front(lead));
  for (size_t d = 0; d < lead; ++d) {
    inExprs.push_back(b.getAffineDimExpr(d));
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  for (size_t d = 0; d < spatial; ++d) {
    inExprs.push_back(slide(b, w, d, lead + d, lead + spatial + d));
    outExprs.push_back(b.getAffineDimExpr(lead + d));
    windowExprs.push_back(b.getAffineDimExpr(lead + spatial + d));
    outShape.push_back(w.out[d]);
  }
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned l = lead + spatial; l < numLoops; ++l)
    iterators[l] = utils::IteratorType::reduction;
  MLIRContext *ctx = b.getContext();
  // The window operand only gives the kernel loops their extent.
  Value windowShape = createEmpty(b, loc, w.kernel, element);
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, windowExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  double init = max ? -INFINITY : 0;
  Value initTensor = createFilled(b, loc, outShape, element, init);
  return linalg::GenericOp::create(
             b, loc, initTensor.getType(), ValueRange{padded, windowShape},
             initTensor, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value r = max ? Value(arith::MaximumFOp::create(nb, l, args[0],
                                                               args[2]))
                             : createAdd(nb, l, args[0], args[2]);
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

NodeConverter convertPool(bool max) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || type.getRank() < 3 || !isFloat(type.getElementType()))
      return n.error("needs a floating-point input [N, C, ...]");
    if (n.hasOutput(1))
      return n.error("the Indices output is not supported");
    std::optional<SmallVector<int64_t>> kernel = n.intsAttr("kernel_shape");
    if (!kernel)
      return n.error("kernel_shape is required");
    SmallVector<int64_t> in(type.getShape().drop_front(2));
    FailureOr<Window> window =
        readWindow(n, in, *kernel, n.intAttr("ceil_mode", 0) != 0);
    if (failed(window))
      return failure();
    OpBuilder &b = n.builder();
    Location loc = n.getLoc();
    Type element = type.getElementType();
    if (max) {
      n.setOutput(0, pool(b, loc, n.input(0), *window, true, -INFINITY));
      return success();
    }
    Value sum = pool(b, loc, n.input(0), *window, false, 0);
    // The divisor of each window: its count of input elements (and of
    // explicit padding, with count_include_pad), pooled from ones.
    bool includePad = n.intAttr("count_include_pad", 0) != 0;
    SmallVector<int64_t> onesShape = {1, 1};
    Window countWindow = *window;
    for (size_t d = 0; d < in.size(); ++d) {
      onesShape.push_back(
          in[d] + (includePad ? window->padBegin[d] + window->padEnd[d] : 0));
      if (includePad)
        countWindow.padBegin[d] = 0;
    }
    Value ones = createFilled(b, loc, onesShape, element, 1);
    Value counts = pool(b, loc, ones, countWindow, false, 0);
    n.setOutput(0, buildElementwise(
                       b, loc, {sum, counts}, element,
                       [](OpBuilder &nb, Location l, ValueRange a) {
                         return Value(arith::DivFOp::create(nb, l, a[0], a[1]));
                       }));
    return success();
  };
}

NodeConverter convertGlobalPool(bool max) {
  return [=](NodeImporter &n) -> LogicalResult {
    RankedTensorType type = n.inputType(0);
    if (!type || type.getRank() < 3 || !isFloat(type.getElementType()))
      return n.error("needs a floating-point input [N, C, ...]");
    SmallVector<int64_t> kernel(type.getShape().drop_front(2));
    Window w;
    w.kernel = kernel;
    w.strides.assign(kernel.size(), 1);
    w.dilations.assign(kernel.size(), 1);
    w.padBegin.assign(kernel.size(), 0);
    w.padEnd.assign(kernel.size(), 0);
    w.out.assign(kernel.size(), 1);
    OpBuilder &b = n.builder();
    Location loc = n.getLoc();
    Value result = pool(b, loc, n.input(0), w, max, 0);
    if (!max) {
      int64_t count = 1;
      for (int64_t size : kernel)
        count *= size;
      Type element = type.getElementType();
      result = buildElementwise(
          b, loc, {result}, element,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            return Value(arith::DivFOp::create(
                nb, l, a[0], createScalar(nb, l, element, count)));
          });
    }
    n.setOutput(0, result);
    return success();
  };
}

LogicalResult convertBatchNorm(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || type.getRank() < 2 || !isFloat(type.getElementType()))
    return n.error("needs a floating-point input [N, C, ...]");
  if (n.intAttr("training_mode", 0) || n.hasOutput(1))
    return n.error("training mode (batch statistics) is not supported");
  int64_t channels = type.getDimSize(1);
  SmallVector<int64_t> paramShape = {channels};
  paramShape.append(type.getRank() - 2, 1);
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  SmallVector<Value> operands = {n.input(0)};
  for (unsigned i = 1; i <= 4; ++i) {
    RankedTensorType param = n.inputType(i);
    if (!param || param.getNumElements() != channels)
      return n.error("input " + Twine(i) + " must hold one value a channel");
    operands.push_back(buildReshape(b, loc, n.input(i), paramShape));
  }
  Type element = type.getElementType();
  float epsilon = n.floatAttr("epsilon", 1e-5f);
  n.setOutput(
      0, buildElementwise(
             b, loc, operands, element,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               // (x - mean) * scale / sqrt(var + eps) + bias
               Value eps = createScalar(nb, l, element, epsilon);
               Value inv = math::RsqrtOp::create(
                   nb, l, arith::AddFOp::create(nb, l, a[4], eps));
               Value centered = arith::SubFOp::create(nb, l, a[0], a[3]);
               Value scaled = arith::MulFOp::create(
                   nb, l, centered, arith::MulFOp::create(nb, l, inv, a[1]));
               return Value(arith::AddFOp::create(nb, l, scaled, a[2]));
             }));
  return success();
}

} // namespace

void onnx_import::addWindowConverters(ConverterTable &table) {
  table["Conv"] = convertConv;
  table["ConvTranspose"] = convertConvTranspose;
  table["MaxPool"] = convertPool(true);
  table["AveragePool"] = convertPool(false);
  table["GlobalAveragePool"] = convertGlobalPool(false);
  table["GlobalMaxPool"] = convertGlobalPool(true);
  table["BatchNormalization"] = convertBatchNorm;
}
