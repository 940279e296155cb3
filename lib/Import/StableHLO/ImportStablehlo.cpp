//===- ImportStablehlo.cpp - The StableHLO import pipeline ----------------===//

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "sbp/Dialect/StableHLO/IR/Stablehlo.h"
#include "sbp/Import/Stablehlo.h"
#include "sbp/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

LogicalResult sbp::checkStablehloOpNames(const llvm::MemoryBuffer &buffer,
                                         MLIRContext *context) {
  context->getOrLoadDialect<stablehlo::StablehloDialect>();
  context->getOrLoadDialect<chlo::ChloDialect>();
  context->getOrLoadDialect<sdy::SdyDialect>();
  StringRef text = buffer.getBuffer();
  StringRef file = buffer.getBufferIdentifier();
  // Names in op position: not an attribute (`#stablehlo.gather`) nor part
  // of a longer name (`mhlo.sharding`).
  llvm::StringMap<std::pair<LocationAttr, unsigned>> unknown;
  SmallVector<StringRef> order;
  unsigned line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
      continue;
    }
    StringRef rest = text.drop_front(i);
    if (!rest.starts_with("stablehlo.") && !rest.starts_with("chlo.") &&
        !rest.starts_with("sdy."))
      continue;
    char before = i ? text[i - 1] : ' ';
    if (llvm::isAlnum(before) || before == '_' || before == '.' ||
        before == '#' || before == '$' || before == '!')
      continue;
    size_t end = rest.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyz0123456789_.", rest.find('.') + 1);
    StringRef name = rest.take_front(end);
    if (name.ends_with("."))
      name = name.drop_back();
    // An attribute name (`{sdy.sharding = ...}`) is followed by `=`.
    bool isAttribute = rest.drop_front(name.size()).ltrim().starts_with("=");
    if (!isAttribute && !RegisteredOperationName::lookup(name, context)) {
      auto [it, inserted] = unknown.try_emplace(
          name, FileLineColLoc::get(context, file, line, i - lineStart + 1), 0);
      if (inserted)
        order.push_back(it->getKey());
      ++it->second.second;
    }
    i += name.size() - 1;
  }
  for (StringRef name : order) {
    auto [loc, count] = unknown.lookup(name);
    InFlightDiagnostic diag = emitError(Location(loc))
                              << "unknown op '" << name << "'";
    if (count > 1)
      diag << " (" << count << " uses)";
  }
  if (!order.empty()) {
    InFlightDiagnostic diag = emitError(UnknownLoc::get(context))
                              << file << ": " << order.size()
                              << " unknown StableHLO op"
                              << (order.size() > 1 ? "s" : "") << ": ";
    llvm::interleaveComma(order, diag);
  }
  return success(order.empty());
}

bool sbp::isStablehloModule(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    if (isa<stablehlo::StablehloDialect, chlo::ChloDialect, sdy::SdyDialect>(
            op->getDialect())) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

void sbp::buildImportStablehloPipeline(OpPassManager &pm) {
  // No simplification while inlining: it would merge the constants whose
  // values the file left out, which all print as `__elided__`.
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createSbpLegalizeStablehloPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void sbp::registerImportStablehloPipeline() {
  PassPipelineRegistration<>(
      "sbp-import-stablehlo",
      "Import a StableHLO program: inline calls, convert to the logical "
      "program (func/linalg/tensor/arith/math), clean up",
      buildImportStablehloPipeline);
}

LogicalResult sbp::importStablehlo(ModuleOp module) {
  PassManager pm(module->getName());
  buildImportStablehloPipeline(pm);
  return pm.run(module);
}
