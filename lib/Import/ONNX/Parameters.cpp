//===- Parameters.cpp - Which weights of an ONNX model are trained --------===//
//
// Exporters hold more than the framework's parameters as initializers: the
// buffers of the model (rotary frequencies, position ids), tensors they
// computed from constants and folded (rotary tables, attention masks), and
// parameters they rewrote (a linear layer's weight transposed). PyTorch's
// exporter records which is which: each graph input of the exported program
// carries its kind (PARAMETER, BUFFER, CONSTANT_TENSOR) in the metadata of
// its value, the graph holds the program's signature, and its optimizer
// records the values each folded initializer was computed from. The ONNX
// library sbp links predates those metadata fields, so they are read from
// the fields protobuf keeps as unknown.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "llvm/ADT/StringExtras.h"
#include <google/protobuf/unknown_field_set.h>

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// `metadata_props` of ValueInfoProto and GraphProto (ONNX 1.16).
constexpr int kValueInfoMetadata = 4;
constexpr int kGraphMetadata = 16;

constexpr StringLiteral kKindKey =
    "pkg.torch.export.graph_signature.InputSpec.kind";
constexpr StringLiteral kSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";
constexpr StringLiteral kFoldedFromKey =
    "pkg.onnxscript.optimizer.folded_from";

/// The key-value pairs in field `number` of `message`, which this ONNX
/// library does not know.
std::vector<std::pair<std::string, std::string>>
readMetadata(const google::protobuf::Message &message, int number) {
  std::vector<std::pair<std::string, std::string>> entries;
  const google::protobuf::UnknownFieldSet &fields =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField &field = fields.field(i);
    if (field.number() != number ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()))
      entries.emplace_back(entry.key(), entry.value());
  }
  return entries;
}

/// The quoted names of a Python list's repr: "['a', 'b']".
SmallVector<std::string> parseNames(StringRef list) {
  SmallVector<std::string> names;
  while (true) {
    size_t open = list.find_first_of("'\"");
    if (open == StringRef::npos)
      break;
    char quote = list[open];
    size_t close = list.find(quote, open + 1);
    if (close == StringRef::npos)
      break;
    names.push_back(list.slice(open + 1, close).str());
    list = list.drop_front(close + 1);
  }
  return names;
}

} // namespace

ParameterRecord onnx_import::readParameterRecord(const onnx::ModelProto &model) {
  ParameterRecord record;
  const onnx::GraphProto &graph = model.graph();
  // Signature lines: "p_x_weight: PARAMETER target='x.weight'".
  for (const auto &[key, value] : readMetadata(graph, kGraphMetadata)) {
    if (key != kSignatureKey)
      continue;
    record.present = true;
    SmallVector<StringRef> lines;
    StringRef(value).split(lines, '\n');
    for (StringRef line : lines) {
      auto [name, rest] = line.split(": ");
      rest = rest.trim();
      StringRef kind = rest.take_until([](char c) { return c == ' '; });
      size_t target = rest.find("target='");
      if (target == StringRef::npos)
        continue;
      StringRef fqn = rest.drop_front(target + 8).take_until(
          [](char c) { return c == '\''; });
      record.kinds[fqn] = kind.str();
    }
  }
  for (const onnx::ValueInfoProto &info : graph.value_info())
    for (const auto &[key, value] : readMetadata(info, kValueInfoMetadata)) {
      if (key == kKindKey) {
        record.present = true;
        record.kinds[info.name()] = value;
      } else if (key == kFoldedFromKey) {
        record.foldedFrom[info.name()] = parseNames(value);
      }
    }
  return record;
}

std::optional<std::string>
onnx_import::getTrainedParameter(const ParameterRecord &record,
                                 StringRef weight, std::string &reason) {
  auto kind = record.kinds.find(weight);
  if (kind != record.kinds.end()) {
    if (kind->second == "PARAMETER")
      return weight.str();
    reason = "a " + StringRef(kind->second).lower();
    return std::nullopt;
  }
  // Folded by the exporter from exactly one parameter: that parameter, or
  // the part of it the program reads (a linear layer's weight transposed,
  // the rows of a position table that constant positions gather), which
  // trains as the parameter does. From buffers and constants alone (a
  // rotary table from the frequencies, a mask from positions): a constant.
  auto folded = record.foldedFrom.find(weight);
  if (folded != record.foldedFrom.end()) {
    SmallVector<StringRef> parameters, others;
    for (const std::string &source : folded->second) {
      auto sourceKind = record.kinds.find(source);
      if (sourceKind == record.kinds.end())
        continue;
      (sourceKind->second == "PARAMETER" ? parameters : others)
          .push_back(source);
    }
    if (parameters.size() == 1)
      return parameters.front().str();
    SmallVector<StringRef> sources(parameters);
    llvm::append_range(sources, others);
    reason = sources.empty() ? "computed from constants by the exporter"
                             : "computed by the exporter from " +
                                   llvm::join(sources, ", ");
    return std::nullopt;
  }
  reason = "not a parameter of the exported program";
  return std::nullopt;
}
