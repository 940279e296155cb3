//===- OnnxImporter.h - Shared state of the ONNX importer -------*- C++ -*-===//
//
// The importer walks the graph once, in its (topological) order. Each node
// is converted by a function registered for its op type, which reads the
// node's inputs and attributes through a NodeImporter and defines its
// outputs. Values known at import time (initializers, Constant nodes, shape
// computations) are kept as attributes as well, so that the inputs ONNX
// gives as tensors but that must be static here (a Reshape's shape, a
// Slice's bounds) can be read.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H
#define SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "onnx/onnx_pb.h"
#include "sbp/Import/TensorBuilders.h"
#include "llvm/ADT/StringMap.h"
#include <functional>

namespace mlir {
namespace sbp {
namespace onnx_import {

using namespace ::mlir::sbp::tensor_builders;

class GraphImporter;

/// One node being converted.
class NodeImporter {
public:
  /// `label` names the node in errors.
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               std::string label, int64_t opset, Location loc);

  OpBuilder &builder();
  Location getLoc() const { return loc; }
  int64_t getOpset() const { return opset; }
  const onnx::NodeProto &getNode() const { return node; }

  /// Whether input `i` is given (ONNX marks absent optional inputs with an
  /// empty name).
  bool hasInput(unsigned i) const;
  unsigned getNumInputs() const { return node.input_size(); }
  /// Input `i` as a ranked tensor value.
  Value input(unsigned i);
  RankedTensorType inputType(unsigned i);
  /// Input `i`'s value when it is known at import time.
  DenseElementsAttr constantInput(unsigned i);
  /// Input `i` as integers, when it is known at import time.
  std::optional<SmallVector<int64_t>> intsInput(unsigned i);

  bool hasAttr(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t defaultValue) const;
  float floatAttr(StringRef name, float defaultValue) const;
  std::string stringAttr(StringRef name, StringRef defaultValue) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;
  std::optional<SmallVector<float>> floatsAttr(StringRef name) const;
  const onnx::AttributeProto *attr(StringRef name) const;

  unsigned getNumOutputs() const { return node.output_size(); }
  /// Whether output `i` is used (named).
  bool hasOutput(unsigned i) const;
  void setOutput(unsigned i, Value value);
  /// Defines output `i` as a value known at import time; a weight (a
  /// Constant node's tensor) may become an argument.
  void setConstantOutput(unsigned i, DenseElementsAttr value,
                         bool isWeight = false);

  /// Reports an error on this node; returns failure for convenience.
  LogicalResult error(const Twine &message);

private:
  GraphImporter &graph;
  const onnx::NodeProto &node;
  std::string label;
  int64_t opset;
  Location loc;
};

using NodeConverter = std::function<LogicalResult(NodeImporter &)>;
using ConverterTable = llvm::StringMap<NodeConverter>;

void addElementwiseConverters(ConverterTable &table);
void addShapeConverters(ConverterTable &table);
void addContractionConverters(ConverterTable &table);
void addWindowConverters(ConverterTable &table);
void addResizeConverters(ConverterTable &table);
void addLossConverters(ConverterTable &table);
void addNormalizeConverters(ConverterTable &table);

/// The MLIR element type of an ONNX element type, or null.
Type getElementType(MLIRContext *context, int32_t onnxType);
/// Row-major little-endian bytes (one byte a bool) as an attribute of
/// `type`; null when the size does not match.
DenseElementsAttr getRawAttr(RankedTensorType type, StringRef bytes);
/// The value of a TensorProto as an attribute; null (with `error` set) for
/// types or storage the importer does not read.
DenseElementsAttr getTensorAttr(MLIRContext *context,
                                const onnx::TensorProto &tensor,
                                std::string &error);

//===----------------------------------------------------------------------===//
// Preparing the model.
//===----------------------------------------------------------------------===//

/// Reads the tensors that `model` (read from `modelPath`) keeps in external
/// data files into their raw data; `error` names the tensor and the file.
LogicalResult loadExternalData(onnx::ModelProto &model, StringRef modelPath,
                               std::string &error);

/// Rewrites a model of opset 18 to 23 into opset 17, and the LSTMs, GRUs
/// and RNNs of any opset from 13 into the ops they are made of
/// (OpsetAdapter.cpp);
/// `errors` gets one message per node it cannot rewrite.
LogicalResult adaptToOpset17(onnx::ModelProto &model, int64_t opset,
                             std::vector<std::string> &errors);

/// What the exporter recorded of the model's parameters (Parameters.cpp):
/// the kind of each graph input of the exported program, by value and by
/// the framework's name, and what each initializer it folded was computed
/// from.
struct ParameterRecord {
  bool present = false;
  llvm::StringMap<std::string> kinds;
  llvm::StringMap<SmallVector<std::string>> foldedFrom;
};
ParameterRecord readParameterRecord(const onnx::ModelProto &model);

/// The framework's name of the parameter that initializer `weight` holds,
/// by `record`; nothing for a buffer or a constant, with `reason` saying
/// which.
std::optional<std::string> getTrainedParameter(const ParameterRecord &record,
                                               StringRef weight,
                                               std::string &reason);

/// Attribute `name` of `node`, or null.
const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          StringRef name);

/// Ops added after opset 17 as the opset-17 nodes of their function bodies
/// (NewOps.cpp): each appends the nodes computing `node` to `out`, or
/// returns why it cannot.
std::optional<std::string> expandGelu(const onnx::NodeProto &node,
                                      std::vector<onnx::NodeProto> &out);
std::optional<std::string>
expandRmsNormalization(const onnx::GraphProto &graph,
                       const onnx::NodeProto &node,
                       std::vector<onnx::NodeProto> &out);
std::optional<std::string>
expandGroupNormalization(const onnx::GraphProto &graph,
                         const onnx::NodeProto &node, int64_t opset,
                         std::vector<onnx::NodeProto> &out);
std::optional<std::string>
expandRotaryEmbedding(const onnx::GraphProto &graph,
                      const onnx::NodeProto &node,
                      std::vector<onnx::NodeProto> &out);
std::optional<std::string> expandRecurrent(const onnx::GraphProto &graph,
                                           const onnx::NodeProto &node,
                                           std::vector<onnx::NodeProto> &out);
std::optional<std::string> expandAttention(const onnx::GraphProto &graph,
                                           const onnx::NodeProto &node,
                                           std::vector<onnx::NodeProto> &out);

//===----------------------------------------------------------------------===//
// Builders shared by the converters.
//===----------------------------------------------------------------------===//

/// Input `i` of `n` where it is a small integer (not boolean) constant,
/// which shape computations evaluate at import time; else null.
DenseElementsAttr foldableInput(NodeImporter &n, unsigned i);
/// A negative axis counted from the back; std::nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Softmax or log-softmax of `input` along `axis` (shifted by the maximum).
Value softmax(OpBuilder &b, Location loc, Value input, int64_t axis, bool log);

} // namespace onnx_import
} // namespace sbp
} // namespace mlir

#endif // SBP_LIB_IMPORT_ONNX_ONNXIMPORTER_H
