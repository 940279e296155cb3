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
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"
#include "sbp/Runtime/Memref.h"
#include "sbp/Transforms/Pipelines.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <cstring>
#include <set>

using namespace mlir;
using namespace ::sbp::run;
using ::sbp::runtime::Layout;
using ::sbp::runtime::LayoutEntry;
using ::sbp::runtime::NpyArray;

namespace {

/// The runtime type for `type`, or nothing.
std::optional<sbp_dtype> getDtype(Type type) {
  if (type.isF32())
    return SBP_F32;
  if (type.isF64())
    return SBP_F64;
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
       << "; sbp-run passes ranked tensors of f32, f64, i32, i64, i8 or i1";
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

} // namespace

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
                         bool optimize, bool useBlas, std::string &error) {
  // The host reuses its inputs (benchmark iterations, the reference run):
  // the program must not write into them.
  if (auto func = module.lookupSymbol<func::FuncOp>(entry))
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.setArgAttr(i, "bufferization.writable",
                      BoolAttr::get(module.getContext(), false));

  PassManager pm(module.getContext());
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

  // The options hold references: the transformer must outlive create().
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(3, 0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // memref.copy of strided memrefs calls MLIR's C runner utilities.
  SmallVector<StringRef> libs = {SBP_MLIR_C_RUNNER_UTILS};
  engineOptions.sharedLibPaths = libs;
  // For the host CPU, and free to fuse multiplies and adds: the vectorized
  // matmuls multiply and accumulate in separate ops.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = "no target for the host: " + llvm::toString(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = "no target machine for the host: " +
            llvm::toString(machine.takeError());
    return nullptr;
  }
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  auto program = std::unique_ptr<CompiledProgram>(new CompiledProgram);
  program->engine = std::move(*engine);
  program->backend = backend;
  auto packed = program->engine->lookupPacked(entry);
  if (!packed) {
    error = "no compiled function @" + entry.str() + ": " +
            llvm::toString(packed.takeError());
    return nullptr;
  }
  program->packed = *packed;
  return program;
}

void CompiledProgram::invoke(
    const std::vector<void *> &data,
    const std::vector<const std::vector<int64_t> *> &shapes,
    const std::vector<TensorSpec> &resultSpecs,
    std::vector<ReturnedBuffer> &returned) const {
  // Descriptor fields: allocated, aligned, offset, sizes, strides.
  size_t fields = 0;
  for (const std::vector<int64_t> *shape : shapes)
    fields += 3 + 2 * shape->size();
  std::vector<int64_t> descriptors(fields);
  std::vector<void *> pointers;
  int64_t *at = descriptors.data();
  for (size_t i = 0; i < data.size(); ++i) {
    const std::vector<int64_t> &shape = *shapes[i];
    int64_t rank = static_cast<int64_t>(shape.size());
    at[0] = at[1] = reinterpret_cast<int64_t>(data[i]);
    at[2] = 0;
    for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
      at[3 + d] = shape[d];
      at[3 + rank + d] = stride;
      stride *= shape[d];
    }
    for (int64_t f = 0; f < 3 + 2 * rank; ++f)
      pointers.push_back(at + f);
    at += 3 + 2 * rank;
  }
  size_t resultFields = 0;
  for (const TensorSpec &spec : resultSpecs)
    resultFields += 3 + 2 * spec.localShape.size();
  std::vector<int64_t> fieldsOut(resultFields);
  if (!resultSpecs.empty())
    pointers.push_back(fieldsOut.data());

  packed(pointers.data());

  returned.assign(resultSpecs.size(), ReturnedBuffer());
  at = fieldsOut.data();
  for (size_t i = 0; i < resultSpecs.size(); ++i) {
    int64_t rank = static_cast<int64_t>(resultSpecs[i].localShape.size());
    // The returned fields are a memref descriptor, dense: the deallocation
    // pipeline returns fresh buffers with the identity layout.
    runtime::MemrefView view(rank, at, resultSpecs[i].dtype);
    returned[i].allocated = reinterpret_cast<void *>(at[0]);
    returned[i].data = view.tensor.data;
    returned[i].shape.assign(view.tensor.shape, view.tensor.shape + rank);
    at += 3 + 2 * rank;
  }
}

void CompiledProgram::call(const std::vector<NpyArray *> &args,
                           const std::vector<TensorSpec> &resultSpecs,
                           std::vector<NpyArray> &results) const {
  std::vector<void *> data;
  std::vector<const std::vector<int64_t> *> shapes;
  for (NpyArray *arg : args) {
    data.push_back(arg->data.data());
    shapes.push_back(&arg->shape);
  }
  std::vector<ReturnedBuffer> returned;
  invoke(data, shapes, resultSpecs, returned);
  results.assign(resultSpecs.size(), NpyArray());
  // Results that are one value returned twice share their buffer: free
  // each buffer once.
  std::set<void *> owned;
  for (size_t i = 0; i < returned.size(); ++i) {
    NpyArray &result = results[i];
    result.dtype = resultSpecs[i].dtype;
    result.shape = returned[i].shape;
    result.data.resize(result.numElements() * sbp_dtype_size(result.dtype));
    std::memcpy(result.data.data(), returned[i].data, result.data.size());
    owned.insert(returned[i].allocated);
  }
  for (void *buffer : owned)
    std::free(buffer);
}
