//===- SbpDialect.td - The sbp dialect ---------------------*- tablegen -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBPDIALECT_TD
#define SBP_DIALECT_SBP_IR_SBPDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Sbp_Dialect : Dialect {
  let name = "sbp";
  let cppNamespace = "::mlir::sbp";
  let summary = "Split/Broadcast/Partial distribution of tensors over device meshes";
  let description = [{
    The `sbp` dialect describes how the tensors of a single-device ("logical")
    program are spread over a mesh of devices, following OneFlow's SBP model.
    Per mesh axis of size `p` a tensor is

    * `S(i)`: split along tensor dimension `i`; rank `k` holds slice `k`.
      Non-divisible sizes use balanced splits: the first `n % p` ranks hold
      one more row than the others.
    * `B`: broadcast; every rank holds the whole tensor.
    * `P(sum)`, `P(max)`, `P(min)` (`P` alone means `P(sum)`): partial; every
      rank holds a tensor of the full shape and the logical value is the
      element-wise reduction over the ranks.

    An nd-SBP `#sbp.nd<@mesh, [e0, e1, ...]>` has one entry per mesh axis.
    When several axes split the same dimension the split is hierarchical in
    mesh-axis order: axis 0 splits the dimension first and each of its
    pieces is split again by the next axis, so on a `2x4` mesh
    `[S(0), S(0)]` gives device `(a, b)` the piece `4 * a + b` of 8.

    The dialect has two levels. At the logical level, `sbp.annotate` pins
    the distribution of a value and `sbp.boxing` converts between two
    distributions. After partitioning, the program works on local shards and
    communicates with explicit collectives (`sbp.all_reduce`,
    `sbp.all_gather`, `sbp.reduce_scatter`, `sbp.all_to_all`,
    `sbp.broadcast`, `sbp.send`, `sbp.recv`), each naming its mesh and the
    mesh axes whose devices take part.

    Function arguments and results may carry `{sbp.sharding = #sbp.nd<...>}`.
    After propagation every op that computes on tensors records the
    signature it runs with in `sbp.operands = [...]` and `sbp.results =
    [...]`: one `#sbp.nd` per operand and result, or `unit` where the op
    takes any layout.

    Pipelines (`sbp-split-stages`, `sbp-auto-parallel`) use three more.
    `sbp.stage = k` on an op of a logical function puts it in pipeline stage
    `k`. A pipelined module holds one function per stage and describes them
    in `sbp.pipeline = {function = "main", mesh = @pipeline, stages =
    [@main_stage0, ...], micro_batches = M, schedule = "gpipe" | "1f1b",
    outputs = [...]}`. Stage `k` runs on the devices at position `k` along
    the first axis of `mesh`; its layouts are `B` along that axis. Each
    output is `{stage = S, result = R, combine = "concat", dim = D}` (the
    micro-batches' results concatenated along `D`), `"sum"` or `"same"`.
    Each stage argument carries `sbp.source`: `{input = N}` (argument `N`
    of the original function, whole), `{input = N, micro_batch_dim = D}`
    (cut into micro-batches along `D`), `{input = N, offset = O}` (rows `O`
    to `O` plus the argument's dimension 0 of argument `N`: the slice of a
    stacked weight a stage's layers use) or `{stage = S, result = R}` (result
    `R` of stage `S`, received from the device at the same position of
    that stage's sub-mesh); after partitioning, `sbp-insert-transfers`
    replaces such arguments by `sbp.recv` and the sender's results by
    `sbp.send` along the first axis of `mesh`.

    A training pipeline (a training step cut into stages) also has
    `backward = [@main_stage0_backward, ...]` and `update =
    [@main_stage0_update, ...]`, one of each per stage, and its outputs
    that are updated parameters or optimizer state are `{stage = S, result
    = R, combine = "same", update}`: result `R` of stage `S`'s update, or,
    for a stacked weight whose rows several stages own, `{stage = [S, ...],
    result = [R, ...], combine = "concat", dim = 0, update}`: those stages'
    update results one after another along dimension 0. A
    backward function's arguments are its forward's (those with `{stage =
    S, result = R}` are what the forward received, which it hands back for
    this), `{backward = T, result = R}`: result `R` of stage `T`'s
    backward, the gradient of a value this stage sent to `T`, and `{saved =
    J}`: the `J`-th of the results that the stage's forward returns after
    its own for its backward (what a loop over layers yields, each layer's
    input among it, so that the backward recomputes each layer from its
    input rather than running the loop again). An update
    function's arguments are inputs and `{gradient = J}`: the `J`-th
    parameter gradient its backward returns, summed over the micro-batches.

    `sbp.stop_gradient` (a unit attribute) on an op makes its results
    constants to differentiation (`sbp-make-train-step`, and the backward
    of a training pipeline's stages): no gradient flows through them into
    the op's operands, as `jax.lax.stop_gradient` and PyTorch's `detach`.
    sbp sets it on the row maximum that a softmax, log-softmax,
    log-sum-exp or cross-entropy subtracts to keep `exp` in range, whose
    derivative there is exactly zero, so that the backward does not spend
    reductions over the whole tensor to compute that zero.

    Constraints on these attributes: `sbp.sharding` is an `#sbp.nd` valid
    for the argument or result type and only appears on function arguments
    and results; `sbp.operands` and `sbp.results` are arrays with one
    element per operand / result, each `unit` or an `#sbp.nd` valid for its
    value; `sbp.stage` is a non-negative integer; `sbp.source` is one of its
    seven forms with non-negative integers, a `micro_batch_dim` within the
    argument's rank and an `offset` only on an argument whose dimension 0
    is static; `sbp.stop_gradient` is a unit attribute of an op with
    results; `sbp.pipeline` is on a module, names functions of
    it as stages and a mesh of it whose first axis is their number, has a
    positive `micro_batches`, a known schedule and outputs naming existing
    stage (or, with `update`, update) results, several only when
    concatenated along dimension 0; `backward` and `update` are
    both absent or both arrays of one function of the module per stage; no
    other `sbp.*` attribute exists.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes; defined with their storage classes.
    void registerAttributes();

    /// Name of the unit module attribute marking the program every device
    /// runs (set by sbp-partition).
    static constexpr ::llvm::StringLiteral getPartitionedAttrName() {
      return "sbp.partitioned";
    }
    /// Name of the function argument/result attribute carrying an nd-SBP.
    static constexpr ::llvm::StringLiteral getShardingAttrName() {
      return "sbp.sharding";
    }
    /// Names of the op attributes recording the signature an op runs with:
    /// one entry per operand / result, an #sbp.nd or `unit` for "free".
    static constexpr ::llvm::StringLiteral getOperandShardingsAttrName() {
      return "sbp.operands";
    }
    static constexpr ::llvm::StringLiteral getResultShardingsAttrName() {
      return "sbp.results";
    }
    /// Name of the op attribute assigning it to a pipeline stage.
    static constexpr ::llvm::StringLiteral getStageAttrName() {
      return "sbp.stage";
    }
    /// Name of the stage function argument attribute saying where its
    /// value comes from.
    static constexpr ::llvm::StringLiteral getSourceAttrName() {
      return "sbp.source";
    }
    /// Name of the module attribute describing a pipeline.
    static constexpr ::llvm::StringLiteral getPipelineAttrName() {
      return "sbp.pipeline";
    }
    /// Name of the function attribute of a training step: which of its
    /// arguments are parameters and optimizer state.
    static constexpr ::llvm::StringLiteral getTrainStepAttrName() {
      return "sbp.train_step";
    }
    /// Name of the unit op attribute making the op's results constants to
    /// differentiation.
    static constexpr ::llvm::StringLiteral getStopGradientAttrName() {
      return "sbp.stop_gradient";
    }
    /// Name of the argument attribute naming a value of a training step
    /// (an optimizer state, the labels).
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return "sbp.name";
    }
  }];
}

/// Kind of the element-wise reduction of a partial value or a collective.
def Sbp_ReductionKind : I32EnumAttr<"ReductionKind", "reduction kind", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::sbp";
}

#endif // SBP_DIALECT_SBP_IR_SBPDIALECT_TD
