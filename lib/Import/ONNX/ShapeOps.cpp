//===- ShapeOps.cpp - ONNX shape, layout and indexing ops -----------------===//
//
// Shapes are static after import: the inputs that give a shape, axes or
// bounds must be known at import time, and the shape computations that
// produce them (Shape, Gather, Concat, ... on small integer tensors) are
// evaluated here instead of being emitted.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "sbp/Dialect/Sbp/Utils/MaskedReduction.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

SmallVector<int64_t> toInts(DenseElementsAttr value) {
  SmallVector<int64_t> ints;
  for (const APInt &v : value.getValues<APInt>())
    ints.push_back(v.getSExtValue());
  return ints;
}

DenseElementsAttr intsAttr(ArrayRef<int64_t> shape, Type element,
                           ArrayRef<int64_t> values) {
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(APInt(element.getIntOrFloatBitWidth(), v, true));
  return DenseElementsAttr::get(RankedTensorType::get(shape, element), bits);
}

/// Defines output 0 as `input` reshaped, folding a constant.
LogicalResult reshapeTo(NodeImporter &n, ArrayRef<int64_t> shape) {
  RankedTensorType type = n.inputType(0);
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  if (count != type.getNumElements())
    return n.error("cannot reshape " + Twine(type.getNumElements()) +
                   " elements to " + Twine(count));
  if (DenseElementsAttr constant = foldableInput(n, 0)) {
    n.setConstantOutput(0, constant.reshape(RankedTensorType::get(
                               shape, type.getElementType())));
    return success();
  }
  n.setOutput(0, buildReshape(n.builder(), n.getLoc(), n.input(0), shape));
  return success();
}

LogicalResult convertReshape(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  std::optional<SmallVector<int64_t>> shape = n.intsInput(1);
  if (!type || !shape)
    return n.error("the target shape must be known at import time");
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (auto [i, size] : llvm::enumerate(*shape)) {
    if (size == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return n.error("a 0 in the shape copies a dimension the input lacks");
      size = type.getDimSize(i);
    }
    if (size == -1) {
      if (inferred >= 0)
        return n.error("the shape has more than one -1");
      inferred = i;
      continue;
    }
    if (size < 0)
      return n.error("negative size in the target shape");
    known *= size;
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known)
      return n.error("cannot infer the -1 dimension");
    (*shape)[inferred] = type.getNumElements() / known;
  }
  return reshapeTo(n, *shape);
}

LogicalResult convertFlatten(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  int64_t axis = n.intAttr("axis", 1);
  if (axis < 0)
    axis += type.getRank();
  if (axis < 0 || axis > type.getRank())
    return n.error("axis out of range");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  return reshapeTo(n, {outer, outer ? type.getNumElements() / outer : 0});
}

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input
/// since.
std::optional<SmallVector<int64_t>> readAxes(NodeImporter &n, bool &given) {
  given = true;
  if (n.getOpset() < 13) {
    if (auto axes = n.intsAttr("axes"))
      return axes;
    given = false;
    return SmallVector<int64_t>();
  }
  if (!n.hasInput(1)) {
    given = false;
    return SmallVector<int64_t>();
  }
  return n.intsInput(1);
}

LogicalResult convertSqueeze(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  bool given;
  std::optional<SmallVector<int64_t>> axes = readAxes(n, given);
  if (!type || !axes)
    return n.error("the axes must be known at import time");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool squeezed =
        given ? llvm::any_of(*axes,
                             [&](int64_t a) {
                               return normalizeAxis(a, type.getRank()) == d;
                             })
              : type.getDimSize(d) == 1;
    if (squeezed && type.getDimSize(d) != 1)
      return n.error("cannot squeeze dimension " + Twine(d) + " of size " +
                     Twine(type.getDimSize(d)));
    if (!squeezed)
      shape.push_back(type.getDimSize(d));
  }
  return reshapeTo(n, shape);
}

LogicalResult convertUnsqueeze(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  bool given;
  std::optional<SmallVector<int64_t>> axes = readAxes(n, given);
  if (!type || !axes || !given)
    return n.error("the axes must be known at import time");
  int64_t rank = type.getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    std::optional<int64_t> d = normalizeAxis(axis, rank);
    if (!d || inserted[*d])
      return n.error("bad or repeated axis " + Twine(axis));
    inserted[*d] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0, in = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(in++));
  return reshapeTo(n, shape);
}

