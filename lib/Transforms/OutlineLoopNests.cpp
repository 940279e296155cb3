//===- OutlineLoopNests.cpp - One function per loop nest ------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
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
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureBufferSemantics();
  return isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0;
}

/// Whether a memref of `type` can be passed as a bare pointer: its sizes,
/// strides and offset are in its type (the callee rebuilds the rest).
bool isStaticMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return !isa<UnrankedMemRefType>(type);
  SmallVector<int64_t> strides;
  int64_t offset;
  return memref.hasStaticShape() &&
         succeeded(memref.getStridesAndOffset(strides, offset)) &&
         ShapedType::isStatic(offset) &&
         llvm::all_of(strides, ShapedType::isStatic);
}

/// A hash of `func`'s body that equivalent bodies share: op names,
/// attributes and types, not the values' identities or the locations.
llvm::hash_code hashBody(func::FuncOp func) {
  llvm::hash_code hash =
      llvm::hash_value(func.getFunctionType().getAsOpaquePointer());
  func.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// The outlined functions so far, by the hash of their bodies.
using OutlinedFunctions =
    llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>>;

/// Moves `loop` of `parent` into a private function and calls it in its
/// place: an equivalent one outlined before, else a new one placed after
/// `previous`. Returns the new function, or nothing.
func::FuncOp outline(Operation *loop, func::FuncOp parent, Operation *previous,
                     SymbolTable &symbols, unsigned index,
                     OutlinedFunctions &outlined) {
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
  // A memref descriptor is two pointers and two integers per dimension,
  // each unpacked for the call: most of a model's glue. A nest of static
  // shapes needs only the aligned pointer.
  if (llvm::all_of(type.getInputs(), isStaticMemRef))
    func->setAttr("llvm.bareptr", b.getUnitAttr());
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  for (Operation *constant : constants)
    b.clone(*constant, mapping);
  b.clone(*loop, mapping);
  func::ReturnOp::create(b, loop->getLoc());

  // The layers of a model repeat the same nests on other buffers: each is
  // compiled once, which divides LLVM's time by the number of layers.
  SmallVector<func::FuncOp, 1> &same = outlined[hashBody(func)];
  func::FuncOp callee = nullptr;
  for (func::FuncOp candidate : same)
    if (OperationEquivalence::isRegionEquivalentTo(
            &candidate.getBody(), &func.getBody(),
            OperationEquivalence::IgnoreLocations)) {
      callee = candidate;
      break;
    }
  if (callee) {
    func.erase();
    func = nullptr;
  } else {
    symbols.insert(func);
    same.push_back(func);
    callee = func;
  }
  b.setInsertionPoint(loop);
  func::CallOp::create(b, loop->getLoc(), callee, arguments);
  loop->erase();
  return func;
}

struct OutlineLoopNestsPass
    : public sbp::impl::SbpOutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    OutlinedFunctions outlined;
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
      unsigned index = 0;
      for (Operation *nest : nests)
        if (func::FuncOp outlinedFunc = outline(nest, func, previous, symbols,
                                                index, outlined)) {
          previous = outlinedFunc;
          ++index;
        }
      // What is left runs once a call: allocations, views and calls, tens
      // of thousands of instructions for a large model that LLVM would
      // optimize for nothing.
      bool hasLoops =
          func.walk([](LoopLikeOpInterface) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (!hasLoops && !func->hasAttr("passthrough")) {
        OpBuilder b(func);
        func->setAttr("passthrough",
                      b.getArrayAttr({b.getStringAttr("noinline"),
                                      b.getStringAttr("optnone")}));
      }
    }
  }
};
} // namespace
