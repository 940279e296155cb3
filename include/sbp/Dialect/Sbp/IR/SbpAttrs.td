//===- SbpAttrs.td - sbp dialect attributes ----------------*- tablegen -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBPATTRS_TD
#define SBP_DIALECT_SBP_IR_SBPATTRS_TD

include "sbp/Dialect/Sbp/IR/SbpDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Sbp_ReductionKindAttr : EnumAttr<Sbp_Dialect, Sbp_ReductionKind, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def Sbp_NdSbpAttr : AttrDef<Sbp_Dialect, "NdSbp"> {
  let mnemonic = "nd";
  let summary = "Distribution of a tensor over a device mesh (nd-SBP)";
  let description = [{
    One SBP entry per axis of the mesh named by `mesh`:

    ```mlir
    #sbp.nd<@m, [S(0), B]>          // dim 0 split over axis 0, axis 1 replicates
    #sbp.nd<@m, [P(sum), S(1)]>     // partial sum over axis 0, dim 1 split over axis 1
    #sbp.nd<@m, [P]>                // P alone means P(sum); printed as P(sum)
    ```

    Entries are `S(<dim>)`, `B`, `P`, `P(sum)`, `P(max)` and `P(min)`.

    Constraints checked by the attribute itself: split dimensions are
    non-negative; all partial entries use the same reduction kind (the
    logical value of `[P(sum), P(max)]` would depend on the order of the
    reductions). Constraints checked where the attribute is used (on
    `sbp.annotate`, `sbp.boxing` and `sbp.sharding` of function arguments and
    results): the mesh exists, there is one entry per mesh axis, and every
    split dimension is smaller than the tensor's rank.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::sbp::SbpEntry", "per-mesh-axis entries">:$entries
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of entries (mesh axes).
    size_t size() const { return getEntries().size(); }
    /// True when every entry is `B`.
    bool isReplicated() const;
    /// True when some entry is partial.
    bool hasPartial() const;
    /// Mesh axes, in order, whose entry splits tensor dimension `dim`.
    ::llvm::SmallVector<int64_t> getSplitAxes(int64_t dim) const;
    /// OneFlow's notation, e.g. `(S(0), B)`; partial sum is printed `P`.
    std::string toOneFlowString() const;
    /// Shape held by the device at `coords` for a tensor of shape `global`
    /// distributed over a mesh of shape `meshShape`.
    ::llvm::SmallVector<int64_t>
    getLocalShape(::llvm::ArrayRef<int64_t> global,
                  ::llvm::ArrayRef<int64_t> meshShape,
                  ::llvm::ArrayRef<int64_t> coords) const;
    /// Shape common to every device: a dimension whose balanced split is
    /// uneven is dynamic.
    ::llvm::SmallVector<int64_t>
    getLocalShape(::llvm::ArrayRef<int64_t> global,
                  ::llvm::ArrayRef<int64_t> meshShape) const;
  }];
}

#endif // SBP_DIALECT_SBP_IR_SBPATTRS_TD