Value transpose(OpBuilder &b, Location loc, Value input,
                ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Value init = createEmpty(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

LogicalResult convertTranspose(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  SmallVector<int64_t> perm;
  if (auto given = n.intsAttr("perm"))
    perm = *given;
  else
    for (int64_t d = type.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (sorted.size() != static_cast<size_t>(type.getRank()) || sorted[d] != d)
      return n.error("perm is not a permutation of the input's dimensions");
  n.setOutput(0, transpose(n.builder(), n.getLoc(), n.input(0), perm));
  return success();
}

LogicalResult convertConcat(NodeImporter &n) {
  RankedTensorType first = n.inputType(0);
  if (!first)
    return n.error("input 0 is missing or not a tensor");
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", 0), first.getRank());
  if (!axis)
    return n.error("axis out of range");
  SmallVector<Value> inputs;
  bool allConstant = first.getRank() == 1;
  SmallVector<int64_t> folded;
  for (unsigned i = 0; i < n.getNumInputs(); ++i) {
    RankedTensorType type = n.inputType(i);
    if (!type || type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return n.error("the inputs differ in rank or element type");
    DenseElementsAttr constant = foldableInput(n, i);
    allConstant &= static_cast<bool>(constant);
    if (constant)
      llvm::append_range(folded, toInts(constant));
  }
  if (allConstant) {
    n.setConstantOutput(0, intsAttr({static_cast<int64_t>(folded.size())},
                                    first.getElementType(), folded));
    return success();
  }
  for (unsigned i = 0; i < n.getNumInputs(); ++i)
    // ONNX allows empty inputs; tensor.concat does not need them.
    if (n.inputType(i).getNumElements() != 0 || first.getNumElements() == 0)
      inputs.push_back(n.input(i));
  if (inputs.size() == 1) {
    n.setOutput(0, inputs[0]);
    return success();
  }
  n.setOutput(0,
              tensor::ConcatOp::create(n.builder(), n.getLoc(), *axis, inputs));
  return success();
}

LogicalResult convertSplit(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (!axis)
    return n.error("axis out of range");
  int64_t dim = type.getDimSize(*axis);
  std::optional<SmallVector<int64_t>> sizes =
      n.getOpset() < 13 ? n.intsAttr("split")
                        : (n.hasInput(1) ? n.intsInput(1) : std::nullopt);
  if (n.getOpset() >= 13 && n.hasInput(1) && !sizes)
    return n.error("the split sizes must be known at import time");
  unsigned count = n.getNumOutputs();
  if (!sizes) {
    if (dim % count)
      return n.error("cannot split " + Twine(dim) + " into " + Twine(count) +
                     " equal parts");
    sizes = SmallVector<int64_t>(count, dim / count);
  }
  if (sizes->size() != count)
    return n.error("the split has " + Twine(sizes->size()) + " sizes for " +
                   Twine(count) + " outputs");
  OpBuilder &b = n.builder();
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> extents,
        strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t d = 0; d < type.getRank(); ++d)
      extents.push_back(b.getIndexAttr(d == *axis ? size : type.getDimSize(d)));
    offsets[*axis] = b.getIndexAttr(offset);
    offset += size;
    if (offset > dim)
      return n.error("the split sizes add up to more than " + Twine(dim));
    if (size == 0 || type.getNumElements() == 0) {
      SmallVector<int64_t> shape(type.getShape());
      shape[*axis] = size;
      n.setOutput(i, createEmpty(b, n.getLoc(), shape, type.getElementType()));
      continue;
    }
    n.setOutput(i, tensor::ExtractSliceOp::create(b, n.getLoc(), n.input(0),
                                                  offsets, extents, strides));
  }
  if (offset != dim)
    return n.error("the split sizes add up to " + Twine(offset) + ", not " +
                   Twine(dim));
  return success();
}

/// Reverses `input` along `axes` with an indexing map reading `size-1-i`,
/// which keeps those dimensions unsplit in the derived SBP rule.
Value reverse(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    exprs.push_back(llvm::is_contained(axes, d)
                        ? type.getDimSize(d) - 1 - b.getAffineDimExpr(d)
                        : b.getAffineDimExpr(d));
  Value init = createEmpty(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, b.getContext()),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

LogicalResult convertSlice(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (n.getOpset() < 10) {
    starts = n.intsAttr("starts");
    ends = n.intsAttr("ends");
    axes = n.intsAttr("axes");
  } else {
    starts = n.intsInput(1);
    ends = n.intsInput(2);
    axes = n.hasInput(3) ? n.intsInput(3) : std::nullopt;
    steps = n.hasInput(4) ? n.intsInput(4) : std::nullopt;
    if ((n.hasInput(3) && !axes) || (n.hasInput(4) && !steps))
      return n.error("the axes and steps must be known at import time");
  }
  if (!starts || !ends || starts->size() != ends->size())
    return n.error("the starts and ends must be known at import time and "
                   "have one entry per axis");
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i)
      axes->push_back(i);
  }
  if (!steps)
    steps = SmallVector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size())
    return n.error("the axes and steps need one entry per start");

  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1), reversed;
  for (size_t i = 0; i < axes->size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis((*axes)[i], rank);
    int64_t step = (*steps)[i];
    if (!axis || step == 0)
      return n.error("bad axis or a zero step");
    int64_t dim = type.getDimSize(*axis);
    int64_t start = (*starts)[i], end = (*ends)[i];
    start = start < 0 ? start + dim : start;
    end = end < 0 ? end + dim : end;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      sizes[*axis] = std::max<int64_t>(0, (end - start + step - 1) / step);
      offsets[*axis] = start;
      strides[*axis] = step;
      continue;
    }
    // A negative step reads the reversed dimension forwards.
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    sizes[*axis] = std::max<int64_t>(0, (start - end - step - 1) / -step);
    offsets[*axis] = dim - 1 - start;
    strides[*axis] = -step;
    reversed.push_back(*axis);
  }
  DenseElementsAttr constant = foldableInput(n, 0);
  if (constant && rank == 1 && reversed.empty()) {
    SmallVector<int64_t> values = toInts(constant), out;
    for (int64_t i = 0; i < sizes[0]; ++i)
      out.push_back(values[offsets[0] + i * strides[0]]);
    n.setConstantOutput(0, intsAttr(sizes, type.getElementType(), out));
    return success();
  }
  OpBuilder &b = n.builder();
  if (llvm::is_contained(sizes, 0)) {
    n.setOutput(0, createEmpty(b, n.getLoc(), sizes, type.getElementType()));
    return success();
  }
  Value input = n.input(0);
  if (!reversed.empty())
    input = reverse(b, n.getLoc(), input, reversed);
  n.setOutput(0, tensor::ExtractSliceOp::create(
                     b, n.getLoc(), input,
                     getAsIndexOpFoldResult(b.getContext(), offsets),
                     getAsIndexOpFoldResult(b.getContext(), sizes),
                     getAsIndexOpFoldResult(b.getContext(), strides)));
  return success();
}

