//===- HostCode.h - Object code for the host and its cache -----*- C++ -*-===//
//
// sbp-run compiles a lowered module (LLVM dialect) to object code itself
// rather than through MLIR's ExecutionEngine, for three things the engine
// cannot do: keep the objects in a persistent cache, compile a large
// module's partitions on several threads, and load object code that it did
// not compile in this process.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUN_HOSTCODE_H
#define SBP_RUN_HOSTCODE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sbp::run {

/// Object files, each an ELF relocatable of the host.
using ObjectFiles = std::vector<std::string>;

/// Compiles `module` (LLVM dialect) for the host CPU: translated to LLVM IR
/// with a packed wrapper `_mlir_NAME(void **)` for each public function and
/// its global constructors exported as `sbp_program_init`, optimized at
/// `optLevel` and compiled position-independent, a large module in
/// partitions on as many threads as the hardware has (its functions alike
/// merged first, its `optnone` glue compiled apart without optimization).
/// Its steps are timed under `timing`.
llvm::Expected<ObjectFiles> compileForHost(mlir::ModuleOp module,
                                           unsigned optLevel,
                                           mlir::TimingScope &timing);

/// `objects` linked into this process by ORC's JIT, their undefined symbols
/// resolved in the process and in `libraries`.
class LinkedCode {
public:
  static llvm::Expected<std::unique_ptr<LinkedCode>>
  link(const ObjectFiles &objects, llvm::ArrayRef<std::string> libraries);

  /// The address of `name`.
  llvm::Expected<void *> lookup(llvm::StringRef name) const;

  /// Runs the program's global constructors once (loads of kernel images).
  llvm::Error initialize();

private:
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

/// A persistent cache of object code by a key that names everything the
/// code depends on: the module, the lowering's options, the host CPU and
/// this compiler's build. Entries are written atomically, so processes may
/// share it; the least recently used are removed beyond its size limit.
class CompileCache {
public:
  /// The cache at `directory`: the flag's value, else $SBP_CACHE_DIR, else
  /// $XDG_CACHE_HOME/sbp, else ~/.cache/sbp; nothing for "off" (or an
  /// empty $SBP_CACHE_DIR).
  static std::optional<CompileCache> open(llvm::StringRef directory);

  /// The key of `module` lowered with `options` (any text naming them).
  std::string getKey(mlir::ModuleOp module, llvm::StringRef options) const;

  /// The entry of `key`, or nothing.
  std::optional<ObjectFiles> load(llvm::StringRef key) const;

  /// Stores `objects` as `key`'s entry; failures only skip the cache.
  void store(llvm::StringRef key, const ObjectFiles &objects) const;

  llvm::StringRef getDirectory() const { return directory; }

private:
  std::string directory;
  /// The host CPU and this build, which every key includes.
  std::string salt;
};

} // namespace sbp::run

#endif // SBP_RUN_HOSTCODE_H
