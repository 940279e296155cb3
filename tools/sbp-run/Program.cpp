//===- Program.cpp - A compiled entry function and its calling ------------===//
//
// Arguments pass as MLIR's expanded memref descriptors through the packed
// wrapper that the ExecutionEngine generates for every function: one
// pointer per descriptor field, then one to the storage of the returned
// descriptors. Returned buffers belong to the caller (the deallocation
// pipeline clones anything it does not own), so they are copied out and
// freed.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Transforms/Pipelines.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <map>

using namespace mlir;
using namespace ::sbp::run;
using ::sbp::runtime::Layout;
using ::sbp::runtime::LayoutEntry;
using ::sbp::runtime::NpyArray;

namespace {

/// Whether `type` holds integers that can index (not i1 flags).
bool holdsIndices(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isIndex() ||
         (element.isInteger() && element.getIntOrFloatBitWidth() > 1);
}

/// Calls `visit` on every use of the values that `arg` becomes: itself,
/// the payload arguments of the linalg operands it reaches, the results
/// of the linalg ops that yield it, and the results of the other ops for
/// which `visit` returns true; only values `keep` accepts are followed.
void visitDerivedUses(BlockArgument arg, function_ref<bool(Value)> keep,
                      function_ref<bool(OpOperand &)> visit) {
  SmallVector<Value> worklist = {arg};
  llvm::DenseSet<Value> seen = {arg};
  auto follow = [&](Value value) {
    if (keep(value) && seen.insert(value).second)
      worklist.push_back(value);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *owner = use.getOwner();
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(owner)) {
        if (BlockArgument inner = linalgOp.getMatchingBlockArgument(&use))
          follow(inner);
      } else if (isa<linalg::YieldOp>(owner)) {
        follow(owner->getParentOp()->getResult(use.getOperandNumber()));
      } else if (visit(use)) {
        for (Value result : owner->getResults())
          follow(result);
      }
    }
  }
}

/// The smallest static dimension that the values of `arg` index, through
/// reshapes, copies, payloads and integer arithmetic (an importer's
/// wrapping of negative indices) to the index operands of
/// `tensor.extract`; 0 where they index nothing. Random inputs stay below
/// it: an embedding of two rows (BERT's token types) read at row 3 gives
/// NaN or garbage, not a test of the program.
int64_t getIndexBound(BlockArgument arg) {
  int64_t bound = 0;
  visitDerivedUses(
      arg, [](Value value) { return holdsIndices(value.getType()); },
      [&](OpOperand &use) {
        Operation *owner = use.getOwner();
        auto extract = dyn_cast<tensor::ExtractOp>(owner);
        if (!extract || use.getOperandNumber() == 0)
          return isa<arith::ArithDialect, tensor::TensorDialect>(
              owner->getDialect());
        int64_t size = extract.getTensor().getType().getDimSize(
            use.getOperandNumber() - 1);
        if (!ShapedType::isDynamic(size) && size > 0)
          bound = bound ? std::min(bound, size) : size;
        return false;
      });
  return bound;
}

/// Whether the program takes the square root or logarithm of the float
/// values of `arg` as they are or offset (through copies, reshapes,
/// broadcasts and additions): a batch-norm variance. Random values of
/// either sign there give NaN, not a test.
bool needsPositive(BlockArgument arg) {
  bool found = false;
  visitDerivedUses(
      arg, [](Value) { return true; },
      [&](OpOperand &use) {
        Operation *owner = use.getOwner();
        found |= isa<math::SqrtOp, math::RsqrtOp, math::LogOp>(owner);
        return isa<arith::AddFOp, arith::ExtFOp, arith::TruncFOp>(owner) ||
               (isa<tensor::TensorDialect>(owner->getDialect()) &&
                !isa<tensor::ExtractOp>(owner));
      });
  return found;
}

/// The runtime type for `type`, or nothing.
std::optional<sbp_dtype> getDtype(Type type) {
  if (type.isF32())
    return SBP_F32;
  if (type.isF64())
    return SBP_F64;
  if (type.isF16())
    return SBP_F16;
  if (type.isBF16())
    return SBP_BF16;
  if (type.isSignlessInteger(32))
    return SBP_I32;
  if (type.isSignlessInteger(64))
    return SBP_I64;
  if (type.isSignlessInteger(8) || type.isSignlessInteger(1))
    return SBP_I8;
  return std::nullopt;
}