/// `index` (an integer scalar) as an index, counted from the end of a
/// dimension of `size` where negative.
Value wrapIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                            arith::ConstantIndexOp::create(b, loc, 0));
  return arith::SelectOp::create(
      b, loc, negative,
      arith::AddIOp::create(b, loc, index,
                            arith::ConstantIndexOp::create(b, loc, size)),
      index);
}

LogicalResult convertGather(NodeImporter &n) {
  RankedTensorType data = n.inputType(0), indices = n.inputType(1);
  if (!data || !indices || !indices.getElementType().isInteger())
    return n.error("needs a data tensor and integer indices");
  std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis", 0), data.getRank());
  if (!axis)
    return n.error("axis out of range");
  int64_t dim = data.getDimSize(*axis);
  DenseElementsAttr constData = foldableInput(n, 0);
  DenseElementsAttr constIndices = foldableInput(n, 1);
  if (constData && constIndices && data.getRank() == 1) {
    SmallVector<int64_t> values = toInts(constData), out;
    for (int64_t index : toInts(constIndices)) {
      if (index < -dim || index >= dim)
        return n.error("index " + Twine(index) + " out of range");
      out.push_back(values[index < 0 ? index + dim : index]);
    }
    n.setConstantOutput(
        0, intsAttr(indices.getShape(), data.getElementType(), out));
    return success();
  }
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  // A constant index, or a run of consecutive ones, is a slice (PyTorch's
  // `x[k]`, MultiheadAttention's q, k and v): it splits along the other
  // dimensions, where a gather would keep its table whole.
  if (constIndices && indices.getRank() <= 1 && !ShapedType::isDynamic(dim)) {
    SmallVector<int64_t> values = toInts(constIndices);
    for (int64_t &index : values)
      index += index < 0 ? dim : 0;
    bool run = !values.empty() && values.front() >= 0 && values.back() < dim &&
               llvm::all_of(
                   llvm::seq<size_t>(1, values.size()),
                   [&](size_t i) { return values[i] == values[i - 1] + 1; });
    if (run) {
      SmallVector<int64_t> offsets(data.getRank(), 0), sizes(data.getShape());
      offsets[*axis] = values.front();
      sizes[*axis] = values.size();
      n.setOutput(0,
                  tensor::ExtractSliceOp::create(
                      n.builder(), n.getLoc(),
                      RankedTensorType::get(shape, data.getElementType()),
                      n.input(0), ValueRange(), ValueRange(), ValueRange(),
                      offsets, sizes, SmallVector<int64_t>(data.getRank(), 1)));
      return success();
    }
  }
  unsigned rank = shape.size(), q = indices.getRank();
  OpBuilder &b = n.builder();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> indexExprs;
  for (unsigned d = 0; d < q; ++d)
    indexExprs.push_back(b.getAffineDimExpr(*axis + d));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, indexExprs, ctx),
                                 b.getMultiDimIdentityMap(rank)};
  Value init = createEmpty(b, n.getLoc(), shape, data.getElementType());
  Value table = n.input(0);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  // The table is read with tensor.extract: partitioning keeps it whole.
  auto generic = linalg::GenericOp::create(
      b, n.getLoc(), init.getType(), n.input(1), init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value index = wrapIndex(nb, l, args[0], dim);
        SmallVector<Value> coords;
        for (int64_t d = 0; d < data.getRank(); ++d) {
          if (d == *axis)
            coords.push_back(index);
          else
            coords.push_back(
                linalg::IndexOp::create(nb, l, d < *axis ? d : d - 1 + q));
        }
        Value element = tensor::ExtractOp::create(nb, l, table, coords);
        linalg::YieldOp::create(nb, l, element);
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// GatherElements: each output element reads the data at its own position
/// but along `axis`, where it reads at its index (negative from the end).
LogicalResult convertGatherElements(NodeImporter &n) {
  RankedTensorType data = n.inputType(0), indices = n.inputType(1);
  if (!data || !indices || !indices.getElementType().isInteger() ||
      indices.getRank() != data.getRank())
    return n.error("needs a data tensor and integer indices of its rank");
  int64_t rank = data.getRank();
  std::optional<int64_t> axis = normalizeAxis(n.intAttr("axis", 0), rank);
  if (!axis)
    return n.error("axis out of range");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indices.getDimSize(d) > data.getDimSize(d))
      return n.error("the indices are larger than the data along dimension " +
                     Twine(d));
  OpBuilder &b = n.builder();
  Value init =
      createEmpty(b, n.getLoc(), indices.getShape(), data.getElementType());
  Value table = n.input(0);
  int64_t size = data.getDimSize(*axis);
  auto generic = linalg::GenericOp::create(
      b, n.getLoc(), init.getType(), n.input(1), init,
      SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value index = wrapIndex(nb, l, args[0], size);
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(
              d == *axis ? index : Value(linalg::IndexOp::create(nb, l, d)));
        linalg::YieldOp::create(
            nb, l, ValueRange{tensor::ExtractOp::create(nb, l, table, coords)});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// The element of a dimension of `size` that padding mode `mode` (edge or
/// reflect) reads at `index`, which may lie outside [0, size).
Value padSource(OpBuilder &b, Location loc, StringRef mode, Value index,
                int64_t size) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  if (mode == "edge" || size == 1)
    return arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, index, constant(0)),
        constant(size - 1));
  // Reflection repeats with period 2 (size - 1) and is symmetric about 0.
  int64_t period = 2 * (size - 1);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         index, constant(0));
  Value magnitude = arith::SelectOp::create(
      b, loc, negative, arith::SubIOp::create(b, loc, constant(0), index),
      index);
  Value folded = arith::RemSIOp::create(b, loc, magnitude, constant(period));
  Value beyond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       folded, constant(size));
  return arith::SelectOp::create(
      b, loc, beyond, arith::SubIOp::create(b, loc, constant(period), folded),
      folded);
}

