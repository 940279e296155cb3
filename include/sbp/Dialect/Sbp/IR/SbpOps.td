//===- SbpOps.td - sbp dialect operations ------------------*- tablegen -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBPOPS_TD
#define SBP_DIALECT_SBP_IR_SBPOPS_TD

include "sbp/Dialect/Sbp/IR/SbpAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Sbp_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sbp_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Sbp_MeshOp : Sbp_Op<"mesh", [Symbol]> {
  let summary = "A named n-dimensional mesh of devices";
  let description = [{
    Declares a logical mesh of `shape[0] * shape[1] * ...` devices. Devices
    are numbered in row-major order of their mesh coordinates. Axis names
    are optional and only serve readability and reports.

    ```mlir
    sbp.mesh @m shape = [2, 4] axes = ["dp", "tp"]
    ```

    Constraints: the shape is non-empty and every size is positive; when
    axis names are given there is one per mesh axis and they are unique.
    The symbol name is unique in its symbol table.
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    DenseI64ArrayAttr:$shape,
    OptionalAttr<StrArrayAttr>:$axes
  );
  let assemblyFormat = [{
    $sym_name `shape` `=` $shape (`axes` `=` $axes^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of mesh axes.
    int64_t getRank() { return getShape().size(); }
    /// Total number of devices.
    int64_t getNumDevices();
    /// Mesh coordinates of the device with row-major linear index `device`.
    ::llvm::SmallVector<int64_t> getCoords(int64_t device);
  }];
}

def Sbp_AxisIndexOp : Sbp_Op<"axis_index", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The executing device's coordinate along one mesh axis";
  let description = [{
    Returns the coordinate, along mesh axis `axis`, of the device running
    the program: its rank within its group over that axis. Partitioned
    programs use it to pick their piece of a replicated tensor.

    ```mlir
    %k = sbp.axis_index @m axis = 1 : index
    ```

    Constraints: the mesh exists and `axis` is one of its axes.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, I64Attr:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$mesh `axis` `=` $axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Logical-level ops
//===----------------------------------------------------------------------===//

def Sbp_AnnotateOp : Sbp_Op<"annotate", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Constrains the distribution of a value";
  let description = [{
    Returns its operand unchanged and requires that the value be
    distributed as `sharding`. Propagation and the auto-parallel search take
    it as a fixed point; partitioning turns it into boxing where needed.

    ```mlir
    %y = sbp.annotate %x #sbp.nd<@m, [S(0), B]> : tensor<8x16xf32>
    ```

    Constraints: the mesh exists, the sharding has one entry per mesh axis
    and every split dimension is smaller than the tensor's rank.
  }];
  let arguments = (ins AnyRankedTensor:$input, Sbp_NdSbpAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    custom<ValueBeforeHash>($input) custom<NdSbp>($sharding) attr-dict
    `:` type($result)
  }];
}

def Sbp_BoxingOp : Sbp_Op<"boxing", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Converts a value from one distribution to another";
  let description = [{
    The logical value is unchanged; only its distribution over the mesh
    changes from `src` to `dst`. Partitioning lowers it to collectives
    (all-reduce for `P -> B`, reduce-scatter for `P -> S`, all-gather for
    `S -> B`, all-to-all for `S(i) -> S(j)`) or local slicing, axis by axis.

    ```mlir
    %z = sbp.boxing %y #sbp.nd<@m, [P]> -> #sbp.nd<@m, [B]> : tensor<8x16xf32>
    ```

    Constraints: both distributions name the same mesh, which exists; each
    has one entry per mesh axis and every split dimension is smaller than
    the tensor's rank.
  }];
  let arguments = (ins AnyRankedTensor:$input, Sbp_NdSbpAttr:$src,
                   Sbp_NdSbpAttr:$dst);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    custom<ValueBeforeHash>($input) custom<NdSbp>($src) `->`
    custom<NdSbp>($dst) attr-dict
    `:` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Collectives on local shards
//===----------------------------------------------------------------------===//

/// A collective over the devices that share all mesh coordinates except those
/// of `mesh_axes` (the "group"); the group's size is the product of the sizes
/// of those axes and devices are ranked in it in row-major order of their
/// coordinates along `mesh_axes`.
class Sbp_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Sbp_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  code commonConstraints = [{
    Common constraints: the mesh exists; `mesh_axes` are valid, distinct
    axes of it.
  }];
}