std::optional<std::string> describe(Type type, DictionaryAttr attrs,
                                    const std::vector<int64_t> &mesh,
                                    TensorSpec &spec) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<sbp_dtype> dtype =
      tensor ? getDtype(tensor.getElementType()) : std::nullopt;
  if (!dtype) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << spec.name << " has type " << type
       << "; sbp-run passes ranked tensors of f32, f64, f16, bf16, i32, i64, "
          "i8 or i1";
    return message;
  }
  spec.dtype = *dtype;
  spec.isBool = tensor.getElementType().isSignlessInteger(1);
  llvm::raw_string_ostream(spec.typeName) << type;
  spec.localShape.assign(tensor.getShape().begin(), tensor.getShape().end());
  for (int64_t &size : spec.localShape)
    if (ShapedType::isDynamic(size))
      size = -1;
  spec.layout.meshShape = mesh;
  spec.layout.entries.assign(mesh.size(), LayoutEntry());
  auto sharding = attrs ? attrs.getAs<mlir::sbp::NdSbpAttr>(
                              mlir::sbp::SbpDialect::getShardingAttrName())
                        : nullptr;
  if (!sharding)
    return std::nullopt;
  if (sharding.size() != mesh.size())
    return spec.name + " has a layout for another mesh";
  for (auto [i, entry] : llvm::enumerate(sharding.getEntries())) {
    LayoutEntry &out = spec.layout.entries[i];
    if (entry.isSplit()) {
      out.kind = LayoutEntry::Split;
      out.dim = entry.getDim();
    } else if (entry.isPartial()) {
      out.kind = LayoutEntry::Partial;
      out.reduction = static_cast<sbp_reduction>(entry.getReduction());
    }
  }
  return std::nullopt;
}

/// Another function of a compiled program.
class FunctionEntry : public EntryPoint {
public:
  FunctionEntry(void (*function)(void **), Backend kind) {
    packed = function;
    backend = kind;
  }
};

} // namespace

