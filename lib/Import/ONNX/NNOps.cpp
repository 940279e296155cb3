//===- NNOps.cpp - ONNX contractions, convolutions, pooling, resizing -----===//
//
// 2-d matmuls become `linalg.matmul` (which the CPU lowering tiles or hands
// to BLAS); every other contraction, convolution and pooling window is one
// `linalg.generic` whose indexing maps say which loops are parallel, which
// reduce and which slide (`o * stride + k * dilation`), so that the SBP rules
// follow from the maps: batch and channel loops split, windows do not.
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

bool isFloat(Type type) { return isa<FloatType>(type); }

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x.getType()) ? Value(arith::AddFOp::create(b, loc, x, y))
                              : Value(arith::AddIOp::create(b, loc, x, y));
}

Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x.getType()) ? Value(arith::MulFOp::create(b, loc, x, y))
                              : Value(arith::MulIOp::create(b, loc, x, y));
}

/// `sum(product of inputs)` over the labels missing from `outLabels`: each
/// operand's dimensions are labelled with loops; a dimension of size 1
/// against a larger loop is broadcast.
FailureOr<Value> buildContraction(OpBuilder &b, Location loc, ValueRange inputs,
                                  ArrayRef<SmallVector<int64_t>> labels,
                                  ArrayRef<int64_t> outLabels) {
  int64_t numLoops = 0;
  for (const SmallVector<int64_t> &operand : labels)
    for (int64_t label : operand)
      numLoops = std::max(numLoops, label + 1);
  SmallVector<int64_t> sizes(numLoops, 1);
  for (auto [input, operand] : llvm::zip(inputs, labels)) {
    auto type = cast<RankedTensorType>(input.getType());
    for (auto [d, label] : llvm::enumerate(operand)) {
      int64_t size = type.getDimSize(d);
      if (size != 1 && sizes[label] != 1 && sizes[label] != size)
        return failure();
      if (size != 1)
        sizes[label] = size;
    }
  }
  SmallVector<AffineMap> maps;
  for (auto [input, operand] : llvm::zip(inputs, labels)) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<AffineExpr> exprs;
    for (auto [d, label] : llvm::enumerate(operand))
      exprs.push_back(type.getDimSize(d) == 1 && sizes[label] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(label));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, b.getContext()));
  }
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape;
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (int64_t label : outLabels) {
    outExprs.push_back(b.getAffineDimExpr(label));
    outShape.push_back(sizes[label]);
    iterators[label] = utils::IteratorType::parallel;
  }
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, b.getContext()));
  Type element = cast<RankedTensorType>(inputs[0].getType()).getElementType();
  Value init = createFilled(b, loc, outShape, element, 0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value product = args[0];
               for (Value arg : args.drop_front().drop_back())
                 product = mul(nb, l, product, arg);
               linalg::YieldOp::create(nb, l, add(nb, l, args.back(), product));
             })
      .getResult(0);
}

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
  n.setOutput(0, buildElementwise(
                     b, loc, operands, element,
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value y = a[0];
                       if (alpha != 1)
                         y = mul(nb, l, y, createScalar(nb, l, element, alpha));
                       if (a.size() == 1)
                         return y;
                       Value c = a[1];
                       if (beta != 1)
                         c = mul(nb, l, c, createScalar(nb, l, element, beta));
                       return add(nb, l, y, c);
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

//===----------------------------------------------------------------------===//
// Windows: convolution and pooling
//===----------------------------------------------------------------------===//

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
                nb, l, add(nb, l, args[2], mul(nb, l, args[0], args[1])));
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
                            return add(nb, l, a[0], a[1]);
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
                             : add(nb, l, args[0], args[2]);
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

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// Where output position `x` of a resized axis reads the input, per
/// coordinate_transformation_mode.
double sourceCoordinate(StringRef mode, double x, double scale, int64_t in,
                        double roiStart, double roiEnd) {
  // The output width before rounding, as ONNX's reference uses it.
  double out = scale * in;
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (mode == "align_corners")
    return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "tf_crop_and_resize")
    return out > 1 ? roiStart * (in - 1) +
                         x * (roiEnd - roiStart) * (in - 1) / (out - 1)
                   : 0.5 * (roiStart + roiEnd) * (in - 1);
  return x / scale; // asymmetric
}

/// The taps (input index, weight) of output position `x`.
SmallVector<std::pair<int64_t, double>>
interpolationTaps(NodeImporter &n, StringRef mode, double source, int64_t in) {
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i, 0, in - 1);
  };
  if (mode == "nearest") {
    std::string rounding = n.stringAttr(
        "nearest_mode", n.getOpset() < 11 ? "floor" : "round_prefer_floor");
    int64_t i = rounding == "floor"               ? std::floor(source)
                : rounding == "ceil"              ? std::ceil(source)
                : rounding == "round_prefer_ceil" ? std::floor(source + 0.5)
                                                  : std::ceil(source - 0.5);
    return {{clampIndex(i), 1.0}};
  }
  int64_t base = std::floor(source);
  double r = source - base;
  if (mode == "linear") {
    if (source < 0)
      return {{0, 1.0}};
    return {{clampIndex(base), 1 - r}, {clampIndex(base + 1), r}};
  }
  // Cubic convolution with coefficient a.
  double a = n.floatAttr("cubic_coeff_a", -0.75f);
  auto w = [&](double t) {
    t = std::fabs(t);
    if (t <= 1)
      return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
      return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.0;
  };
  SmallVector<std::pair<int64_t, double>> taps;
  bool exclude = n.intAttr("exclude_outside", 0) != 0;
  double total = 0;
  for (int64_t i = base - 1; i <= base + 2; ++i) {
    if (exclude && (i < 0 || i >= in))
      continue;
    taps.push_back({clampIndex(i), w(source - i)});
    total += taps.back().second;
  }
  if (exclude && total != 0)
    for (auto &tap : taps)
      tap.second /= total;
  return taps;
}