LogicalResult convertPad(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> pads =
      n.getOpset() < 11 ? n.intsAttr("pads") : n.intsInput(1);
  if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank)
    return n.error("the pads must be known at import time, two per "
                   "dimension");
  std::string mode = n.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return n.error("mode '" + mode + "' is not supported");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  // Negative pads remove elements: a slice first.
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), low, high;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = (*pads)[d], end = (*pads)[rank + d];
    offsets[d] = std::max<int64_t>(0, -begin);
    sizes[d] -= std::max<int64_t>(0, -begin) + std::max<int64_t>(0, -end);
    if (sizes[d] <= 0)
      return n.error("the pads remove every element of dimension " + Twine(d));
    low.push_back(std::max<int64_t>(0, begin));
    high.push_back(std::max<int64_t>(0, end));
    if (mode == "reflect" && std::max(low.back(), high.back()) >= sizes[d])
      return n.error(
          "reflect padding of " + Twine(std::max(low.back(), high.back())) +
          " along dimension " + Twine(d) + " of size " + Twine(sizes[d]));
  }
  Value input = n.input(0);
  if (sizes != type.getShape())
    input = tensor::ExtractSliceOp::create(
        b, loc, input, getAsIndexOpFoldResult(b.getContext(), offsets),
        getAsIndexOpFoldResult(b.getContext(), sizes),
        getAsIndexOpFoldResult(b.getContext(), SmallVector<int64_t>(rank, 1)));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(sizes[d] + low[d] + high[d]);
  Type element = type.getElementType();
  auto resultType = RankedTensorType::get(shape, element);
  if (shape == sizes) {
    n.setOutput(0, input);
    return success();
  }
  if (mode == "constant") {
    Value value;
    if (n.getOpset() < 11) {
      value = createScalar(b, loc, element, n.floatAttr("value", 0));
    } else if (n.hasInput(2)) {
      RankedTensorType valueType = n.inputType(2);
      if (!valueType || valueType.getNumElements() != 1 ||
          valueType.getElementType() != element)
        return n.error("the constant value must be one element of the "
                       "input's type");
      SmallVector<Value> zeros(valueType.getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
      value = tensor::ExtractOp::create(b, loc, n.input(2), zeros);
    } else {
      value = createScalar(b, loc, element, 0);
    }
    n.setOutput(0, tensor::PadOp::create(
                       b, loc, resultType, input,
                       getAsIndexOpFoldResult(b.getContext(), low),
                       getAsIndexOpFoldResult(b.getContext(), high), value));
    return success();
  }
  // Edge and reflect read the input at a computed index.
  Value init = createEmpty(b, loc, shape, element);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{}, init,
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          Value index = arith::SubIOp::create(
              nb, l, linalg::IndexOp::create(nb, l, d),
              arith::ConstantIndexOp::create(nb, l, low[d]));
          coords.push_back(padSource(nb, l, mode, index, sizes[d]));
        }
        linalg::YieldOp::create(
            nb, l, ValueRange{tensor::ExtractOp::create(nb, l, input, coords)});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// Repeats the input along each dimension: a broadcast to [r0, d0, r1,
/// d1, ...] (each dimension after its repeat count) collapsed to [r0 d0,
/// r1 d1, ...], ops whose SBP and gradient rules exist.
LogicalResult convertTile(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  std::optional<SmallVector<int64_t>> repeats = n.intsInput(1);
  if (!type || !repeats ||
      static_cast<int64_t>(repeats->size()) != type.getRank())
    return n.error("the repeats must be known at import time, one per "
                   "dimension");
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 1; }))
    return n.error("the repeats must be positive");
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  SmallVector<int64_t> interleaved, spread, tiled;
  for (auto [size, repeat] : llvm::zip(type.getShape(), *repeats)) {
    llvm::append_range(interleaved, ArrayRef<int64_t>{1, size});
    llvm::append_range(spread, ArrayRef<int64_t>{repeat, size});
    tiled.push_back(repeat * size);
  }
  Value input = buildReshape(b, loc, n.input(0), interleaved);
  Value broadcast = buildElementwise(
      b, loc, {input}, type.getElementType(),
      [](OpBuilder &, Location, ValueRange a) { return a[0]; },
      ArrayRef<int64_t>(spread));
  n.setOutput(0, buildReshape(b, loc, broadcast, tiled));
  return success();
}

/// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape.
LogicalResult convertDepthSpace(NodeImporter &n, bool toSpace) {
  RankedTensorType type = n.inputType(0);
  int64_t block = n.intAttr("blocksize", 0);
  if (!type || type.getRank() != 4 || block < 1)
    return n.error("needs an input [N, C, H, W] and a positive blocksize");
  int64_t batch = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  SmallVector<int64_t> split, perm, shape;
  if (toSpace) {
    if (c % (block * block))
      return n.error("the channels do not divide by blocksize^2");
    int64_t depth = c / (block * block);
    // DCR: depth after the block's rows and columns; CRD: before them.
    if (n.stringAttr("mode", "DCR") == "CRD") {
      split = {batch, depth, block, block, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      split = {batch, block, block, depth, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
    shape = {batch, depth, h * block, w * block};
  } else {
    if (h % block || w % block)
      return n.error("the height and width do not divide by blocksize");
    split = {batch, c, h / block, block, w / block, block};
    perm = {0, 3, 5, 1, 2, 4};
    shape = {batch, c * block * block, h / block, w / block};
  }
  Value moved =
      transpose(b, loc, buildReshape(b, loc, n.input(0), split), perm);
  n.setOutput(0, buildReshape(b, loc, moved, shape));
  return success();
}

LogicalResult convertSize(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  n.setConstantOutput(
      0, intsAttr({}, n.builder().getI64Type(), {type.getNumElements()}));
  return success();
}

/// A 2-d tensor of the input's shape, one on the diagonal shifted by k.
LogicalResult convertEyeLike(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || type.getRank() != 2)
    return n.error("needs a 2-d input");
  Type element = type.getElementType();
  if (n.hasAttr("dtype")) {
    element = getElementType(n.builder().getContext(), n.intAttr("dtype", 0));
    if (!element)
      return n.error("dtype " + Twine(n.intAttr("dtype", 0)) +
                     " is not supported");
  }
  int64_t k = n.intAttr("k", 0);
  OpBuilder &b = n.builder();
  Value init = createEmpty(b, n.getLoc(), type.getShape(), element);
  auto generic = linalg::GenericOp::create(
      b, n.getLoc(), init.getType(), ValueRange{}, init,
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(2)},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        Value column =
            arith::SubIOp::create(nb, l, linalg::IndexOp::create(nb, l, 1),
                                  arith::ConstantIndexOp::create(nb, l, k));
        Value diagonal =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                  linalg::IndexOp::create(nb, l, 0), column);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(
                nb, l, diagonal, createScalar(nb, l, element, 1),
                createScalar(nb, l, element, 0))});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// values[1] where the index (negative from the end of depth) names the
