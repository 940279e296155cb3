//===- PrintSignatures.cpp - Print SBP signatures (test pass) -------------===//

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Dialect/Sbp/IR/SbpInterfaces.h"
#include "sbp/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPPRINTSIGNATURESPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

struct SbpPrintSignaturesPass
    : public sbp::impl::SbpPrintSignaturesPassBase<SbpPrintSignaturesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp mesh;
    if (!meshName.empty()) {
      mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
          module, StringAttr::get(module.getContext(), meshName));
      if (!mesh) {
        module.emitError() << "sbp-print-signatures: no sbp.mesh named '"
                           << meshName << "'";
        return signalPassFailure();
      }
    }
    llvm::raw_ostream &os = llvm::outs();
    module.walk([&](FunctionOpInterface func) {
      os << "func @" << func.getName() << "\n";
      func->walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op == func.getOperation())
          return WalkResult::advance();
        auto iface = dyn_cast<SbpSignatureOpInterface>(op);
        if (!iface) {
          os << "  " << op->getName() << ": no SBP rule\n";
          return WalkResult::advance();
        }
        os << "  " << op->getName() << "\n";
        if (mesh) {
          for (const NdSbpSignature &signature :
               iface.getNdSbpSignatures(mesh)) {
            os << "    ";
            printSignature(os, signature);
            os << "\n";
          }
        } else {
          for (const SbpSignature &signature : iface.getSbpSignatures()) {
            os << "    ";
            printSignature(os, signature);
            os << "\n";
          }
        }
        return WalkResult::skip();
      });
    });
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
