//===- InputFile.h - Reading sbp tool inputs --------------------*- C++ -*-===//

#ifndef SBP_TOOLS_INPUTFILE_H
#define SBP_TOOLS_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <string>

namespace mlir {
namespace sbp {

/// Rewrites `sbp.annotate %x #sbp.nd<...> : T` and
/// `sbp.boxing %x #sbp.nd<...> -> #sbp.nd<...> : T` into the form MLIR's
/// parser can read, `%x, <...>` with the attributes stripped of their
/// `#sbp.nd` prefix: as written, the parser takes `%x #...` for a result
/// number and `#sbp.nd<...> : T` for a typed attribute. Characters are
/// replaced by spaces rather than removed, so that every line and column
/// number stays as it was for diagnostics.
std::string normalizeSbpSyntax(llvm::StringRef text);

/// Opens `filename` ("-" for stdin) as an MLIR buffer for the sbp tools,
/// keeping its name for diagnostics. Returns null and sets `errorMessage`
/// when it cannot be read.
std::unique_ptr<llvm::MemoryBuffer> openSbpInputFile(llvm::StringRef filename,
                                                     std::string *errorMessage);

} // namespace sbp
} // namespace mlir

#endif // SBP_TOOLS_INPUTFILE_H