/// position along `axis`, values[0] elsewhere.
LogicalResult convertOneHot(NodeImporter &n) {
  RankedTensorType indices = n.inputType(0), values = n.inputType(2);
  // The depth may be of any numeric type.
  std::optional<SmallVector<int64_t>> depth = n.intsInput(1);
  RankedTensorType depthType = n.inputType(1);
  if (!depth && depthType && isFloat(depthType.getElementType()) &&
      depthType.getNumElements() == 1)
    if (DenseElementsAttr value = n.constantInput(1))
      depth = SmallVector<int64_t>{static_cast<int64_t>(
          (*value.getValues<APFloat>().begin()).convertToDouble())};
  if (!indices || !values || values.getNumElements() != 2)
    return n.error("needs indices, a depth and two values");
  if (!depth || depth->size() != 1 || (*depth)[0] < 1)
    return n.error("the depth must be a positive number known at import "
                   "time");
  int64_t rank = indices.getRank() + 1;
  std::optional<int64_t> axis = normalizeAxis(n.intAttr("axis", -1), rank);
  if (!axis)
    return n.error("axis out of range");
  SmallVector<int64_t> shape(indices.getShape());
  shape.insert(shape.begin() + *axis, (*depth)[0]);
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  Type element = values.getElementType();
  Value flatValues = buildReshape(b, loc, n.input(2), {2});
  SmallVector<AffineExpr> indexExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      indexExprs.push_back(b.getAffineDimExpr(d));
  Value init = createEmpty(b, loc, shape, element);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), n.input(0), init,
      SmallVector<AffineMap>{
          AffineMap::get(rank, 0, indexExprs, b.getContext()),
          b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value index = castScalar(nb, l, args[0], nb.getI64Type());
        Value size = arith::ConstantIntOp::create(nb, l, (*depth)[0], 64);
        Value zero = arith::ConstantIntOp::create(nb, l, 0, 64);
        index = arith::SelectOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, index,
                                  zero),
            arith::AddIOp::create(nb, l, index, size), index);
        Value position = arith::IndexCastOp::create(
            nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, *axis));
        Value hot = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                          index, position);
        Value which = arith::SelectOp::create(
            nb, l, hot, arith::ConstantIndexOp::create(nb, l, 1),
            arith::ConstantIndexOp::create(nb, l, 0));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{tensor::ExtractOp::create(nb, l, flatValues, which)});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// A scatter as a generic over the data (its loops parallel) that reduces
/// over the updates' positions (`updateLoops` more loops): where `match`
/// holds for an update, the element becomes the update (reduction none) or
/// the update combined with it (add, mul), the last update winning; an
/// add or mul is then a plain reduction (unmaskReductions).
LogicalResult
buildScatter(NodeImporter &n, unsigned updateLoops,
             ArrayRef<AffineMap> inputMaps,
             function_ref<Value(OpBuilder &, Location, ValueRange)> match) {
  RankedTensorType data = n.inputType(0);
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return n.error("reduction '" + reduction + "' is not supported");
  int64_t rank = data.getRank();
  OpBuilder &b = n.builder();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimMapWithTargets(
      rank + updateLoops, llvm::to_vector(llvm::seq<unsigned>(0, rank)),
      b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(updateLoops, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, n.getLoc(), data, ValueRange{n.input(2), n.input(1)}, n.input(0), maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value update = args[0], out = args[2];
        if (reduction == "add")
          update = createAdd(nb, l, out, update);
        else if (reduction == "mul")
          update = createMul(nb, l, out, update);
        linalg::YieldOp::create(nb, l,
                                ValueRange{arith::SelectOp::create(
                                    nb, l, match(nb, l, args), update, out)});
      });
  unmaskReductions(generic);
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// ScatterElements (and Scatter before it): updates[p] goes to the data at
/// p with its `axis` coordinate replaced by indices[p]. A dimension the
/// indices span whole shares the data's loop; others get a loop of their
/// own, matched against the data's.
LogicalResult convertScatterElements(NodeImporter &n) {
  RankedTensorType data = n.inputType(0), indices = n.inputType(1),
                   updates = n.inputType(2);
  if (!data || !indices || !updates || !indices.getElementType().isInteger() ||
      indices.getShape() != updates.getShape() ||
      indices.getRank() != data.getRank() ||
      updates.getElementType() != data.getElementType())
    return n.error("needs data, integer indices of its rank and updates of "
                   "the indices' shape");
  int64_t rank = data.getRank();
  std::optional<int64_t> axis = normalizeAxis(n.intAttr("axis", 0), rank);
  if (!axis)
    return n.error("axis out of range");
  SmallVector<AffineExpr> exprs;
  SmallVector<int64_t> ownLoops; // data dims whose index loop is separate
  unsigned loops = rank;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != *axis && indices.getDimSize(d) == data.getDimSize(d)) {
      exprs.push_back(getAffineDimExpr(d, n.builder().getContext()));
      continue;
    }
    if (d != *axis && indices.getDimSize(d) > data.getDimSize(d))
      return n.error("the indices are larger than the data along dimension " +
                     Twine(d));
    ownLoops.push_back(d);
    exprs.push_back(getAffineDimExpr(loops++, n.builder().getContext()));
  }
  AffineMap map = AffineMap::get(loops, 0, exprs, n.builder().getContext());
  int64_t size = data.getDimSize(*axis);
  return buildScatter(
      n, loops - rank, {map, map},
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value match = arith::ConstantIntOp::create(b, loc, 1, 1);
        for (auto [k, d] : llvm::enumerate(ownLoops)) {
          Value position =
              d == *axis ? wrapIndex(b, loc, args[1], size)
                         : Value(linalg::IndexOp::create(b, loc, rank + k));
          match = arith::AndIOp::create(
              b, loc, match,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, position,
                                    linalg::IndexOp::create(b, loc, d)));
        }
        return match;
      });
}

