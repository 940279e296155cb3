//===- TensorSignatures.cpp - SBP rules for tensor ops --------------------===//
//
// Shape ops move data without computing on it, so partial values pass
// through them unchanged (of every kind) and splits follow a dimension from
// operand to result where every device can do its part locally.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "sbp/Dialect/Sbp/Extensions/Signatures.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

constexpr ReductionKind kAllKinds[] = {ReductionKind::Sum, ReductionKind::Max,
                                       ReductionKind::Min};

/// The all-`B` signature, then the given splits, then partials of every
/// kind passing through.
SmallVector<SbpSignature>
withBroadcastAndPartials(Operation *op, SmallVector<SbpSignature> splits) {
  SmallVector<SbpSignature> signatures;
  signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
  for (SbpSignature &signature : splits)
    addSignature(signatures, std::move(signature));
  for (ReductionKind kind : kAllKinds)
    addSignature(signatures, getUniformSignature(op, SbpEntry::partial(kind)));
  return signatures;
}

/// `tensor.empty` has no defined contents: any distribution is free.
struct EmptySignatureModel
    : public SbpSignatureOpInterface::ExternalModel<EmptySignatureModel,
                                                    tensor::EmptyOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    return getSourceSignatures(op, /*zeros=*/true);
  }
};

/// The dimension of a reassociation group that a split of the group's
/// collapsed dimension corresponds to: its outermost non-unit dimension.
int64_t getLeadingDim(ArrayRef<int64_t> shape,
                      const ReassociationIndices &group) {
  for (int64_t dim : group)
    if (shape[dim] != 1)
      return dim;
  return group.front();
}

/// Whether the split of the expanded dimension `dim` corresponds to the split
/// of its group's collapsed dimension only when it is even (it is the
/// leading dimension of a group with other non-unit dimensions).
bool needsEvenSplit(ArrayRef<int64_t> shape,
                    ArrayRef<ReassociationIndices> groups, int64_t dim) {
  for (const ReassociationIndices &group : groups) {
    if (!llvm::is_contained(group, dim))
      continue;
    return llvm::count_if(group, [&](int64_t d) { return shape[d] != 1; }) > 1;
  }
  return false;
}

/// expand_shape and collapse_shape: a split of a collapsed dimension is a
/// split of the leading dimension of its group; the pieces agree only when
/// that dimension divides evenly.
template <typename OpTy>
struct ReshapeSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<ReshapeSignatureModel<OpTy>,
                                                    OpTy> {
  static constexpr bool kExpands = std::is_same_v<OpTy, tensor::ExpandShapeOp>;

  static RankedTensorType getExpandedType(OpTy op) {
    if constexpr (kExpands)
      return op.getResultType();
    else
      return op.getSrcType();
  }

  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto reshape = cast<OpTy>(op);
    ArrayRef<int64_t> expanded = getExpandedType(reshape).getShape();
    SmallVector<SbpSignature> splits;
    for (auto [collapsedDim, group] :
         llvm::enumerate(reshape.getReassociationIndices())) {
      int64_t expandedDim = getLeadingDim(expanded, group);
      SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
      SbpEntry src = SbpEntry::split(kExpands ? collapsedDim : expandedDim);
      SbpEntry dst = SbpEntry::split(kExpands ? expandedDim : collapsedDim);
      signature.operands[0] = src;
      signature.results[0] = dst;
      splits.push_back(std::move(signature));
    }
    return withBroadcastAndPartials(op, std::move(splits));
  }

  bool isValidNdSbpSignature(Operation *op, const NdSbpSignature &signature,
                             ArrayRef<int64_t> meshShape) const {
    if (!sbp::detail::isValidNdSbpSignature(op, signature, meshShape))
      return false;
    auto reshape = cast<OpTy>(op);
    ArrayRef<int64_t> expanded = getExpandedType(reshape).getShape();
    NdSbpAttr sharding =
        kExpands ? signature.results[0] : signature.operands[0];
    SmallVector<ReassociationIndices> groups =
        reshape.getReassociationIndices();
    for (auto [axis, entry] : llvm::enumerate(sharding.getEntries())) {
      if (!entry.isSplit() || !needsEvenSplit(expanded, groups, entry.getDim()))
        continue;
      int64_t pieces = 1;
      for (int64_t splitAxis : sharding.getSplitAxes(entry.getDim()))
        pieces *= meshShape[splitAxis];
      int64_t size = expanded[entry.getDim()];
      if (ShapedType::isDynamic(size) || size % pieces != 0)
        return false;
    }
    return true;
  }
};

