//===- BoxingPlan.cpp - Converting between nd-SBP layouts -----------------===//

#include "sbp/Dialect/Sbp/Utils/BoxingPlan.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Elements of the piece held under `entries` with `axis` treated as `B`:
/// the tensor a step over `axis` works on. Uneven pieces count at their
/// largest; dynamic sizes count as 1.
double getGroupElements(ArrayRef<int64_t> shape, ArrayRef<SbpEntry> entries,
                        ArrayRef<int64_t> meshShape, int64_t axis) {
  SmallVector<SbpEntry> others(entries);
  others[axis] = SbpEntry::broadcast();
  SmallVector<int64_t> first(meshShape.size(), 0);
  double elements = 1;
  for (int64_t size : getLocalShape(shape, others, meshShape, first))
    elements *= ShapedType::isDynamic(size) ? 1 : size;
  return elements;
}

/// Whether `axis` is the last mesh axis in `entries` that splits `dim`:
/// only then are its pieces contiguous within the group's tensor.
bool isInnermostSplit(ArrayRef<SbpEntry> entries, int64_t axis, int64_t dim) {
  for (int64_t a = axis + 1, e = entries.size(); a < e; ++a)
    if (entries[a].isSplit() && entries[a].getDim() == dim)
      return false;
  return true;
}

/// The step that changes `axis` of `cur` to `to`, or failure when it cannot
/// be done as one local or collective operation from this state.
FailureOr<BoxingStep> makeStep(ArrayRef<SbpEntry> cur, int64_t axis,
                               SbpEntry to, ArrayRef<int64_t> shape,
                               int64_t elementBytes,
                               ArrayRef<int64_t> meshShape) {
  SbpEntry from = cur[axis];
  if (from.isSplit() && !isInnermostSplit(cur, axis, from.getDim()))
    return failure();
  if (to.isSplit() && !isInnermostSplit(cur, axis, to.getDim()))
    return failure();
  double p = meshShape[axis];
  double t = getGroupElements(shape, cur, meshShape, axis) * elementBytes;
  BoxingStep step{axis, from, to, BoxingKind::Relabel, 0};
  if (from.isPartial()) {
    if (to.isBroadcast()) {
      step.kind = BoxingKind::AllReduce;
      step.bytes = 2 * (p - 1) / p * t;
    } else if (to.isSplit()) {
      step.kind = BoxingKind::ReduceScatter;
      step.bytes = (p - 1) / p * t;
    } else {
      return failure(); // P(a) -> P(b) goes through B.
    }
  } else if (from.isSplit()) {
    if (to.isBroadcast()) {
      step.kind = BoxingKind::AllGather;
      step.bytes = (p - 1) / p * t;
    } else if (to.isSplit()) {
      step.kind = BoxingKind::AllToAll;
      step.bytes = (p - 1) / (p * p) * t;
    } else {
      step.kind = BoxingKind::PadWithNeutral;
    }
  } else {
    if (to.isSplit())
      step.kind = BoxingKind::Slice;
    else if (to.isPartial() && to.getReduction() == ReductionKind::Sum)
      step.kind = BoxingKind::KeepOnFirst;
    else
      step.kind = BoxingKind::Relabel;
  }
  return step;
}

/// Applies the steps converting the axes of `order`, in that order; failure
/// when one of them is not valid from the state it starts in.
FailureOr<BoxingPlan> planInOrder(ArrayRef<SbpEntry> src,
                                  ArrayRef<std::pair<int64_t, SbpEntry>> order,
                                  ArrayRef<int64_t> shape, int64_t elementBytes,
                                  ArrayRef<int64_t> meshShape) {
  BoxingPlan plan;
  SmallVector<SbpEntry> cur(src);
  for (auto [axis, to] : order) {
    if (cur[axis] == to)
      continue;
    FailureOr<BoxingStep> step =
        makeStep(cur, axis, to, shape, elementBytes, meshShape);
    if (failed(step))
      return failure();
    plan.bytes += step->bytes;
    plan.steps.push_back(*step);
    cur[axis] = to;
  }
  return plan;
}

} // namespace

