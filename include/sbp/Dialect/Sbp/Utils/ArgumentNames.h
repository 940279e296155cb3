//===- ArgumentNames.h - How tools and options name arguments ---*- C++ -*-===//
//
// A function argument is named by its ONNX input's name (`onnx.name`), by
// the name a training step gave it (`sbp.name`), or by its number: `argN`
// or `N`. sbp-run's --input and --params and sbp-make-train-step's
// `params=` accept all of them; reports print the first that applies.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_DIALECT_SBP_UTILS_ARGUMENTNAMES_H
#define SBP_DIALECT_SBP_UTILS_ARGUMENTNAMES_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include <optional>
#include <string>

namespace mlir {
namespace sbp {

/// The name of argument `index` of `func`: its `onnx.name`, its `sbp.name`,
/// else `arg<index>`.
std::string getArgumentName(FunctionOpInterface func, unsigned index);

/// The argument of `func` that `name` names (an `onnx.name` or `sbp.name`,
/// `argN` or `N`), or nothing, also for a number past the last argument.
std::optional<unsigned> findArgument(FunctionOpInterface func, StringRef name);

} // namespace sbp
} // namespace mlir

#endif // SBP_DIALECT_SBP_UTILS_ARGUMENTNAMES_H