auto ::sbp::run::describePipeline(ModuleOp module,
                                  const std::vector<int64_t> &mesh,
                                  Pipeline &pipeline,
                                  std::vector<std::string> &stageNames)
    -> std::optional<std::string> {
  // The verifier checked the attribute's form.
  auto dict = module->getAttrOfType<DictionaryAttr>(
      mlir::sbp::SbpDialect::getPipelineAttrName());
  pipeline.microBatches =
      dict.getAs<IntegerAttr>("micro_batches").getValue().getSExtValue();
  pipeline.schedule = *::sbp::runtime::parseSchedule(
      dict.getAs<StringAttr>("schedule").getValue().str());
  auto backward = dict.getAs<ArrayAttr>("backward");
  auto update = dict.getAs<ArrayAttr>("update");
  pipeline.training = backward != nullptr;
  // One program of a stage, its arguments' sources read.
  auto describeProgram =
      [&](Attribute ref, StageProgram &program) -> std::optional<std::string> {
    auto func = module.lookupSymbol<func::FuncOp>(
        cast<FlatSymbolRefAttr>(ref).getValue());
    std::string name = "@" + func.getSymName().str();
    if (auto error = describeEntry(func, mesh, program.args, program.results))
      return name + ": " + *error;
    // The forward returns, after its own results, what its loops saved
    // (`{saved = J}`, first) and then what it received, in argument order.
    int64_t numSaved = 0;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto source = func.getArgAttrOfType<DictionaryAttr>(
              i, mlir::sbp::SbpDialect::getSourceAttrName()))
        numSaved += source.contains("saved");
    int64_t saved = numSaved;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto source = func.getArgAttrOfType<DictionaryAttr>(
          i, mlir::sbp::SbpDialect::getSourceAttrName());
      if (!source)
        return name + ": argument #" + std::to_string(i) + " has no sbp.source";
      StageSource from;
      if (auto input = source.getAs<IntegerAttr>("input")) {
        from.input = input.getInt();
        if (auto dim = source.getAs<IntegerAttr>("micro_batch_dim"))
          from.microBatchDim = dim.getInt();
        if (auto offset = source.getAs<IntegerAttr>("offset")) {
          from.offset = offset.getInt();
          from.rows =
              cast<ShapedType>(func.getArgumentTypes()[i]).getDimSize(0);
        }
      } else if (auto gradient = source.getAs<IntegerAttr>("gradient")) {
        from.kind = StageSource::Gradient;
        from.index = gradient.getInt();
      } else if (auto value = source.getAs<IntegerAttr>("saved");
                 value && llvm::is_contained(backward, ref)) {
        from.kind = StageSource::Saved;
        from.index = value.getInt();
        if (from.index >= numSaved)
          return name + ": argument #" + std::to_string(i) +
                 " is saved value #" + std::to_string(from.index) + " of " +
                 std::to_string(numSaved);
      } else if (pipeline.training && source.contains("stage") &&
                 llvm::is_contained(backward, ref)) {
        // What the forward received, as it saved it.
        from.kind = StageSource::Saved;
        from.index = saved++;
      } else {
        return name + ": argument #" + std::to_string(i) +
               " comes from another stage; run sbp-insert-transfers";
      }
      program.sources.push_back(from);
    }
    stageNames.push_back(func.getSymName().str());
    return std::nullopt;
  };
  for (auto [k, ref] : llvm::enumerate(dict.getAs<ArrayAttr>("stages"))) {
    PipelineStage stage;
    if (auto error = describeProgram(ref, stage))
      return error;
    if (pipeline.training) {
      if (auto error = describeProgram(backward[k], stage.backward))
        return error;
      if (auto error = describeProgram(update[k], stage.update))
        return error;
      // The parameters and state stay in the stage between steps in the
      // update's layouts, which the forward and backward must share.
      std::map<std::pair<int64_t, int64_t>, const TensorSpec *> kept;
      for (auto [spec, source] :
           llvm::zip(stage.update.args, stage.update.sources))
        if (source.kind == StageSource::Input)
          kept[{source.input, source.offset}] = &spec;
      for (StageProgram *program : {(StageProgram *)&stage, &stage.backward})
        for (auto [spec, source] : llvm::zip(program->args, program->sources)) {
          auto it = kept.find({source.input, source.offset});
          if (source.kind == StageSource::Input && it != kept.end() &&
              spec.layout.entries != it->second->layout.entries)
            return "stage " + std::to_string(k) + ": input #" +
                   std::to_string(source.input) +
                   " is laid out differently in its forward or backward "
                   "than in its update";
        }
      for (auto [spec, result] :
           llvm::zip(stage.update.args, stage.update.results))
        if (spec.layout.entries != result.layout.entries)
          return "@" + stageNames.back() +
                 ": an updated value is not laid out as its argument";
    }
    pipeline.stages.push_back(std::move(stage));
  }
  for (Attribute element : dict.getAs<ArrayAttr>("outputs")) {
    auto output = cast<DictionaryAttr>(element);
    PipelineOutput out;
    if (auto stages = output.getAs<ArrayAttr>("stage")) {
      // The verifier checked both arrays' forms.
      for (auto [s, r] : llvm::zip(stages, output.getAs<ArrayAttr>("result")))
        out.rows.emplace_back(cast<IntegerAttr>(s).getInt(),
                              cast<IntegerAttr>(r).getInt());
      std::tie(out.stage, out.result) = out.rows.front();
    } else {
      out.stage = output.getAs<IntegerAttr>("stage").getInt();
      out.result = output.getAs<IntegerAttr>("result").getInt();
    }
    StringRef combine = output.getAs<StringAttr>("combine").getValue();
    out.combine = combine == "concat" ? PipelineOutput::Concat
                  : combine == "sum"  ? PipelineOutput::Sum
                                      : PipelineOutput::Same;
    if (auto dim = output.getAs<IntegerAttr>("dim"))
      out.dim = dim.getInt();
    out.update = output.contains("update");
    pipeline.outputs.push_back(out);
  }
  return std::nullopt;
}

auto ::sbp::run::describeEntry(func::FuncOp func,
                               const std::vector<int64_t> &mesh,
                               std::vector<TensorSpec> &args,
                               std::vector<TensorSpec> &results)
    -> std::optional<std::string> {
  args.assign(func.getNumArguments(), TensorSpec());
  results.assign(func.getNumResults(), TensorSpec());
  for (unsigned i = 0; i < args.size(); ++i) {
    args[i].name = "arg" + std::to_string(i);
    if (auto error = describe(func.getArgumentTypes()[i],
                              func.getArgAttrDict(i), mesh, args[i]))
      return error;
    if (!args[i].isBool && holdsIndices(func.getArgumentTypes()[i]) &&
        !func.isExternal())
      args[i].indexBound = getIndexBound(func.getArgument(i));
    if (isa<FloatType>(getElementTypeOrSelf(func.getArgumentTypes()[i])) &&
        !func.isExternal())
      args[i].positive = needsPositive(func.getArgument(i));
  }
  for (unsigned i = 0; i < results.size(); ++i) {
    results[i].name = "result" + std::to_string(i);
    if (auto error = describe(func.getResultTypes()[i],
                              func.getResultAttrDict(i), mesh, results[i]))
      return error;
  }
  return std::nullopt;
}