/// ScatterND: updates[i..., rest...] goes to the data at
/// [indices[i..., 0..k), rest...].
LogicalResult convertScatterND(NodeImporter &n) {
  RankedTensorType data = n.inputType(0), indices = n.inputType(1),
                   updates = n.inputType(2);
  if (!data || !indices || !updates || !indices.getElementType().isInteger() ||
      indices.getRank() < 1 ||
      updates.getElementType() != data.getElementType())
    return n.error("needs data, integer indices and updates");
  int64_t rank = data.getRank(), k = indices.getShape().back();
  int64_t batch = indices.getRank() - 1;
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (k < 1 || k > rank || updates.getShape() != ArrayRef(expected))
    return n.error("the updates must have shape indices.shape[:-1] + "
                   "data.shape[indices.shape[-1]:]");
  MLIRContext *ctx = n.builder().getContext();
  unsigned loops = rank + batch;
  SmallVector<AffineExpr> updateExprs, indexExprs;
  for (int64_t i = 0; i < batch; ++i)
    updateExprs.push_back(getAffineDimExpr(rank + i, ctx));
  indexExprs = updateExprs;
  for (int64_t d = k; d < rank; ++d)
    updateExprs.push_back(getAffineDimExpr(d, ctx));
  // One loop over the index vector would read it whole per update; its k
  // components are read at constants instead, from a slice each.
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, updateExprs, ctx)};
  indexExprs.push_back(getAffineConstantExpr(0, ctx));
  maps.push_back(AffineMap::get(loops, 0, indexExprs, ctx));
  Value indexTensor = n.input(1);
  return buildScatter(
      n, batch, maps,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value match = arith::ConstantIntOp::create(b, loc, 1, 1);
        for (int64_t c = 0; c < k; ++c) {
          SmallVector<Value> coords;
          for (int64_t i = 0; i < batch; ++i)
            coords.push_back(linalg::IndexOp::create(b, loc, rank + i));
          coords.push_back(arith::ConstantIndexOp::create(b, loc, c));
          Value component = c == 0 ? args[1]
                                   : Value(tensor::ExtractOp::create(
                                         b, loc, indexTensor, coords));
          match = arith::AndIOp::create(
              b, loc, match,
              arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq,
                  wrapIndex(b, loc, component, data.getDimSize(c)),
                  linalg::IndexOp::create(b, loc, c)));
        }
        return match;
      });
}

/// GatherND: out[b..., i..., rest...] = data[b..., indices[b..., i...],
/// rest...] (b the batch_dims leading dimensions both share), a generic
/// over the result reading the data at the computed position.
LogicalResult convertGatherND(NodeImporter &n) {
  RankedTensorType data = n.inputType(0), indices = n.inputType(1);
  if (!data || !indices || !indices.getElementType().isInteger() ||
      indices.getRank() < 1)
    return n.error("needs data and integer indices");
  int64_t shared = n.intAttr("batch_dims", 0);
  int64_t k = indices.getShape().back(), batch = indices.getRank() - 1;
  if (shared < 0 || shared >= indices.getRank() || shared >= data.getRank() ||
      indices.getShape().take_front(shared) !=
          data.getShape().take_front(shared))
    return n.error("batch_dims must name leading dimensions the data and "
                   "the indices share");
  if (k < 1 || shared + k > data.getRank())
    return n.error("the index vectors are longer than the data's rank");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(shared + k));
  int64_t rank = shape.size();
  OpBuilder &b = n.builder();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> indexExprs;
  for (int64_t i = 0; i < batch; ++i)
    indexExprs.push_back(getAffineDimExpr(i, ctx));
  indexExprs.push_back(getAffineConstantExpr(0, ctx));
  Value table = n.input(0), indexTensor = n.input(1);
  Value init = createEmpty(b, n.getLoc(), shape, data.getElementType());
  auto generic = linalg::GenericOp::create(
      b, n.getLoc(), init.getType(), indexTensor, init,
      SmallVector<AffineMap>{AffineMap::get(rank, 0, indexExprs, ctx),
                             b.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < shared; ++d)
          coords.push_back(linalg::IndexOp::create(nb, l, d));
        for (int64_t c = 0; c < k; ++c) {
          Value component = args[0];
          if (c > 0) {
            SmallVector<Value> at;
            for (int64_t i = 0; i < batch; ++i)
              at.push_back(linalg::IndexOp::create(nb, l, i));
            at.push_back(arith::ConstantIndexOp::create(nb, l, c));
            component = tensor::ExtractOp::create(nb, l, indexTensor, at);
          }
          coords.push_back(
              wrapIndex(nb, l, component, data.getDimSize(shared + c)));
        }
        for (int64_t d = batch; d < rank; ++d)
          coords.push_back(linalg::IndexOp::create(nb, l, d));
        linalg::YieldOp::create(
            nb, l, ValueRange{tensor::ExtractOp::create(nb, l, table, coords)});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

LogicalResult convertExpand(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  std::optional<SmallVector<int64_t>> target = n.intsInput(1);
  if (!type || !target)
    return n.error("the shape must be known at import time");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({type.getShape(), *target});
  if (failed(shape))
    return n.error("the shape does not broadcast with the input");
  n.setOutput(0,
              buildElementwise(
                  n.builder(), n.getLoc(), {n.input(0)}, type.getElementType(),
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; },
                  ArrayRef<int64_t>(*shape)));
  return success();
}

