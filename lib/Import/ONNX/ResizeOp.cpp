//===- ResizeOp.cpp - ONNX Resize -----------------------------------------===//
//
// Resize is a contraction, per resized axis, with a constant [out, in]
// interpolation matrix computed at import time (nearest, linear, cubic;
// every coordinate transformation): the SBP rules split every other axis.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

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
  // Opset 10 (and Upsample 9): (X, scales); since 11: (X, roi, scales,
  // sizes); Upsample before 9: the scales an attribute.
  unsigned scalesInput = n.getOpset() < 11 ? 1 : 2;
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (std::optional<SmallVector<float>> given = n.floatsAttr("scales")) {
    scales.assign(given->begin(), given->end());
  } else if (DenseElementsAttr given = n.constantInput(scalesInput);
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

void onnx_import::addResizeConverters(ConverterTable &table) {
  table["Resize"] = convertResize;
  // Resize of opset 10 under its former name (opsets 7 to 9).
  table["Upsample"] = convertResize;
}
