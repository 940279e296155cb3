//===- CostModel.h - Predicted time and memory of a plan --------*- C++ -*-===//
//
// Predicts, for one mesh of one cluster, what a distributed program costs
// each device: compute time per op (roofline: FLOPs at the device's rate
// against bytes at its memory bandwidth), time per boxing (the collectives
// of the boxing table under the alpha-beta model, ring algorithms, over the
// link of the mesh axis they run on) and memory (local bytes). The search
// minimizes these; docs/cost-model.md gives the formulas.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_COST_COSTMODEL_H
#define SBP_COST_COSTMODEL_H

#include "sbp/Cost/Cluster.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"
#include "sbp/Dialect/Sbp/Utils/BoxingPlan.h"

namespace mlir {
namespace sbp {

/// The work one device does for one op.
struct OpWork {
  double flops = 0;
  /// Bytes read and written.
  double bytes = 0;
  /// Whether the FLOPs run at the contraction rate (matmul-like ops).
  bool contraction = false;
  /// Element type name the rates are looked up by.
  std::string elementType = "f32";
};

/// The cost of one change of layout.
struct BoxingCost {
  double time = 0;
  /// Bytes each device sends.
  double bytes = 0;
};

class CostModel {
public:
  /// The model of `cluster` for a mesh of shape `meshShape`; fails when the
  /// mesh does not fit the cluster.
  static llvm::Expected<CostModel> get(const Cluster &cluster,
                                       ArrayRef<int64_t> meshShape);

  /// Seconds to send `bytes` to a device one step along mesh axis `axis`.
  double getTransferTime(int64_t axis, double bytes) const;

  const Cluster &getCluster() const { return cluster; }
  ArrayRef<int64_t> getMeshShape() const { return meshShape; }
  ArrayRef<Link> getLinks() const { return links; }

  /// Seconds of a collective of `kind` over mesh axis `axis` in which each
  /// device sends `bytes`: `steps * latency + bytes / bandwidth`, with the
  /// ring's `2(p-1)` steps for all-reduce and `p-1` for the others.
  double getCollectiveTime(BoxingKind kind, int64_t axis, double bytes) const;

  /// What converting a tensor of `shape` from `src` to `dst` costs: the
  /// seconds of its collectives plus its local steps (slices, zero fills)
  /// as memory traffic, and the bytes each device sends.
  BoxingCost getBoxingCost(ArrayRef<SbpEntry> src, ArrayRef<SbpEntry> dst,
                           ArrayRef<int64_t> shape, int64_t elementBytes) const;
  /// The same for a value of `type`; nothing when either layout is null.
  BoxingCost getBoxingCost(RankedTensorType type, NdSbpAttr src,
                           NdSbpAttr dst) const;
  /// The seconds alone.
  double getBoxingTime(RankedTensorType type, NdSbpAttr src,
                       NdSbpAttr dst) const {
    return getBoxingCost(type, src, dst).time;
  }

  /// Bytes one device holds of a value of `type` laid out as `layout` (the
  /// largest piece; dynamic sizes count as 1).
  double getLocalBytes(RankedTensorType type, NdSbpAttr layout) const;

  /// What `op` does on one device under `signature`.
  OpWork getOpWork(Operation *op, const NdSbpSignature &signature) const;
  /// Seconds of `work`: the larger of compute and memory time.
  double getComputeTime(const OpWork &work) const;
  /// Seconds of an element-wise op of `inputs` operands that writes one
  /// device's shard of a `type` value laid out as `layout`.
  double getElementwiseTime(RankedTensorType type, NdSbpAttr layout,
                            unsigned inputs) const;

private:
  CostModel(const Cluster &cluster, ArrayRef<int64_t> meshShape,
            SmallVector<Link> links)
      : cluster(cluster), meshShape(meshShape), links(std::move(links)) {}

  Cluster cluster;
  SmallVector<int64_t> meshShape;
  SmallVector<Link> links;
  int64_t numDevices = 1;
};

} // namespace sbp
} // namespace mlir

#endif // SBP_COST_COSTMODEL_H
