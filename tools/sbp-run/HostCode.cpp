//===- HostCode.cpp - Object code for the host and its cache ---------------===//
//
// A large module is split into partitions that are optimized and compiled
// on threads of their own, each in an LLVMContext of its own (one context
// is not thread-safe): bitcode carries each partition across. The
// partitions link back together in the JIT or the saved library.
//
//===----------------------------------------------------------------------===//

#include "HostCode.h"
#include "sbp/HostCode/MergeSimilarFunctions.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/DeadArgumentElimination.h"
#include "llvm/Transforms/Scalar/ADCE.h"
#include "llvm/Transforms/Scalar/InstSimplifyPass.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include <algorithm>
#include <cstdlib>

using namespace ::sbp::run;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// Instructions per partition below which another thread costs more than
/// it saves (the module is copied through bitcode).
constexpr size_t kInstructionsPerPartition = 2000;

/// Partitions per thread: more partitions than threads keep every thread
/// busy while the largest partition (the glue, a big loop nest) compiles.
constexpr unsigned kPartitionsPerThread = 4;

/// The cache's size beyond which its least recently used entries go.
constexpr uint64_t kCacheLimitBytes = uint64_t(1) << 30;

/// The exported function that runs the module's global constructors.
constexpr StringRef kInitName = "sbp_program_init";

/// The prefix of the packed wrapper `_mlir_NAME` of each public function.
constexpr StringRef kWrapperPrefix = "_mlir_";

/// The first line of a cache entry; a new format changes it.
constexpr StringRef kCacheMagic = "sbp-objects 1\n";

Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// The host's target machine builder: its CPU and features, position
/// independent code (a saved program is a shared library), free to fuse
/// multiplies and adds (the vectorized matmuls multiply and accumulate in
/// separate ops).
Expected<llvm::orc::JITTargetMachineBuilder> getHostBuilder() {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return builder;
}

/// Calls the module's global constructors (the loads of its kernel images,
/// which the translation of `gpu.binary` creates) from one exported
/// function, `sbp_program_init`, and drops them from `llvm.global_ctors`:
/// neither the JIT nor sbp-exec's `dlopen` is left to run them, so both
/// call it, once.
void exportConstructors(llvm::Module &module) {
  llvm::SmallVector<llvm::orc::CtorDtorIterator::Element> ctors;
  for (llvm::orc::CtorDtorIterator::Element ctor :
       llvm::orc::getConstructors(module))
    if (ctor.Func)
      ctors.push_back(ctor);
  llvm::stable_sort(ctors, [](const auto &a, const auto &b) {
    return a.Priority < b.Priority;
  });
  llvm::LLVMContext &context = module.getContext();
  auto *init = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::GlobalValue::ExternalLinkage, kInitName, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "", init));
  for (const auto &ctor : ctors)
    builder.CreateCall(ctor.Func);
  builder.CreateRetVoid();
  if (llvm::GlobalVariable *list = module.getNamedGlobal("llvm.global_ctors"))
    list->eraseFromParent();
}

/// Defines `_mlir_NAME(void **args)` for each public function NAME, the
/// calling convention of MLIR's ExecutionEngine that sbp's entries use:
/// one pointer per argument (a memref descriptor's fields each), then one
/// to where the result goes.
void addPackedWrappers(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::SmallVector<llvm::Function *> publicFunctions;
  for (llvm::Function &func : module)
    if (!func.isDeclaration() && func.hasExternalLinkage() &&
        func.getName() != kInitName)
      publicFunctions.push_back(&func);
  for (llvm::Function *func : publicFunctions) {
    auto *type = llvm::FunctionType::get(builder.getVoidTy(),
                                         builder.getPtrTy(), false);
    auto *wrapper =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                               kWrapperPrefix + func->getName(), module);
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "", wrapper));
    llvm::Value *list = wrapper->getArg(0);
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : func->args()) {
      llvm::Value *slot = builder.CreateConstGEP1_64(builder.getPtrTy(), list,
                                                     arg.getArgNo());
      args.push_back(builder.CreateLoad(
          arg.getType(), builder.CreateLoad(builder.getPtrTy(), slot)));
    }
    llvm::Value *result = builder.CreateCall(func, args);
    if (!result->getType()->isVoidTy()) {
      llvm::Value *slot = builder.CreateConstGEP1_64(builder.getPtrTy(), list,
                                                     func->arg_size());
      builder.CreateStore(result, builder.CreateLoad(builder.getPtrTy(), slot));
    }
    builder.CreateRetVoid();
    // Inlined, a model's entry would be compiled twice. The wrapper is one
    // block of a load per descriptor field (thousands for a model), on
    // which the optimizing instruction selector takes seconds; it runs
    // once per call.
    func->addFnAttr(llvm::Attribute::NoInline);
    wrapper->addFnAttr(llvm::Attribute::NoInline);
    wrapper->addFnAttr(llvm::Attribute::OptimizeNone);
  }
}