def Sbp_AllReduceOp : Sbp_CollectiveOp<"all_reduce",
                                       [Pure, SameOperandsAndResultType]> {
  let summary = "Element-wise reduction over a device group, result on all";
  let description = [{
    Every device of the group receives the element-wise `reduction` of the
    group's operands. Lowers `P -> B` boxing.

    ```mlir
    %r = sbp.all_reduce %x on @m axes = [1] reduction = sum : tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    The element type is an integer, float or complex type; `max` and `min`
    are not defined on complex numbers.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes,
                   Sbp_ReductionKindAttr:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `reduction` `=` custom<ReductionKind>($reduction)
    attr-dict `:` type($result)
  }];
}

def Sbp_AllGatherOp : Sbp_CollectiveOp<"all_gather", [Pure]> {
  let summary = "Concatenates the group's shards along a dimension";
  let description = [{
    Every device receives the concatenation, in group order, of the group's
    operands along `gather_dim`. Lowers `S(gather_dim) -> B` boxing.

    ```mlir
    %g = sbp.all_gather %x on @m axes = [1] gather_dim = 1
        : tensor<4x4xf32> -> tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    Operand and result have the same rank and element type and
    `gather_dim` is a dimension of them. Along `gather_dim` a static result
    size is the static operand size times the group size; every other
    static size is equal. Shards of uneven (balanced) splits have dynamic
    sizes.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes, I64Attr:$gather_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `gather_dim` `=` $gather_dim
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Sbp_ReduceScatterOp : Sbp_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "Element-wise reduction whose result is split over the group";
  let description = [{
    The element-wise `reduction` of the group's operands is split along
    `scatter_dim` with a balanced split and device `k` of the group receives
    piece `k`. Lowers `P -> S(scatter_dim)` boxing.

    ```mlir
    %s = sbp.reduce_scatter %x on @m axes = [0] scatter_dim = 0
        reduction = sum : tensor<8x16xf32> -> tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    Operand and result have the same rank and element type and
    `scatter_dim` is a dimension of them. Along `scatter_dim` a static
    operand size is the static result size times the group size; every
    other static size is equal. The reduction kind is valid for the element
    type as for `sbp.all_reduce`.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes, I64Attr:$scatter_dim,
                   Sbp_ReductionKindAttr:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `scatter_dim` `=` $scatter_dim
    `reduction` `=` custom<ReductionKind>($reduction) attr-dict `:` type($input) `->` type($result)
  }];
}

def Sbp_AllToAllOp : Sbp_CollectiveOp<"all_to_all", [Pure]> {
  let summary = "Re-splits a tensor from one dimension to another";
  let description = [{
    Each device splits its operand along `split_dim` into one piece per
    group member, sends piece `k` to member `k`, and concatenates what it
    receives along `concat_dim` in group order. Lowers `S(concat_dim) ->
    S(split_dim)` boxing.

    ```mlir
    %t = sbp.all_to_all %x on @m axes = [0] split_dim = 1 concat_dim = 0
        : tensor<2x16xf32> -> tensor<8x4xf32>
    ```
  }] # commonConstraints # [{
    Operand and result have the same rank and element type and both
    dimensions are dimensions of them. When they differ, a static result
    size along `split_dim` times the group size is the static operand size,
    a static result size along `concat_dim` is the static operand size
    times the group size, and every other static size is equal. When they
    are equal the shapes are equal.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes, I64Attr:$split_dim,
                   I64Attr:$concat_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `split_dim` `=` $split_dim
    `concat_dim` `=` $concat_dim attr-dict `:` type($input) `->` type($result)
  }];
}

def Sbp_BroadcastOp : Sbp_CollectiveOp<"broadcast",
                                       [Pure, SameOperandsAndResultType]> {
  let summary = "Copies the operand of one group member to all members";
  let description = [{
    Every device of the group receives the operand of the member whose
    group rank is `root`.

    ```mlir
    %b = sbp.broadcast %x on @m axes = [0] root = 0 : tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    `root` is a rank of the group: `0 <= root < group size`.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes, I64Attr:$root);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `root` `=` $root
    attr-dict `:` type($result)
  }];
}

def Sbp_SendOp : Sbp_CollectiveOp<"send"> {
  let summary = "Sends a tensor to one member of the device's group";
  let description = [{
    The executing device sends its operand to the member of its group whose
    group rank is `peer`; a matching `sbp.recv` on that device receives it.
    Messages between the same two devices arrive in the order they were
    sent. Used for transfers between pipeline stages.

    ```mlir
    sbp.send %x on @m axes = [0] peer = 1 : tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    `peer` is a rank of the group: `0 <= peer < group size`.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                   DenseI64ArrayAttr:$mesh_axes, I64Attr:$peer);
  let assemblyFormat = [{
    $input `on` $mesh `axes` `=` $mesh_axes `peer` `=` $peer
    attr-dict `:` type($input)
  }];
}

def Sbp_RecvOp : Sbp_CollectiveOp<"recv"> {
  let summary = "Receives a tensor from one member of the device's group";
  let description = [{
    Receives the tensor that the member of the device's group with group
    rank `peer` sent with `sbp.send`.

    ```mlir
    %y = sbp.recv on @m axes = [0] peer = 0 : tensor<4x16xf32>
    ```
  }] # commonConstraints # [{
    `peer` is a rank of the group: `0 <= peer < group size`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, DenseI64ArrayAttr:$mesh_axes,
                   I64Attr:$peer);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `on` $mesh `axes` `=` $mesh_axes `peer` `=` $peer attr-dict
    `:` type($result)
  }];
}

#endif // SBP_DIALECT_SBP_IR_SBPOPS_TD
