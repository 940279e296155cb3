//===- SbpInterfaces.td - SBP signature interface ----------*- tablegen -*-===//

#ifndef SBP_DIALECT_SBP_IR_SBPINTERFACES_TD
#define SBP_DIALECT_SBP_IR_SBPINTERFACES_TD

include "mlir/IR/OpBase.td"

def Sbp_SignatureOpInterface : OpInterface<"SbpSignatureOpInterface"> {
  let cppNamespace = "::mlir::sbp";
  let description = [{
    The ways an op can run distributed: each signature assigns one SBP entry
    to every operand and result such that running the op on local shards
    computes the shards of the result. Non-tensor operands (scalars,
    indices) are always `B`. An entry may be left free (`std::nullopt` for
    one axis, a null attribute for a mesh), meaning the op accepts any
    distribution there unchanged, as `func.return` does.

    Per mesh axis the signatures come from the op's loops: splitting a
    parallel loop gives `S` on every operand and result that indexes it and
    `B` on the others; splitting a reduction loop gives `S` on the inputs
    and `P(kind)` on the result, the kind read from the combiner. `B`
    everywhere is always valid. Ops that are linear in an operand also
    accept `P` there.

    On an n-d mesh a signature is the product of one per-axis signature per
    axis, kept when `isValidNdSbpSignature` accepts it.
  }];
  let methods = [
    InterfaceMethod<
      "Signatures for one mesh axis, the all-`B` one first.",
      "::llvm::SmallVector<::mlir::sbp::SbpSignature>", "getSbpSignatures">,
    InterfaceMethod<
      "Signatures on `mesh`: by default the valid products of per-axis ones.",
      "::llvm::SmallVector<::mlir::sbp::NdSbpSignature>",
      "getNdSbpSignatures", (ins "::mlir::sbp::MeshOp":$mesh), "",
      [{ return ::mlir::sbp::detail::getProductNdSbpSignatures($_op, mesh); }]>,
    InterfaceMethod<
      "Whether `signature` is valid on a mesh of shape `meshShape`. By "
      "default every split of a static dimension must leave each device at "
      "least one element, and a value's partial entries must share one "
      "reduction kind.",
      "bool", "isValidNdSbpSignature",
      (ins "const ::mlir::sbp::NdSbpSignature &":$signature,
           "::llvm::ArrayRef<int64_t>":$meshShape), "",
      [{
        return ::mlir::sbp::detail::isValidNdSbpSignature($_op, signature,
                                                          meshShape);
      }]>,
  ];
}

#endif // SBP_DIALECT_SBP_IR_SBPINTERFACES_TD