/// Drops the arguments that functions do not read. A nest that takes
/// memref descriptors (one with a dynamic size or offset, which gets no
/// bare pointers) may read a few of their fields, and the glue packs a
/// descriptor for every buffer it allocates or views, mostly to unpack it
/// again for a call (MobileViT's glue: 19k lines of LLVM IR with bare
/// pointers, 6k after this). Only the packed wrappers and the constructors
/// stay visible; every other function becomes internal, which lets dead
/// argument elimination rewrite it with its callers. The cleanup (folding
/// the descriptors' inserts and extracts, deleting what is dead) is free of
/// the pass instrumentation that skips `optnone` functions, so that it
/// reaches the glue too.
void dropDeadArguments(llvm::Module &module) {
  for (llvm::Function &func : module)
    if (!func.isDeclaration() &&
        !func.getName().starts_with(kWrapperPrefix) &&
        func.getName() != kInitName)
      func.setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::FunctionPassManager cleanup;
  cleanup.addPass(llvm::InstSimplifyPass());
  cleanup.addPass(llvm::ADCEPass());
  llvm::ModulePassManager passes;
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(cleanup)));
  passes.addPass(llvm::DeadArgumentEliminationPass());
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::ADCEPass()));
  passes.run(module, modules);
}

/// Compiles `module` to an object file with `machine`.
Expected<std::string> emitObject(llvm::Module &module,
                                 llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return makeError("the host's target cannot emit object files");
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

/// Optimizes `module` at `optLevel` and compiles it with `machine`.
Expected<std::string> optimizeAndEmit(llvm::Module &module,
                                      llvm::TargetMachine &machine,
                                      unsigned optLevel) {
  if (Error error =
          mlir::makeOptimizingTransformer(optLevel, 0, nullptr)(&module))
    return std::move(error);
  return emitObject(module, machine);
}

/// Optimizes and compiles the bitcode of one partition in a context of its
/// own; at `optLevel` 0, compiles it without optimization.
Expected<std::string> compilePartition(StringRef bitcode,
                                       llvm::orc::JITTargetMachineBuilder
                                           builder,
                                       unsigned optLevel) {
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "partition"), context);
  if (!module)
    return module.takeError();
  if (optLevel == 0)
    builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  auto machine = builder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  if (optLevel == 0)
    return emitObject(**module, **machine);
  return optimizeAndEmit(**module, **machine, optLevel);
}

/// Moves the functions that are not to be optimized (`optnone`: the glue
/// that allocates buffers and calls the nests, the packed wrappers) into a
/// module of their own, returned as bitcode. `optnone` keeps the optimizer
/// away but not the optimizing code generator: the glue's one large block
/// took the greedy register allocator longer than compiling it at -O0
/// takes in all. The modules see each other's symbols as SplitModule's
/// partitions do: what was local becomes hidden.
std::optional<llvm::SmallString<0>> splitOffGlue(llvm::Module &module) {
  auto isGlue = [](const llvm::GlobalValue *value) {
    auto *func = llvm::dyn_cast<llvm::Function>(value);
    return func && !func->isDeclaration() && func->hasOptNone();
  };
  if (llvm::none_of(module,
                    [&](llvm::Function &func) { return isGlue(&func); }))
    return std::nullopt;
  for (llvm::GlobalValue &value : module.global_values()) {
    if (!value.hasLocalLinkage())
      continue;
    if (!value.hasName())
      value.setName("sbp.unnamed");
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> glue = llvm::CloneModule(module, map, isGlue);
  for (llvm::Function &func : module)
    if (isGlue(&func))
      func.deleteBody();
  llvm::SmallString<0> bitcode;
  llvm::raw_svector_ostream os(bitcode);
  llvm::WriteBitcodeToFile(*glue, os);
  return bitcode;
}

/// Inlines the module's internal functions that may be inlined (helpers
/// such as integer powers; loop nests and glue are `noinline`) into their
/// callers, and drops them: partitions optimized apart could not inline a
/// helper that another partition holds.
void inlineHelpers(llvm::Module &module) {
  llvm::SmallVector<llvm::CallBase *> calls;
  for (llvm::Function &func : module) {
    if (!func.hasLocalLinkage() || func.isDeclaration() ||
        func.hasFnAttribute(llvm::Attribute::NoInline))
      continue;
    for (llvm::User *user : func.users())
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(user))
        if (call->getCalledFunction() == &func && call->getFunction() != &func)
          calls.push_back(call);
  }
  for (llvm::CallBase *call : calls) {
    llvm::InlineFunctionInfo info;
    (void)llvm::InlineFunction(*call, info);
  }
  for (llvm::Function &func : llvm::make_early_inc_range(module))
    if (func.hasLocalLinkage() && func.use_empty())
      func.eraseFromParent();
}