BoxingPlan sbp::planBoxing(ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst,
                           ArrayRef<int64_t> shape, int64_t elementBytes,
                           ArrayRef<int64_t> meshShape) {
  assert(src.size() == dst.size() && src.size() == meshShape.size() &&
         "one entry per mesh axis");
  SmallVector<int64_t> changed;
  for (int64_t axis = 0, e = src.size(); axis < e; ++axis)
    if (src[axis] != dst[axis])
      changed.push_back(axis);

  std::optional<BoxingPlan> best;
  auto consider = [&](FailureOr<BoxingPlan> plan) {
    if (succeeded(plan) && (!best || plan->bytes < best->bytes))
      best = std::move(*plan);
  };
  // Every order of the changed axes: meshes have few axes.
  SmallVector<int64_t> order(changed);
  do {
    SmallVector<std::pair<int64_t, SbpEntry>> steps;
    for (int64_t axis : order)
      steps.emplace_back(axis, dst[axis]);
    consider(planInOrder(src, steps, shape, elementBytes, meshShape));
  } while (std::next_permutation(order.begin(), order.end()));

  // Through B: un-split innermost first, then split outermost first. Axes
  // that keep their split but sit inside a changed axis splitting the same
  // dimension must be undone and redone too, or the pieces would not be
  // contiguous.
  SmallVector<bool> redo(src.size(), false);
  for (int64_t axis : changed)
    redo[axis] = true;
  auto splits = [](SbpEntry entry, int64_t dim) {
    return entry.isSplit() && entry.getDim() == dim;
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (int64_t inner = 0, e = src.size(); inner < e; ++inner) {
      if (redo[inner] || !src[inner].isSplit())
        continue;
      int64_t dim = src[inner].getDim();
      for (int64_t outer = 0; outer < inner && !redo[inner]; ++outer)
        if (redo[outer] && (splits(src[outer], dim) || splits(dst[outer], dim)))
          redo[inner] = grew = true;
    }
  }
  SmallVector<std::pair<int64_t, SbpEntry>> viaBroadcast;
  for (int64_t axis = src.size() - 1; axis >= 0; --axis)
    if (redo[axis])
      viaBroadcast.emplace_back(axis, SbpEntry::broadcast());
  for (int64_t axis = 0, e = src.size(); axis < e; ++axis)
    if (redo[axis])
      viaBroadcast.emplace_back(axis, dst[axis]);
  consider(planInOrder(src, viaBroadcast, shape, elementBytes, meshShape));
  assert(best && "going through B is always valid");
  return *best;
}

double sbp::getBoxingBytes(ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst,
                           ArrayRef<int64_t> shape, int64_t elementBytes,
                           ArrayRef<int64_t> meshShape) {
  if (src == dst)
    return 0;
  return planBoxing(src, dst, shape, elementBytes, meshShape).bytes;
}

int64_t sbp::getElementBytes(Type elementType) {
  if (elementType.isIntOrFloat())
    return std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
  return 8;
}

StringRef sbp::stringifyBoxingKind(BoxingKind kind) {
  switch (kind) {
  case BoxingKind::AllReduce:
    return "all_reduce";
  case BoxingKind::ReduceScatter:
    return "reduce_scatter";
  case BoxingKind::AllGather:
    return "all_gather";
  case BoxingKind::AllToAll:
    return "all_to_all";
  case BoxingKind::Slice:
    return "slice";
  case BoxingKind::KeepOnFirst:
    return "keep_on_first";
  case BoxingKind::PadWithNeutral:
    return "pad_with_neutral";
  case BoxingKind::Relabel:
    return "relabel";
  }
  llvm_unreachable("unknown boxing kind");
}
