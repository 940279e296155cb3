//===- Passes.td - sbp passes ------------------------------*- tablegen -*-===//

#ifndef SBP_TRANSFORMS_PASSES_TD
#define SBP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SbpPrintSignaturesPass : Pass<"sbp-print-signatures", "ModuleOp"> {
  let summary = "Print the SBP signatures of every op (test pass)";
  let description = [{
    For every function, prints a `func @name` line and then, for each op in
    it, the op's name followed by one line per per-axis signature:
    `(operand entries) -> (result entries)`, with `*` for an entry the op
    leaves free. With `mesh=<name>`, the nd signatures on that mesh are
    printed instead, each entry as `[e0, e1, ...]`. Ops without a signature
    rule are listed as `<op name>: no SBP rule`. Regions of ops with a rule
    (linalg payloads) are not entered. Output goes to stdout; the IR is left
    unchanged.

    Constraints: `mesh`, when given, names an `sbp.mesh` in the module.
  }];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"\"",
           "Print nd signatures on the sbp.mesh of this name">,
  ];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

#endif // SBP_TRANSFORMS_PASSES_TD
