//===- CostModel.cpp - Predicted time and memory of a plan ----------------===//

#include "sbp/Cost/CostModel.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "sbp/Dialect/Sbp/Utils/MatrixProduct.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// Elements of the largest piece of `shape` under `entries`.
double getLocalElements(ArrayRef<int64_t> shape, ArrayRef<SbpEntry> entries,
                        ArrayRef<int64_t> meshShape) {
  SmallVector<int64_t> origin(meshShape.size(), 0);
  double elements = 1;
  // The device at the origin holds a largest piece of every balanced split.
  for (int64_t size : getLocalShape(shape, entries, meshShape, origin))
    elements *= ShapedType::isDynamic(size) ? 1 : size;
  return elements;
}

SmallVector<int64_t> getStaticShape(RankedTensorType type) {
  SmallVector<int64_t> shape;
  for (int64_t size : type.getShape())
    shape.push_back(ShapedType::isDynamic(size) ? 1 : size);
  return shape;
}

std::string getTypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  getElementTypeOrSelf(type).print(os);
  return name;
}

/// What a transcendental function (exp, log, tanh, rsqrt, erf, ...) costs
/// in arithmetic operations: on the CPUs measured, one `math.exp` in a
/// loop takes as long as about 8 additions or multiplications.
constexpr double kTranscendentalOps = 8;

/// Arithmetic operations per iteration of a linalg op's payload.
double getPayloadOps(linalg::LinalgOp op) {
  double count = 0;
  for (Operation &payload : op.getBlock()->without_terminator()) {
    if (isa<linalg::IndexOp>(payload))
      continue;
    bool cheap = isa<math::AbsFOp, math::AbsIOp, math::FmaOp, math::CeilOp,
                     math::FloorOp, math::RoundOp, math::CopySignOp>(payload);
    count += isa<math::MathDialect>(payload.getDialect()) && !cheap
                 ? kTranscendentalOps
                 : 1;
  }
  return std::max(1.0, count);
}

/// The work of a linalg op: its loops, each divided by the devices that
/// split it (an operand dimension indexed by the loop alone is split).
OpWork getLinalgWork(linalg::LinalgOp op, const NdSbpSignature &signature,
                     ArrayRef<int64_t> meshShape) {
  OpWork work;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<double> parts(ranges.size(), 1);
  for (OpOperand &operand : op->getOpOperands()) {
    NdSbpAttr layout = signature.operands[operand.getOperandNumber()];
    if (!layout || !isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<double> operandParts(ranges.size(), 1);
    for (auto [axis, entry] : llvm::enumerate(layout.getEntries())) {
      if (!entry.isSplit() || entry.getDim() >= map.getNumResults())
        continue;
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(entry.getDim())))
        operandParts[dim.getPosition()] *= meshShape[axis];
    }
    for (size_t loop = 0; loop < ranges.size(); ++loop)
      parts[loop] = std::max(parts[loop], operandParts[loop]);
  }
  double iterations = 1;
  for (auto [range, part] : llvm::zip(ranges, parts))
    iterations *=
        std::ceil(double(ShapedType::isDynamic(range) ? 1 : range) / part);
  work.flops = iterations * getPayloadOps(op);
  // Named contractions, and the generic matrix products that
  // sbp-specialize-contractions makes named ones (after
  // sbp-unfold-convolutions for convolutions), get the tuned code path
  // (tiled and vectorized on CPUs, batched ones as a loop of matmuls; BLAS
  // libraries on GPUs); other generic ones run as plain loops.
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  work.contraction =
      generic
          ? matchMatrixProduct(generic).has_value() ||
                isUnfoldableProduct(generic)
          : isa<linalg::ContractionOpInterface, linalg::ConvolutionOpInterface>(
                op.getOperation());
  if (op.getNumDpsInits() > 0)
    work.elementType = getTypeName(op.getDpsInits()[0].getType());
  return work;
}

/// Ops that only re-describe a tensor or make one without contents: no
/// data moves once bufferized.
bool movesNoData(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::EmptyOp,
             tensor::CastOp, tensor::DimOp, arith::ConstantOp>(op);
}

} // namespace

llvm::Expected<CostModel> CostModel::get(const Cluster &cluster,
                                         ArrayRef<int64_t> meshShape) {
  auto links = cluster.getMeshLinks(meshShape);
  if (!links)
    return links.takeError();
  CostModel model(cluster, meshShape, std::move(*links));
  for (int64_t size : meshShape)
    model.numDevices *= size;
  return model;
}

double CostModel::getTransferTime(int64_t axis, double bytes) const {
  return links[axis].latency + bytes / links[axis].bandwidth;
}