LogicalResult convertResize(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || !isFloat(type.getElementType()))
    return n.error("needs a floating-point input");
  int64_t rank = type.getRank();
  std::string mode = n.stringAttr("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.error("unknown mode '" + mode + "'");
  std::string transform =
      n.getOpset() < 11
          ? "asymmetric"
          : n.stringAttr("coordinate_transformation_mode", "half_pixel");
  // Opset 10: (X, scales); since 11: (X, roi, scales, sizes).
  unsigned scalesInput = n.getOpset() < 11 ? 1 : 2;
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (DenseElementsAttr given = n.constantInput(scalesInput);
      given && given.getNumElements() > 0) {
    for (const APFloat &v : given.getValues<APFloat>())
      scales.push_back(v.convertToDouble());
  } else if (n.getOpset() >= 11 && n.hasInput(3)) {
    std::optional<SmallVector<int64_t>> given = n.intsInput(3);
    if (!given)
      return n.error("the sizes must be known at import time");
    sizes = *given;
  } else {
    return n.error("the scales or sizes must be known at import time");
  }
  if ((!scales.empty() && scales.size() != size_t(rank)) ||
      (!sizes.empty() && sizes.size() != size_t(rank)))
    return n.error("needs one scale or size per dimension");
  SmallVector<double> roi;
  if (transform == "tf_crop_and_resize") {
    DenseElementsAttr given = n.constantInput(1);
    if (!given || given.getNumElements() != 2 * rank)
      return n.error("tf_crop_and_resize needs a known roi");
    for (const APFloat &v : given.getValues<APFloat>())
      roi.push_back(v.convertToDouble());
  }
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = type.getElementType();
  Value result = n.input(0);
  // tf_crop_and_resize: positions reading outside the input get the
  // extrapolation value; per axis, which ones do.
  SmallVector<SmallVector<bool>> outside(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = type.getDimSize(d);
    int64_t out = sizes.empty() ? std::floor(in * scales[d]) : sizes[d];
    double scale = sizes.empty() ? scales[d] : double(out) / in;
    if (out == in && scale == 1 && transform != "tf_crop_and_resize")
      continue;
    // Output = x contracted along d with the [out, in] weights.
    std::vector<double> weights(out * in, 0.0);
    for (int64_t o = 0; o < out; ++o) {
      double source =
          sourceCoordinate(transform, o, scale, in, roi.empty() ? 0 : roi[d],
                           roi.empty() ? 1 : roi[rank + d]);
      if (transform == "tf_crop_and_resize" &&
          (source < 0 || source > in - 1)) {
        outside[d].resize(out, false);
        outside[d][o] = true;
        continue;
      }
      for (auto [i, w] : interpolationTaps(n, mode, source, in))
        weights[o * in + i] += w;
    }
    auto matrixType = RankedTensorType::get({out, in}, element);
    DenseElementsAttr matrix =
        isa<Float64Type>(element)
            ? DenseElementsAttr::get(matrixType, ArrayRef<double>(weights))
            : DenseElementsAttr::get(matrixType,
                                     ArrayRef<float>(std::vector<float>(
                                         weights.begin(), weights.end())));
    Value weightsValue = arith::ConstantOp::create(b, loc, matrix);
    SmallVector<int64_t> xLabels, outLabels;
    for (int64_t k = 0; k < rank; ++k) {
      xLabels.push_back(k);
      outLabels.push_back(k == d ? rank : k);
    }
    FailureOr<Value> next =
        buildContraction(b, loc, {result, weightsValue},
                         {xLabels, SmallVector<int64_t>{rank, d}}, outLabels);
    if (failed(next))
      return n.error("cannot build the interpolation");
    result = *next;
  }
  if (llvm::any_of(outside, [](auto &axis) { return !axis.empty(); })) {
    SmallVector<int64_t> maskShape;
    for (const SmallVector<bool> &axis : outside)
      maskShape.push_back(axis.empty() ? 1 : axis.size());
    auto maskType = RankedTensorType::get(maskShape, b.getI1Type());
    SmallVector<bool> mask;
    for (int64_t i = 0, e = maskType.getNumElements(); i < e; ++i) {
      bool any = false;
      for (int64_t d = rank - 1, rest = i; d >= 0; --d) {
        int64_t index = rest % maskShape[d];
        rest /= maskShape[d];
        any |= !outside[d].empty() && outside[d][index];
      }
      mask.push_back(any);
    }
    Value maskValue = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(maskType, ArrayRef<bool>(mask)));
    double value = n.floatAttr("extrapolation_value", 0);
    result = buildElementwise(
        b, loc, {maskValue, result}, element,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return Value(arith::SelectOp::create(
              nb, l, a[0], createScalar(nb, l, element, value), a[1]));
        });
  }
  n.setOutput(0, result);
  return success();
}

} // namespace

void onnx_import::addNNConverters(ConverterTable &table) {
  table["MatMul"] = convertMatMul;
  table["Gemm"] = convertGemm;
  table["Einsum"] = convertEinsum;
  table["Conv"] = convertConv;
  table["ConvTranspose"] = convertConvTranspose;
  table["MaxPool"] = convertPool(true);
  table["AveragePool"] = convertPool(false);
  table["GlobalAveragePool"] = convertGlobalPool(false);
  table["GlobalMaxPool"] = convertGlobalPool(true);
  table["BatchNormalization"] = convertBatchNorm;
  table["Resize"] = convertResize;
}
