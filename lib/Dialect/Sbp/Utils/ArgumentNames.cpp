//===- ArgumentNames.cpp - How tools and options name arguments -----------===//

#include "sbp/Dialect/Sbp/Utils/ArgumentNames.h"
#include "sbp/Dialect/Sbp/IR/Sbp.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {
/// The attributes that name an argument, in order of precedence.
constexpr StringLiteral kNameKeys[] = {"onnx.name",
                                       SbpDialect::getNameAttrName()};
} // namespace

std::string sbp::getArgumentName(FunctionOpInterface func, unsigned index) {
  for (StringRef key : kNameKeys)
    if (auto name = func.getArgAttrOfType<StringAttr>(index, key))
      return name.str();
  return "arg" + std::to_string(index);
}

std::optional<unsigned> sbp::findArgument(FunctionOpInterface func,
                                          StringRef name) {
  unsigned numArgs = func.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i)
    for (StringRef key : kNameKeys)
      if (auto argName = func.getArgAttrOfType<StringAttr>(i, key);
          argName && argName.getValue() == name)
        return i;
  StringRef number = name.starts_with("arg") ? name.drop_front(3) : name;
  unsigned index;
  if (number.getAsInteger(10, index) || index >= numArgs)
    return std::nullopt;
  return index;
}
