//===- OutlineLoopNests.cpp - One function per loop nest ------------------===//

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "sbp/Transforms/Passes.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPOUTLINELOOPNESTSPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {
bool isLoopNest(Operation &op) {
  return isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0;
}

/// Moves `loop` of `parent` into a new private function placed after
/// `previous` and calls it in its place; returns the new function.
func::FuncOp outline(Operation *loop, func::FuncOp parent, Operation *previous,
                     SymbolTable &symbols, unsigned index) {
  MLIRContext *ctx = loop->getContext();
  SetVector<Value> captured(llvm::from_range, loop->getOperands());
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  // Constants are cloned rather than passed.
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (def && def->getNumResults() == 1 && matchPattern(value, m_Constant()))
      constants.push_back(def);
    else
      arguments.push_back(value);
  }
  OpBuilder b(ctx);
  b.setInsertionPointAfter(previous);
  auto type = FunctionType::get(ctx, ValueRange(arguments).getTypes(), {});
  auto func = func::FuncOp::create(
      b, loop->getLoc(), (parent.getSymName() + "_nest" + Twine(index)).str(),
      type);
  func.setPrivate();
  // LLVM would inline a function called once, undoing the split.
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  symbols.insert(func);
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  for (Operation *constant : constants)
    b.clone(*constant, mapping);
  b.clone(*loop, mapping);
  func::ReturnOp::create(b, loop->getLoc());
  b.setInsertionPoint(loop);
  func::CallOp::create(b, loop->getLoc(), func, arguments);
  loop->erase();
  return func;
}

struct OutlineLoopNestsPass
    : public sbp::impl::SbpOutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      SmallVector<Operation *> nests;
      for (Block &block : func.getBody())
        for (Operation &op : block)
          if (isLoopNest(op))
            nests.push_back(&op);
      if (nests.size() <= minLoops)
        continue;
      Operation *previous = func;
      for (auto [i, nest] : llvm::enumerate(nests))
        previous = outline(nest, func, previous, symbols, i);
    }
  }
};
} // namespace