double CostModel::getCollectiveTime(BoxingKind kind, int64_t axis,
                                    double bytes) const {
  double p = meshShape[axis];
  double steps = 0;
  switch (kind) {
  case BoxingKind::AllReduce:
    steps = 2 * (p - 1);
    break;
  case BoxingKind::ReduceScatter:
  case BoxingKind::AllGather:
  case BoxingKind::AllToAll:
    steps = p - 1;
    break;
  default:
    return 0;
  }
  const Link &link = links[axis];
  return steps * link.latency + bytes / link.bandwidth;
}

BoxingCost CostModel::getBoxingCost(ArrayRef<SbpEntry> src,
                                    ArrayRef<SbpEntry> dst,
                                    ArrayRef<int64_t> shape,
                                    int64_t elementBytes) const {
  BoxingCost cost;
  if (src == dst)
    return cost;
  BoxingPlan plan = planBoxing(src, dst, shape, elementBytes, meshShape);
  cost.bytes = plan.bytes;
  for (const BoxingStep &step : plan.steps) {
    switch (step.kind) {
    case BoxingKind::Slice:
    case BoxingKind::KeepOnFirst:
    case BoxingKind::PadWithNeutral:
      cost.time += getLocalElements(shape, dst, meshShape) * elementBytes /
                   getCluster().getMemoryBandwidth(numDevices);
      break;
    default:
      cost.time += getCollectiveTime(step.kind, step.axis, step.bytes);
    }
  }
  return cost;
}

BoxingCost CostModel::getBoxingCost(RankedTensorType type, NdSbpAttr src,
                                    NdSbpAttr dst) const {
  if (!src || !dst || src == dst)
    return {};
  return getBoxingCost(src.getEntries(), dst.getEntries(), getStaticShape(type),
                       getElementBytes(type.getElementType()));
}

double CostModel::getLocalBytes(RankedTensorType type, NdSbpAttr layout) const {
  SmallVector<int64_t> shape = getStaticShape(type);
  double elements = 1;
  if (layout) {
    elements = getLocalElements(shape, layout.getEntries(), meshShape);
  } else {
    for (int64_t size : shape)
      elements *= size;
  }
  return elements * getElementBytes(type.getElementType());
}

OpWork CostModel::getOpWork(Operation *op,
                            const NdSbpSignature &signature) const {
  OpWork work;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp)
    work = getLinalgWork(linalgOp, signature, meshShape);
  double resultBytes = 0;
  for (OpResult result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType())) {
      resultBytes +=
          getLocalBytes(type, signature.results[result.getResultNumber()]);
      if (!linalgOp)
        work.elementType = getTypeName(type);
    }
  if (movesNoData(op))
    return work;
  // A slice copies its elements only, and an insertion writes its source
  // into the destination's buffer in place (as bufferization does when the
  // destination is not read after): a layer's row of stacked weights, or
  // of their gradients, moves a row, not the stack.
  if (isa<tensor::ExtractSliceOp>(op)) {
    work.bytes = 2 * resultBytes;
    return work;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    work.bytes =
        2 * getLocalBytes(insert.getSourceType(), signature.operands[0]);
    return work;
  }
  work.bytes = resultBytes;
  for (OpOperand &operand : op->getOpOperands()) {
    // An output whose old contents the payload never reads (a fill, an
    // element-wise op into `tensor.empty`, a softmax) is written, not read.
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (dps && dps.isDpsInit(&operand) &&
        (!linalgOp || !linalgOp.payloadUsesValueFromOperand(&operand)))
      continue;
    if (auto type = dyn_cast<RankedTensorType>(operand.get().getType()))
      work.bytes +=
          getLocalBytes(type, signature.operands[operand.getOperandNumber()]);
  }
  // Element-wise arith and math on tensors: one operation per element; a
  // softmax five (maximum, subtraction, exponential, sum, division), as
  // its decomposition runs.
  double ops = op->hasTrait<OpTrait::Elementwise>() ? 1
               : isa<linalg::SoftmaxOp>(op)         ? 5
                                                    : 0;
  if (!linalgOp && ops && op->getNumResults() == 1)
    work.flops = ops * resultBytes /
                 std::max<int64_t>(1, getElementBytes(getElementTypeOrSelf(
                                          op->getResult(0).getType())));
  return work;
}

double CostModel::getElementwiseTime(RankedTensorType type, NdSbpAttr layout,
                                     unsigned inputs) const {
  OpWork work;
  double bytes = getLocalBytes(type, layout);
  work.flops =
      bytes / std::max<int64_t>(1, getElementBytes(type.getElementType()));
  work.bytes = (inputs + 1) * bytes;
  work.elementType = getTypeName(type);
  return getComputeTime(work);
}

double CostModel::getComputeTime(const OpWork &work) const {
  double rate = work.contraction
                    ? cluster.getPeakFlops(work.elementType, numDevices)
                    : cluster.getLoopFlops(work.elementType, numDevices);
  return std::max(work.flops / rate,
                  work.bytes / cluster.getMemoryBandwidth(numDevices));
}