LogicalResult convertShape(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  int64_t rank = type.getRank();
  int64_t start = n.intAttr("start", 0), end = n.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(type.getDimSize(d));
  n.setConstantOutput(0, intsAttr({static_cast<int64_t>(dims.size())},
                                  n.builder().getI64Type(), dims));
  return success();
}

LogicalResult convertConstant(NodeImporter &n) {
  MLIRContext *ctx = n.builder().getContext();
  Builder b(ctx);
  if (const onnx::AttributeProto *value = n.attr("value")) {
    std::string error;
    DenseElementsAttr attr = getTensorAttr(ctx, value->t(), error);
    if (!attr)
      return n.error(error);
    n.setConstantOutput(0, attr, /*isWeight=*/true);
    return success();
  }
  if (const onnx::AttributeProto *value = n.attr("value_float")) {
    n.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                  value->f()));
    return success();
  }
  if (auto floats = n.floatsAttr("value_floats")) {
    n.setConstantOutput(
        0,
        DenseElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(floats->size())},
                                  b.getF32Type()),
            ArrayRef<float>(*floats)),
        /*isWeight=*/true);
    return success();
  }
  if (const onnx::AttributeProto *value = n.attr("value_int")) {
    n.setConstantOutput(0, intsAttr({}, b.getI64Type(), {value->i()}));
    return success();
  }
  if (auto ints = n.intsAttr("value_ints")) {
    n.setConstantOutput(0, intsAttr({static_cast<int64_t>(ints->size())},
                                    b.getI64Type(), *ints));
    return success();
  }
  return n.error("only dense tensor, float and int values are supported");
}

LogicalResult convertConstantOfShape(NodeImporter &n) {
  std::optional<SmallVector<int64_t>> shape = n.intsInput(0);
  if (!shape)
    return n.error("the shape must be known at import time");
  MLIRContext *ctx = n.builder().getContext();
  DenseElementsAttr value = DenseElementsAttr::get(
      RankedTensorType::get({1}, Float32Type::get(ctx)), 0.0f);
  if (const onnx::AttributeProto *attr = n.attr("value")) {
    std::string error;
    value = getTensorAttr(ctx, attr->t(), error);
    if (!value || value.getNumElements() != 1)
      return n.error("the value must be one element: " + error);
  }
  auto type = RankedTensorType::get(*shape, value.getElementType());
  n.setConstantOutput(
      0, DenseElementsAttr::get(type, value.getSplatValue<Attribute>()));
  return success();
}

LogicalResult convertRange(NodeImporter &n) {
  DenseElementsAttr start = n.constantInput(0), limit = n.constantInput(1),
                    delta = n.constantInput(2);
  if (!start || !limit || !delta)
    return n.error("start, limit and delta must be known at import time");
  Type element = start.getElementType();
  auto read = [](DenseElementsAttr attr) {
    Attribute value = attr.getSplatValue<Attribute>();
    if (auto f = dyn_cast<FloatAttr>(value))
      return f.getValueAsDouble();
    return static_cast<double>(cast<IntegerAttr>(value).getInt());
  };
  double s = read(start), l = read(limit), d = read(delta);
  if (d == 0)
    return n.error("delta is zero");
  int64_t count = std::max<int64_t>(0, std::ceil((l - s) / d));
  auto type = RankedTensorType::get({count}, element);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i) {
    double v = s + i * d;
    values.push_back(
        isa<FloatType>(element)
            ? Attribute(FloatAttr::get(element, v))
            : Attribute(IntegerAttr::get(element, static_cast<int64_t>(v))));
  }
  n.setConstantOutput(0, DenseElementsAttr::get(type, values));
  return success();
}

LogicalResult convertIdentity(NodeImporter &n) {
  if (DenseElementsAttr constant = n.constantInput(0)) {
    n.setConstantOutput(0, constant);
    return success();
  }
  if (!n.input(0))
    return n.error("input 0 is missing");
  n.setOutput(0, n.input(0));
  return success();
}

/// Trilu: the upper (or lower) triangle of the last two dimensions from
/// diagonal `k`, the rest zero: one generic comparing its last two loops'
/// indices.
LogicalResult convertTrilu(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || type.getRank() < 2)
    return n.error("input 0 must be a tensor of rank 2 or more");
  int64_t k = 0;
  if (n.hasInput(1)) {
    std::optional<SmallVector<int64_t>> diagonal = n.intsInput(1);
    if (!diagonal || diagonal->size() != 1)
      return n.error("k must be one integer known at import time");
    k = diagonal->front();
  }
  bool upper = n.intAttr("upper", 1) != 0;
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  int64_t rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Type element = type.getElementType();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{n.input(0)},
      ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(), element)},
      SmallVector<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        // Kept where j - i >= k (upper) or j - i <= k (lower).
        Value row = linalg::IndexOp::create(nb, l, rank - 2);
        Value column = linalg::IndexOp::create(nb, l, rank - 1);
        Value offset = arith::SubIOp::create(nb, l, column, row);
        Value keep = arith::CmpIOp::create(
            nb, l,
            upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            offset, arith::ConstantIndexOp::create(nb, l, k));
        Value zero = arith::ConstantOp::create(nb, l, nb.getZeroAttr(element));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, keep, args[0], zero)});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// CumSum along `axis`: out[.., i, ..] = sum of x[.., j, ..] over j <= i
