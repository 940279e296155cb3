//===- LowerCollectives.cpp - Collectives as calls of the runtime ---------===//
//
// Every collective becomes `to_buffer` of its operand, an allocation for its
// result, a call of `sbp_rt_<op>` (include/sbp/Runtime/sbp_program.h) and
// `to_tensor` of the filled allocation. Doing this on tensors, before
// bufferization, lets one-shot bufferization place the operands and the
// deallocation pipeline free the results like any other buffer.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPLOWERCOLLECTIVESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// The suffix of the runtime's entry points for element type `type`, or
/// an empty string without one.
StringRef getTypeSuffix(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  for (unsigned width : {1, 8, 32, 64})
    if (type.isSignlessInteger(width))
      return width == 1    ? "i1"
             : width == 8  ? "i8"
             : width == 32 ? "i32"
                           : "i64";
  return "";
}

/// Lowers the collectives of one module.
class Lowering {
public:
  explicit Lowering(ModuleOp module) : calls(module) {}

  LogicalResult lower(Operation *op);

private:
  /// The axes of `op` as the runtime takes them: packed, and their count.
  LogicalResult getAxes(Operation *op, ArrayRef<int64_t> axes,
                        SmallVectorImpl<Value> &args);

  RuntimeCallBuilder calls;
};

LogicalResult Lowering::getAxes(Operation *op, ArrayRef<int64_t> axes,
                                SmallVectorImpl<Value> &args) {
  if (axes.size() > 8)
    return op->emitOpError() << "uses " << axes.size()
                             << " mesh axes; the runtime takes at most 8";
  int64_t packed = 0;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis > 255)
      return op->emitOpError() << "uses mesh axis " << axis
                               << "; the runtime takes axes below 256";
    packed |= axis << (8 * i);
  }
  args.push_back(calls.i64(packed));
  args.push_back(calls.i64(axes.size()));
  return success();
}

LogicalResult Lowering::lower(Operation *op) {
  calls.setInsertionPoint(op);
  if (auto axisIndex = dyn_cast<AxisIndexOp>(op)) {
    Value coord = calls.call("sbp_rt_axis_index",
                             {calls.i64(axisIndex.getAxisAttr().getInt())},
                             IntegerType::get(op->getContext(), 64))[0];
    axisIndex.replaceAllUsesWith(calls.toIndex(coord));
    axisIndex.erase();
    return success();
  }

  Value input = op->getNumOperands() ? op->getOperand(0) : Value();
  auto type = cast<RankedTensorType>(input ? input.getType()
                                           : op->getResult(0).getType());
  StringRef suffix = getTypeSuffix(type.getElementType());
  if (suffix.empty())
    return op->emitOpError()
           << "has element type " << type.getElementType()
           << "; the runtime moves f32, f64, f16, bf16, i32, i64, i8 and i1";
  auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("mesh_axes");
  SmallVector<Value> axes;
  if (failed(getAxes(op, axesAttr.asArrayRef(), axes)))
    return failure();
  auto groupSum = [&](Value size) {
    return calls.toIndex(calls.call("sbp_rt_group_sum",
                                    {calls.toI64(size), axes[0], axes[1]},
                                    IntegerType::get(op->getContext(), 64))[0]);
  };
  auto pieceSize = [&](Value size) {
    return calls.toIndex(calls.call("sbp_rt_piece_size",
                                    {calls.toI64(size), axes[0], axes[1]},
                                    IntegerType::get(op->getContext(), 64))[0]);
  };

  if (auto send = dyn_cast<SendOp>(op)) {
    calls.call(("sbp_rt_send_" + suffix).str(),
               {calls.toBuffer(input), axes[0], axes[1],
                calls.i64(send.getPeerAttr().getInt())});
    send.erase();
    return success();
  }

  // The result's dynamic sizes, derived from the operand's.
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = resultType.getRank(); d < e; ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    if (!input)
      return op->emitOpError()
             << "has a dynamic result size; received tensors need static "
                "shapes";
    Value size = calls.dim(input, d);
    if (auto gather = dyn_cast<AllGatherOp>(op)) {
      if (d == gather.getGatherDimAttr().getInt())
        size = groupSum(size);
    } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
      if (d == scatter.getScatterDimAttr().getInt())
        size = pieceSize(size);
    } else if (auto allToAll = dyn_cast<AllToAllOp>(op)) {
      int64_t split = allToAll.getSplitDimAttr().getInt();
      int64_t concat = allToAll.getConcatDimAttr().getInt();
      if (split != concat && d == split)
        size = pieceSize(size);
      else if (split != concat && d == concat)
        size = groupSum(size);
    }
    sizes.push_back(size);
  }
  Value out = calls.alloc(resultType, sizes);

  SmallVector<Value> args;
  if (input)
    args.push_back(calls.toBuffer(input));
  args.push_back(calls.unranked(out));
  args.append(axes);
  StringRef name;
  if (auto allReduce = dyn_cast<AllReduceOp>(op)) {
    name = "all_reduce";
    args.push_back(calls.i64(static_cast<int64_t>(allReduce.getReduction())));
  } else if (auto gather = dyn_cast<AllGatherOp>(op)) {
    name = "all_gather";
    args.push_back(calls.i64(gather.getGatherDimAttr().getInt()));
  } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    name = "reduce_scatter";
    args.push_back(calls.i64(scatter.getScatterDimAttr().getInt()));
    args.push_back(calls.i64(static_cast<int64_t>(scatter.getReduction())));
  } else if (auto allToAll = dyn_cast<AllToAllOp>(op)) {
    name = "all_to_all";
    args.push_back(calls.i64(allToAll.getSplitDimAttr().getInt()));
    args.push_back(calls.i64(allToAll.getConcatDimAttr().getInt()));
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    name = "broadcast";
    args.push_back(calls.i64(broadcast.getRootAttr().getInt()));
  } else {
    name = "recv";
    args.push_back(calls.i64(cast<RecvOp>(op).getPeerAttr().getInt()));
  }
  calls.call(("sbp_rt_" + name + "_" + suffix).str(), args);
  Value result = calls.toTensor(out, resultType);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

struct SbpLowerCollectivesPass
    : public sbp::impl::SbpLowerCollectivesPassBase<SbpLowerCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AxisIndexOp, AllReduceOp, AllGatherOp, ReduceScatterOp,
              AllToAllOp, BroadcastOp, SendOp, RecvOp>(op))
        ops.push_back(op);
    });
    Lowering lowering(getOperation());
    for (Operation *op : ops)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
  }
};

} // namespace