std::unique_ptr<CompiledProgram>
CompiledProgram::compile(ModuleOp module, StringRef entry, Backend backend,
                         bool optimize, bool useBlas, std::string &error,
                         const CompileCache *cache, TimingScope &timing) {
  // The host reuses its inputs (benchmark iterations, the reference run,
  // a pipeline's micro-batches): no function it calls may write into them.
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0, e = func.isExternal() ? 0 : func.getNumArguments();
         i < e; ++i)
      func.setArgAttr(i, "bufferization.writable",
                      BoolAttr::get(module.getContext(), false));

  auto program = std::unique_ptr<CompiledProgram>(new CompiledProgram);
  program->backend = backend;
  std::string key;
  if (cache) {
    TimingScope hashing = timing.nest("compile cache lookup");
    key = cache->getKey(module, "backend=" + std::to_string(int(backend)) +
                                    " optimize=" + std::to_string(optimize) +
                                    " blas=" + std::to_string(useBlas));
    if (std::optional<ObjectFiles> objects = cache->load(key))
      program->objects = std::move(*objects);
  }

  if (program->objects.empty()) {
    TimingScope lowering = timing.nest("lowering to LLVM");
    PassManager pm(module.getContext());
    pm.enableTiming(lowering);
    if (backend != Backend::Cpu) {
      mlir::sbp::LowerGpuOptions options;
      options.emulate = backend == Backend::EmulatedCuda;
      mlir::sbp::buildLowerGpuPipeline(pm, options);
    } else {
      mlir::sbp::LowerCpuOptions options;
      options.useBlas = optimize && useBlas;
      options.vectorize = optimize;
      mlir::sbp::buildLowerCpuPipeline(pm, options);
    }
    if (failed(pm.run(module))) {
      error = backend != Backend::Cpu ? "lowering to CUDA kernels failed"
                                      : "lowering to LLVM failed";
      return nullptr;
    }
    lowering.stop();
    TimingScope codegen = timing.nest("LLVM optimization and code generation");
    auto objects = compileForHost(module, /*optLevel=*/2, codegen);
    if (!objects) {
      error = "compiling for the host failed: " +
              llvm::toString(objects.takeError());
      return nullptr;
    }
    program->objects = std::move(*objects);
    if (cache)
      cache->store(key, program->objects);
  }

  TimingScope linking = timing.nest("linking");
  // memref.copy of strided memrefs calls MLIR's C runner utilities.
  auto code = LinkedCode::link(program->objects, {SBP_MLIR_C_RUNNER_UTILS});
  if (!code) {
    error = "linking the program failed: " + llvm::toString(code.takeError());
    return nullptr;
  }
  program->code = std::move(*code);
  auto packed = program->code->lookup("_mlir_" + entry.str());
  if (!packed) {
    error = "no compiled function @" + entry.str() + ": " +
            llvm::toString(packed.takeError());
    return nullptr;
  }
  program->packed = reinterpret_cast<void (*)(void **)>(*packed);
  if (llvm::Error problem = program->code->initialize()) {
    error = "the program's initialization failed: " +
            llvm::toString(std::move(problem));
    return nullptr;
  }
  return program;
}

std::unique_ptr<EntryPoint> CompiledProgram::lookup(StringRef name,
                                                    std::string &error) const {
  auto packed = code->lookup("_mlir_" + name.str());
  if (!packed) {
    error = "no compiled function @" + name.str() + ": " +
            llvm::toString(packed.takeError());
    return nullptr;
  }
  return std::make_unique<FunctionEntry>(
      reinterpret_cast<void (*)(void **)>(*packed), backend);
}

bool CompiledProgram::save(const std::string &path, std::string &error) const {
  auto compiler = llvm::sys::findProgramByName("cc");
  if (!compiler) {
    error = "no C compiler driver (cc) to link " + path;
    return false;
  }
  std::vector<std::string> files;
  for (auto [i, object] : llvm::enumerate(objects)) {
    files.push_back(path + "." + std::to_string(i) + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream os(files.back(), ec);
    os << object;
    if (ec || (os.close(), os.has_error())) {
      os.clear_error();
      error = "cannot write " + files.back();
      for (const std::string &file : files)
        llvm::sys::fs::remove(file);
      return false;
    }
  }
  // Host programs may call MLIR's C runner utilities (strided copies).
  std::vector<llvm::StringRef> args = {*compiler, "-shared", "-o", path};
  args.insert(args.end(), files.begin(), files.end());
  if (backend != Backend::Cuda)
    args.push_back(SBP_MLIR_C_RUNNER_UTILS);
  args.push_back("-lm");
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*compiler, args, std::nullopt, {}, 0,
                                         0, &message);
  for (const std::string &file : files)
    llvm::sys::fs::remove(file);
  if (status != 0) {
    error = "linking " + path + " failed" +
            (message.empty() ? std::string() : ": " + message);
    return false;
  }
  return true;
}
