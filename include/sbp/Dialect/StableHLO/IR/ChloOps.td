//===- ChloOps.td - The CHLO ops sbp reads -----------------*- tablegen -*-===//

#ifndef SBP_DIALECT_STABLEHLO_IR_CHLOOPS_TD
#define SBP_DIALECT_STABLEHLO_IR_CHLOOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Chlo_Dialect : Dialect {
  let name = "chlo";
  let cppNamespace = "::mlir::sbp::chlo";
  let summary = "The CHLO ops that JAX exports next to StableHLO";
  let description = [{
    Client HLO ops that JAX leaves in its StableHLO output (`chlo.erf` for
    `jax.scipy.special.erf`, `chlo.erfc` for the exact GELU, `chlo.erf_inv` for normal samples, `chlo.square` in its gradient, `chlo.top_k` for `lax.top_k`), in their printed form.
    `sbp-legalize-stablehlo` converts them with the StableHLO ops.
  }];
}

class Chlo_UnaryOp<string mnemonic> : Op<Chlo_Dialect, mnemonic, [Pure]> {
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Chlo_ErfOp : Chlo_UnaryOp<"erf">;
def Chlo_ErfcOp : Chlo_UnaryOp<"erfc">;
def Chlo_ErfInvOp : Chlo_UnaryOp<"erf_inv">;
def Chlo_SquareOp : Chlo_UnaryOp<"square">;

def Chlo_TopKOp : Op<Chlo_Dialect, "top_k", [Pure]> {
  let summary = "The `k` largest elements of each row and their positions";
  let arguments = (ins AnyTensor:$operand, I64Attr:$k);
  let results = (outs AnyTensor:$values, AnyTensor:$indices);
  let assemblyFormat = [{
    `(` $operand `,` `k` `=` $k `)` attr-dict `:` type($operand) `->`
    `(` type($values) `,` type($indices) `)`
  }];
}

#endif // SBP_DIALECT_STABLEHLO_IR_CHLOOPS_TD