/// A stream that hashes what it is given instead of keeping it: a module
/// with large constants is never held twice.
class HashingStream : public llvm::raw_ostream {
public:
  HashingStream() { SetUnbuffered(); }
  std::string getHex() {
    flush();
    return llvm::toHex(hasher.final(), /*LowerCase=*/true);
  }

private:
  void write_impl(const char *data, size_t size) override {
    hasher.update(StringRef(data, size));
    written += size;
  }
  uint64_t current_pos() const override { return written; }

  llvm::BLAKE3 hasher;
  uint64_t written = 0;
};

/// Removes the least recently used entries of `directory` while it holds
/// more than the limit.
void prune(StringRef directory) {
  struct Entry {
    std::string path;
    llvm::sys::TimePoint<> used;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status) ||
        !StringRef(it->path()).ends_with(".objects"))
      continue;
    entries.push_back(
        {it->path(), status.getLastModificationTime(), status.getSize()});
    total += status.getSize();
  }
  if (total <= kCacheLimitBytes)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= kCacheLimitBytes / 2)
      break;
    if (!llvm::sys::fs::remove(entry.path))
      total -= entry.size;
  }
}

} // namespace

Expected<ObjectFiles> sbp::run::compileForHost(mlir::ModuleOp module,
                                               unsigned optLevel,
                                               mlir::TimingScope &timing) {
  auto builder = getHostBuilder();
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  mlir::TimingScope translation = timing.nest("translation to LLVM IR");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return makeError("the module does not translate to LLVM IR");
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  exportConstructors(*llvmModule);
  addPackedWrappers(*llvmModule);
  translation.stop();
  {
    mlir::TimingScope cleanup = timing.nest("dead arguments");
    dropDeadArguments(*llvmModule);
  }
  {
    mlir::TimingScope merging = timing.nest("merging similar functions");
    sbp::mergeSimilarFunctions(*llvmModule);
  }

  size_t instructions = 0, functions = 0;
  for (llvm::Function &func : *llvmModule) {
    instructions += func.getInstructionCount();
    functions += !func.isDeclaration();
  }
  unsigned threads = llvm::hardware_concurrency().compute_thread_count();
  unsigned partitions = std::min<size_t>(
      {kPartitionsPerThread * threads, functions,
       std::max<size_t>(1, instructions / kInstructionsPerPartition)});
  if (partitions <= 1) {
    mlir::TimingScope compiling =
        timing.nest("optimization and code generation");
    auto object = optimizeAndEmit(*llvmModule, **machine, optLevel);
    if (!object)
      return object.takeError();
    return ObjectFiles{std::move(*object)};
  }

  mlir::TimingScope splitting = timing.nest("partitioning");
  inlineHelpers(*llvmModule);
  std::optional<llvm::SmallString<0>> glue = splitOffGlue(*llvmModule);
  std::vector<llvm::SmallString<0>> bitcode;
  llvm::SplitModule(
      *llvmModule, partitions,
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::raw_svector_ostream os(bitcode.emplace_back());
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  // The glue first: it is the largest partition.
  bool hasGlue = glue.has_value();
  if (hasGlue)
    bitcode.insert(bitcode.begin(), std::move(*glue));
  splitting.stop();
  mlir::TimingScope compiling = timing.nest(
      "optimization and code generation (" + std::to_string(bitcode.size()) +
      " partitions" + (hasGlue ? ", the glue's unoptimized" : "") + ")");
  std::vector<Expected<std::string>> objects;
  for (size_t i = 0; i < bitcode.size(); ++i)
    objects.emplace_back(std::string());
  {
    llvm::StdThreadPool pool(
        llvm::hardware_concurrency(std::min(threads, partitions)));
    for (size_t i = 0; i < bitcode.size(); ++i)
      pool.async([&, i] {
        objects[i] = compilePartition(bitcode[i], *builder,
                                      hasGlue && i == 0 ? 0 : optLevel);
      });
    pool.wait();
  }
  // Every partition's outcome is taken, so that no error goes unchecked.
  ObjectFiles result;
  Error failure = Error::success();
  for (Expected<std::string> &object : objects) {
    if (object)
      result.push_back(std::move(*object));
    else
      failure = llvm::joinErrors(std::move(failure), object.takeError());
  }
  if (failure)
    return std::move(failure);
  return result;
}

Expected<std::unique_ptr<LinkedCode>>
LinkedCode::link(const ObjectFiles &objects,
                 llvm::ArrayRef<std::string> libraries) {
  auto jit =
      llvm::orc::LLJITBuilder()
          .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession &session)
                                            -> Expected<std::unique_ptr<
                                                llvm::orc::ObjectLayer>> {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                session, [](const llvm::MemoryBuffer &) {
                  return std::make_unique<llvm::SectionMemoryManager>();
                });
          })
          .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  for (const std::string &library : libraries) {
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::Load(library.c_str(), prefix);
    if (!generator)
      return generator.takeError();
    main.addGenerator(std::move(*generator));
  }
  for (auto [i, object] : llvm::enumerate(objects))
    if (Error error = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            object, "sbp-program-" + std::to_string(i) + ".o")))
      return std::move(error);
  auto code = std::unique_ptr<LinkedCode>(new LinkedCode);
  code->jit = std::move(*jit);
  return code;
}