/// Whether slice dimension `dim` covers the whole of a dimension of size
/// `size`: offset 0, stride 1 and the full size, all static.
bool coversWholeDim(OffsetSizeAndStrideOpInterface slice, unsigned dim,
                    int64_t size) {
  return !ShapedType::isDynamic(size) && slice.isDynamicOffset(dim) == false &&
         slice.getStaticOffset(dim) == 0 && !slice.isDynamicSize(dim) &&
         slice.getStaticSize(dim) == size && !slice.isDynamicStride(dim) &&
         slice.getStaticStride(dim) == 1;
}

/// Splits of the dimensions of `full` that the slice covers whole, paired
/// with the position of that dimension in the (possibly rank-reduced)
/// `sliced` tensor.
SmallVector<std::pair<int64_t, int64_t>>
getWholeDims(OffsetSizeAndStrideOpInterface slice, RankedTensorType full,
             const llvm::SmallBitVector &dropped) {
  SmallVector<std::pair<int64_t, int64_t>> dims;
  int64_t slicedDim = 0;
  for (int64_t dim = 0, rank = full.getRank(); dim < rank; ++dim) {
    if (dropped.test(dim))
      continue;
    if (coversWholeDim(slice, dim, full.getDimSize(dim)))
      dims.emplace_back(dim, slicedDim);
    ++slicedDim;
  }
  return dims;
}

/// extract_slice: the source and result split along a dimension that is not
/// sliced.
struct ExtractSliceSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<ExtractSliceSignatureModel,
                                                    tensor::ExtractSliceOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    SmallVector<SbpSignature> splits;
    for (auto [dim, resultDim] :
         getWholeDims(slice, slice.getSourceType(), slice.getDroppedDims())) {
      SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
      signature.operands[0] = SbpEntry::split(dim);
      signature.results[0] = SbpEntry::split(resultDim);
      splits.push_back(std::move(signature));
    }
    return withBroadcastAndPartials(op, std::move(splits));
  }
};

/// insert_slice: source, destination and result split along a destination
/// dimension that the slice covers whole.
struct InsertSliceSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<InsertSliceSignatureModel,
                                                    tensor::InsertSliceOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto slice = cast<tensor::InsertSliceOp>(op);
    SmallVector<SbpSignature> splits;
    for (auto [dim, sourceDim] :
         getWholeDims(slice, slice.getDestType(), slice.getDroppedDims())) {
      SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
      signature.operands[0] = SbpEntry::split(sourceDim);
      signature.operands[1] = SbpEntry::split(dim);
      signature.results[0] = SbpEntry::split(dim);
      splits.push_back(std::move(signature));
    }
    return withBroadcastAndPartials(op, std::move(splits));
  }
};

/// concat: every operand and the result split along any dimension other
/// than the concatenated one.
struct ConcatSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<ConcatSignatureModel,
                                                    tensor::ConcatOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto concat = cast<tensor::ConcatOp>(op);
    SmallVector<SbpSignature> splits;
    for (int64_t dim = 0, rank = concat.getResultType().getRank(); dim < rank;
         ++dim)
      if (dim != static_cast<int64_t>(concat.getDim()))
        splits.push_back(getUniformSignature(op, SbpEntry::split(dim)));
    return withBroadcastAndPartials(op, std::move(splits));
  }
};

/// pad: source and result split along a dimension that is not padded. The
/// same padding value on every device passes a max or min partial through,
/// and a zero one a sum.
struct PadSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<PadSignatureModel,
                                                    tensor::PadOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto pad = cast<tensor::PadOp>(op);
    SmallVector<SbpSignature> signatures;
    signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
    auto isZero = [](OpFoldResult size) { return isConstantIntValue(size, 0); };
    SmallVector<OpFoldResult> low = pad.getMixedLowPad(),
                              high = pad.getMixedHighPad();
    for (int64_t dim = 0, rank = pad.getResultType().getRank(); dim < rank;
         ++dim)
      if (isZero(low[dim]) && isZero(high[dim]))
        addSignature(signatures, getUniformSignature(op, SbpEntry::split(dim)));
    Value value = pad.getConstantPaddingValue();
    if (!value)
      return signatures;
    addSignature(signatures, getUniformSignature(
                                 op, SbpEntry::partial(ReductionKind::Max)));
    addSignature(signatures, getUniformSignature(
                                 op, SbpEntry::partial(ReductionKind::Min)));
    if (matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero()))
      addSignature(signatures, getUniformSignature(
                                   op, SbpEntry::partial(ReductionKind::Sum)));
    return signatures;
  }
};

} // namespace

void sbp::registerTensorSignatureModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<EmptySignatureModel>(*ctx);
    tensor::ExpandShapeOp::attachInterface<
        ReshapeSignatureModel<tensor::ExpandShapeOp>>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        ReshapeSignatureModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceSignatureModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceSignatureModel>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatSignatureModel>(*ctx);
    tensor::PadOp::attachInterface<PadSignatureModel>(*ctx);
  });
}
