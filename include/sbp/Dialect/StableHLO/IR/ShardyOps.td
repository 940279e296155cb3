//===- ShardyOps.td - The Shardy ops sbp reads -------------*- tablegen -*-===//

#ifndef SBP_DIALECT_STABLEHLO_IR_SHARDYOPS_TD
#define SBP_DIALECT_STABLEHLO_IR_SHARDYOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Sdy_Dialect : Dialect {
  let name = "sdy";
  let cppNamespace = "::mlir::sbp::sdy";
  let summary = "The Shardy shardings that JAX exports by default";
  let description = [{
    JAX's default partitioner, Shardy, prints meshes and shardings in its
    own dialect: `sdy.mesh @mesh = <["x"=2, "y"=2]>`, arguments and results
    with `{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {} ]>}` and
    `sdy.sharding_constraint %v <@mesh, [{}, {"y"} ]> : tensor<...>`. These
    parse here in that form; `sbp-legalize-stablehlo` turns them into
    `sbp.mesh`, `sbp.sharding` and `sbp.annotate`.

    Constraints: axis references name whole mesh axes (no sub-axes
    `"x":(1)2`); meshes are iota meshes (no `device_ids`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

def Sdy_MeshAttr : AttrDef<Sdy_Dialect, "Mesh"> {
  let mnemonic = "mesh";
  let summary = "Named mesh axes and their sizes: `<[\"x\"=2, \"y\"=4]>`";
  let parameters = (ins "::mlir::ArrayAttr":$names,
                        ArrayRefParameter<"int64_t">:$sizes);
  let hasCustomAssemblyFormat = 1;
}

def Sdy_TensorShardingAttr : AttrDef<Sdy_Dialect, "TensorSharding"> {
  let mnemonic = "sharding";
  let summary = "Mesh axes splitting each dimension: `<@mesh, [{\"x\"}, {}]>`";
  let description = [{
    `dims` holds, per tensor dimension, an array of the names of the mesh
    axes that split it, major first; open dimensions (`?`) and priorities
    are read and dropped. `replicated` lists axes named replicated.
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        "::mlir::ArrayAttr":$dims,
                        "::mlir::ArrayAttr":$replicated);
  let hasCustomAssemblyFormat = 1;
}

def Sdy_MeshOp : Op<Sdy_Dialect, "mesh", [Symbol]> {
  let arguments = (ins SymbolNameAttr:$sym_name, Sdy_MeshAttr:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
}

def Sdy_ShardingConstraintOp : Op<Sdy_Dialect, "sharding_constraint",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let arguments = (ins AnyTensor:$input, Sdy_TensorShardingAttr:$sharding);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($input)";
  let hasVerifier = 0;
}

#endif // SBP_DIALECT_STABLEHLO_IR_SHARDYOPS_TD