/// (j < i when exclusive; j >= i, j > i when reversed), as one generic
/// whose extra reduction loop j reads the input; its payload compares the
/// two loops' indices.
LogicalResult convertCumSum(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type || type.getRank() == 0)
    return n.error("input 0 must be a tensor of rank 1 or more");
  std::optional<SmallVector<int64_t>> axisInput = n.intsInput(1);
  if (!axisInput || axisInput->size() != 1)
    return n.error("the axis must be one integer known at import time");
  int64_t rank = type.getRank();
  std::optional<int64_t> axis = normalizeAxis(axisInput->front(), rank);
  if (!axis)
    return n.error("axis " + Twine(axisInput->front()) + " is out of range");
  bool exclusive = n.intAttr("exclusive", 0) != 0;
  bool reverse = n.intAttr("reverse", 0) != 0;
  OpBuilder &b = n.builder();
  Location loc = n.getLoc();
  MLIRContext *ctx = b.getContext();
  // Loops: the output's, then j.
  SmallVector<AffineExpr> inputExprs;
  for (int64_t d = 0; d < rank; ++d)
    inputExprs.push_back(getAffineDimExpr(d == *axis ? rank : d, ctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, inputExprs, ctx),
      AffineMap::getMultiDimMapWithTargets(
          rank + 1, llvm::to_vector(llvm::seq<unsigned>(0, rank)), ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Type element = type.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value init =
      linalg::FillOp::create(
          b, loc, zero,
          ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(), element)})
          .getResult(0);
  arith::CmpIPredicate predicate =
      reverse
          ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
          : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{n.input(0)}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value i = linalg::IndexOp::create(nb, l, *axis);
        Value j = linalg::IndexOp::create(nb, l, rank);
        Value taken = arith::CmpIOp::create(nb, l, predicate, j, i);
        Value term = arith::SelectOp::create(
            nb, l, taken, args[0],
            arith::ConstantOp::create(nb, l, nb.getZeroAttr(element)));
        Value sum = isa<FloatType>(element)
                        ? Value(arith::AddFOp::create(nb, l, args[1], term))
                        : Value(arith::AddIOp::create(nb, l, args[1], term));
        linalg::YieldOp::create(nb, l, ValueRange{sum});
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

/// Dropout at inference: the data passes unchanged and the mask is all
/// true. Training-mode dropout (random) is not imported unless its ratio
/// is 0.
LogicalResult convertDropout(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  if (!type)
    return n.error("input 0 is missing or not a tensor");
  // Opsets before 12 flag training with the `is_test = 0` attribute (6) or
  // not at all; from 12 on, with the optional input `training_mode`.
  bool training = n.getOpset() < 7 && n.intAttr("is_test", 0) == 0;
  if (n.hasInput(2)) {
    DenseElementsAttr mode = n.constantInput(2);
    if (!mode)
      return n.error("training_mode must be known at import time");
    training = mode.getSplatValue<bool>();
  }
  // A ratio of 0 drops nothing, in training too.
  if (training && n.hasInput(1)) {
    DenseElementsAttr ratio = n.constantInput(1);
    training = !ratio || !isa<FloatType>(ratio.getElementType()) ||
               !ratio.isSplat() || !ratio.getSplatValue<APFloat>().isZero();
  }
  if (training)
    return n.error("training-mode dropout (random) is not imported; export "
                   "the model for inference");
  n.setOutput(0, n.input(0));
  if (n.hasOutput(1)) {
    auto maskType =
        RankedTensorType::get(type.getShape(), n.builder().getI1Type());
    n.setConstantOutput(1, DenseElementsAttr::get(maskType, true));
  }
  return success();
}

} // namespace

void onnx_import::addShapeConverters(ConverterTable &table) {
  table["Reshape"] = convertReshape;
  table["Flatten"] = convertFlatten;
  table["Squeeze"] = convertSqueeze;
  table["Unsqueeze"] = convertUnsqueeze;
  table["Transpose"] = convertTranspose;
  table["Concat"] = convertConcat;
  table["Split"] = convertSplit;
  table["Slice"] = convertSlice;
  table["Gather"] = convertGather;
  table["GatherElements"] = convertGatherElements;
  table["Expand"] = convertExpand;
  table["Pad"] = convertPad;
  table["Tile"] = convertTile;
  table["DepthToSpace"] = [](NodeImporter &n) {
    return convertDepthSpace(n, /*toSpace=*/true);
  };
  table["SpaceToDepth"] = [](NodeImporter &n) {
    return convertDepthSpace(n, /*toSpace=*/false);
  };
  table["Size"] = convertSize;
  table["EyeLike"] = convertEyeLike;
  table["OneHot"] = convertOneHot;
  table["ScatterElements"] = convertScatterElements;
  table["Scatter"] = convertScatterElements;
  table["ScatterND"] = convertScatterND;
  table["GatherND"] = convertGatherND;
  table["Shape"] = convertShape;
  table["Constant"] = convertConstant;
  table["ConstantOfShape"] = convertConstantOfShape;
  table["Range"] = convertRange;
  table["Identity"] = convertIdentity;
  table["Dropout"] = convertDropout;
  table["Trilu"] = convertTrilu;
  table["CumSum"] = convertCumSum;
}
