//===- ImportShardings.cpp - XLA and Shardy shardings as sbp layouts ------===//
//
// GSPMD's sharding strings (`mhlo.sharding` on arguments and results, the
// `@Sharding` custom call) go through HloShardingSet, which builds one mesh
// for the module; Shardy's meshes name their axes, and each becomes an
// `sbp.mesh` of the same name.
//
//===----------------------------------------------------------------------===//

#include "HloSharding.h"
#include "StablehloToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::stablehlo_import;
namespace shlo = mlir::sbp::stablehlo;

namespace {
constexpr StringLiteral kHloSharding = "mhlo.sharding";
} // namespace

LogicalResult stablehlo_import::importHloShardings(ModuleOp module) {
  HloShardingSet set;
  struct Use {
    Operation *op;
    int index;
    std::optional<unsigned> argument, result;
  };
  SmallVector<Use> uses;
  std::string error;
  bool failed = false;
  auto addSharding = [&](Operation *op, Attribute attr) -> int {
    auto text = dyn_cast_or_null<StringAttr>(attr);
    if (!text) {
      op->emitError("expected a string for mhlo.sharding");
      failed = true;
      return -1;
    }
    int index = set.add(text.getValue(), error);
    if (index < 0) {
      op->emitError(error);
      failed = true;
    }
    return index;
  };
  // Pre-order, so that a function's arguments come before its body.
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (Attribute attr = func.getArgAttr(i, kHloSharding)) {
          int index = addSharding(op, attr);
          func.removeArgAttr(i, kHloSharding);
          if (index >= 0)
            uses.push_back({op, index, i, std::nullopt});
        }
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (Attribute attr = func.getResultAttr(i, kHloSharding)) {
          int index = addSharding(op, attr);
          func.removeResultAttr(
              i, StringAttr::get(op->getContext(), kHloSharding));
          if (index >= 0)
            uses.push_back({op, index, std::nullopt, i});
        }
      return;
    }
    auto call = dyn_cast<shlo::CustomCallOp>(op);
    if (!call || call.getCallTargetName() != "Sharding")
      return;
    if (call.getNumOperands() != 1 || call.getNumResults() != 1) {
      op->emitError("a @Sharding custom call takes one operand");
      failed = true;
      return;
    }
    int index = addSharding(op, op->getAttr(kHloSharding));
    if (index >= 0)
      uses.push_back({op, index, std::nullopt, std::nullopt});
  });
  if (failed)
    return failure();
  if (!set.buildMesh(error))
    return module.emitError(error);
  MLIRContext *ctx = module.getContext();
  FlatSymbolRefAttr meshRef;
  if (!set.getMeshShape().empty()) {
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto mesh = MeshOp::create(b, module.getLoc(), "mesh", set.getMeshShape(),
                               ArrayAttr());
    meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
    // A name taken already gets a suffix.
    if (SymbolTable(module).lookup("mesh") != mesh.getOperation())
      meshRef = FlatSymbolRefAttr::get(
          SymbolTable(module).insert(mesh.getOperation()));
  }
  for (const Use &use : uses) {
    SmallVector<SbpEntry> entries;
    if (!set.getEntries(use.index, entries, error))
      return use.op->emitError(error);
    bool replicated = llvm::all_of(
        entries, [](const SbpEntry &e) { return e.isBroadcast(); });
    NdSbpAttr sharding =
        meshRef ? NdSbpAttr::get(ctx, meshRef, entries) : NdSbpAttr();
    StringRef name = SbpDialect::getShardingAttrName();
    if (use.argument || use.result) {
      auto func = cast<func::FuncOp>(use.op);
      if (sharding && !replicated && use.argument)
        func.setArgAttr(*use.argument, name, sharding);
      if (sharding && !replicated && use.result)
        func.setResultAttr(*use.result, name, sharding);
      continue;
    }
    Value input = use.op->getOperand(0);
    Value replacement = input;
    if (sharding) {
      OpBuilder b(use.op);
      replacement = AnnotateOp::create(b, use.op->getLoc(), input, sharding);
    }
    use.op->getResult(0).replaceAllUsesWith(replacement);
    use.op->erase();
  }
  return success();
}

LogicalResult stablehlo_import::importShardyShardings(ModuleOp module) {
  llvm::StringMap<sdy::MeshAttr> meshes;
  for (sdy::MeshOp mesh :
       llvm::make_early_inc_range(module.getOps<sdy::MeshOp>())) {
    meshes[mesh.getSymName()] = mesh.getMesh();
    OpBuilder b(mesh);
    SmallVector<StringRef> names;
    for (Attribute name : mesh.getMesh().getNames())
      names.push_back(cast<StringAttr>(name).getValue());
    MeshOp::create(b, mesh.getLoc(), mesh.getSymName(),
                   mesh.getMesh().getSizes(), b.getStrArrayAttr(names));
    mesh.erase();
  }
  auto convert = [&](Operation *at,
                     sdy::TensorShardingAttr sharding) -> FailureOr<NdSbpAttr> {
    StringRef meshName = sharding.getMesh().getValue();
    auto it = meshes.find(meshName);
    if (it == meshes.end())
      return at->emitError() << "no sdy.mesh @" << meshName;
    ArrayAttr names = it->second.getNames();
    SmallVector<SbpEntry> entries(names.size(), SbpEntry::broadcast());
    for (auto [dim, axes] : llvm::enumerate(sharding.getDims())) {
      int64_t last = -1;
      for (Attribute axis : cast<ArrayAttr>(axes)) {
        const auto *found = llvm::find(names, axis);
        if (found == names.end())
          return at->emitError()
                 << "mesh @" << meshName << " has no axis " << axis;
        int64_t index = found - names.begin();
        if (index < last)
          return at->emitError()
                 << "dimension " << dim
                 << " is split over mesh axes out of mesh order";
        last = index;
        entries[index] = SbpEntry::split(dim);
      }
    }
    return NdSbpAttr::get(module.getContext(), sharding.getMesh(), entries);
  };
  constexpr StringLiteral kSdySharding = "sdy.sharding";
  StringRef name = SbpDialect::getShardingAttrName();
  WalkResult result = module.walk([&](Operation *op) -> WalkResult {
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (auto attr = func.getArgAttrOfType<sdy::TensorShardingAttr>(
                i, kSdySharding)) {
          FailureOr<NdSbpAttr> nd = convert(op, attr);
          if (failed(nd))
            return WalkResult::interrupt();
          func.removeArgAttr(i, kSdySharding);
          if (!nd->isReplicated())
            func.setArgAttr(i, name, *nd);
        }
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (auto attr = func.getResultAttrOfType<sdy::TensorShardingAttr>(
                i, kSdySharding)) {
          FailureOr<NdSbpAttr> nd = convert(op, attr);
          if (failed(nd))
            return WalkResult::interrupt();
          func.removeResultAttr(
              i, StringAttr::get(op->getContext(), kSdySharding));
          if (!nd->isReplicated())
            func.setResultAttr(i, name, *nd);
        }
      return WalkResult::advance();
    }
    auto constraint = dyn_cast<sdy::ShardingConstraintOp>(op);
    if (!constraint)
      return WalkResult::advance();
    FailureOr<NdSbpAttr> nd = convert(op, constraint.getSharding());
    if (failed(nd))
      return WalkResult::interrupt();
    OpBuilder b(op);
    Value annotated =
        AnnotateOp::create(b, op->getLoc(), constraint.getInput(), *nd);
    constraint.getResult().replaceAllUsesWith(annotated);
    op->erase();
    return WalkResult::skip();
  });
  return failure(result.wasInterrupted());
}