Expected<void *> LinkedCode::lookup(StringRef name) const {
  auto address = jit->lookup(name);
  if (!address) {
    // The error may refer to the JIT's strings: copy its message.
    return makeError(llvm::toString(address.takeError()));
  }
  return address->toPtr<void *>();
}

Error LinkedCode::initialize() {
  auto init = lookup(kInitName);
  if (!init)
    return init.takeError();
  reinterpret_cast<void (*)()>(*init)();
  return Error::success();
}

std::optional<CompileCache> CompileCache::open(StringRef flag) {
  CompileCache cache;
  if (!flag.empty()) {
    cache.directory = flag.str();
  } else if (const char *env = std::getenv("SBP_CACHE_DIR")) {
    cache.directory = env;
  } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    cache.directory = (StringRef(xdg) + "/sbp").str();
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    cache.directory = (StringRef(home) + "/.cache/sbp").str();
  }
  if (cache.directory.empty() || cache.directory == "off")
    return std::nullopt;

  // The host CPU, LLVM's version and this executable's build: a rebuilt
  // sbp-run may lower the same module differently.
  llvm::raw_string_ostream salt(cache.salt);
  salt << LLVM_VERSION_STRING << '\n';
  if (auto builder = getHostBuilder())
    salt << builder->getTargetTriple().str() << '\n'
         << builder->getCPU() << '\n'
         << builder->getFeatures().getString() << '\n';
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(self, status))
    salt << self << ' ' << status.getSize() << ' '
         << status.getLastModificationTime().time_since_epoch().count()
         << '\n';
  return cache;
}

std::string CompileCache::getKey(mlir::ModuleOp module,
                                 StringRef options) const {
  HashingStream stream;
  stream << salt << options << '\n';
  module->print(stream);
  return stream.getHex().substr(0, 32);
}

std::optional<ObjectFiles> CompileCache::load(StringRef key) const {
  std::string path = (directory + "/" + key + ".objects").str();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  StringRef rest = (*buffer)->getBuffer();
  if (!rest.consume_front(kCacheMagic))
    return std::nullopt;
  ObjectFiles objects;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    size_t size;
    if (line.getAsInteger(10, size) || tail.size() < size)
      return std::nullopt;
    objects.push_back(tail.take_front(size).str());
    rest = tail.drop_front(size);
  }
  // Recently used: the last to be pruned.
  int fd;
  if (!llvm::sys::fs::openFileForRead(path, fd)) {
    llvm::sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return objects;
}

void CompileCache::store(StringRef key, const ObjectFiles &objects) const {
  if (llvm::sys::fs::create_directories(directory))
    return;
  // Written beside the entry, then renamed over it: a reader sees the old
  // entry, the whole new one, or none.
  llvm::SmallString<128> temporary;
  int fd;
  if (llvm::sys::fs::createUniqueFile(directory + "/" + key + "-%%%%%%.tmp",
                                      fd, temporary))
    return;
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << kCacheMagic;
  for (const std::string &object : objects)
    os << object.size() << '\n' << object;
  os.close();
  bool failed = os.has_error();
  os.clear_error();
  if (failed ||
      llvm::sys::fs::rename(temporary, directory + "/" + key + ".objects")) {
    llvm::sys::fs::remove(temporary);
    return;
  }
  prune(directory);
}
