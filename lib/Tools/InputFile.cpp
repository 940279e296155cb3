//===- InputFile.cpp - Reading sbp tool inputs ----------------------------===//

#include "sbp/Tools/InputFile.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {
bool isValueNameChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

size_t skipSpace(StringRef text, size_t pos) {
  while (pos < text.size() && llvm::isSpace(text[pos]))
    ++pos;
  return pos;
}

constexpr StringLiteral kNdPrefix = "#sbp.nd<";
} // namespace

std::string sbp::normalizeSbpSyntax(StringRef text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find("sbp.", pos);
    if (hit == StringRef::npos)
      break;
    size_t afterName = StringRef::npos;
    for (StringRef name : {"sbp.annotate", "sbp.boxing"})
      if (text.substr(hit).starts_with(name) &&
          (hit + name.size() == text.size() ||
           !isValueNameChar(text[hit + name.size()])))
        afterName = hit + name.size();
    if (afterName == StringRef::npos ||
        (hit > 0 && (isValueNameChar(text[hit - 1]) || text[hit - 1] == '"'))) {
      out.append(text.substr(pos, hit + 4 - pos));
      pos = hit + 4;
      continue;
    }
    // `%name` or `%name#N`, after some whitespace.
    size_t cur = afterName;
    while (cur < text.size() && (text[cur] == ' ' || text[cur] == '\t'))
      ++cur;
    size_t operandEnd = cur;
    if (cur < text.size() && text[cur] == '%') {
      operandEnd = cur + 1;
      while (operandEnd < text.size() && isValueNameChar(text[operandEnd]))
        ++operandEnd;
      if (operandEnd < text.size() && text[operandEnd] == '#' &&
          operandEnd + 1 < text.size() && llvm::isDigit(text[operandEnd + 1])) {
        ++operandEnd;
        while (operandEnd < text.size() && llvm::isDigit(text[operandEnd]))
          ++operandEnd;
      }
    }
    out.append(text.substr(pos, operandEnd - pos));
    pos = operandEnd;
    size_t attr = skipSpace(text, operandEnd);
    if (operandEnd == cur || attr == operandEnd ||
        !text.substr(attr).starts_with(kNdPrefix))
      continue;
    // `%x #sbp.nd<` becomes `%x,       <`: a comma in place of the space
    // (or before a newline) and the attribute in its stripped form.
    out.push_back(',');
    if (text[operandEnd] == ' ' || text[operandEnd] == '\t')
      ++pos;
    // Each nd-SBP of the op, `A -> B` for boxing.
    while (attr < text.size() && text.substr(attr).starts_with(kNdPrefix)) {
      out.append(text.substr(pos, attr - pos));
      out.append(kNdPrefix.size() - 1, ' ');
      pos = attr + kNdPrefix.size() - 1;
      size_t close = text.find('>', pos);
      if (close == StringRef::npos)
        break;
      size_t next = skipSpace(text, close + 1);
      if (!text.substr(next).starts_with("->"))
        break;
      attr = skipSpace(text, next + 2);
    }
  }
  out.append(text.substr(pos));
  return out;
}

std::unique_ptr<llvm::MemoryBuffer>
sbp::openSbpInputFile(StringRef filename, std::string *errorMessage) {
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(filename, errorMessage);
  if (!file)
    return nullptr;
  StringRef text = file->getBuffer();
  // Binary inputs (an ONNX model starts with byte 0x08) are left as read.
  if (!text.contains("sbp.") || text.starts_with("\x08"))
    return file;
  return llvm::MemoryBuffer::getMemBufferCopy(normalizeSbpSyntax(text),
                                              file->getBufferIdentifier());
}
