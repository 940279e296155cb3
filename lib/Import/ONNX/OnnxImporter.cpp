//===- OnnxImporter.cpp - ONNX model to a logical program -----------------===//
//
// Parses the model with protobuf, runs the ONNX checker and shape inference,
// and builds the graph as one function. Floating-point tensors the model
// holds (initializers, Constant nodes) become arguments, weights the search
// may shard, unless they are only read as import-time values; integer ones
// (shapes, axes, indices) and scalars stay constants.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "sbp/Import/ConstantEvaluator.h"
#include "sbp/Import/Onnx.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include <google/protobuf/io/coded_stream.h>

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace mlir::sbp::onnx_import {

/// Builds one graph into `@main`.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, StringRef filename,
                const OnnxImportOptions &options)
      : context(context), builder(context), filename(filename.str()),
        options(options) {}

  LogicalResult importModel(onnx::ModelProto &model, OnnxImport &result);

  Value getValue(StringRef name, Location loc);
  DenseElementsAttr getConstant(StringRef name);
  /// The type of a value, without materializing a constant.
  RankedTensorType getType(StringRef name, Location loc);
  void define(StringRef name, Value value) { values[name].value = value; }
  void defineConstant(StringRef name, DenseElementsAttr constant,
                      bool isWeight) {
    values[name] = Entry{Value(), constant, nullptr, isWeight};
  }
  bool isDefined(StringRef name) const { return values.count(name); }

  void addError(const Twine &message) {
    errors.push_back((filename + ": " + message).str());
  }

  MLIRContext *context;
  OpBuilder builder;

private:
  struct Entry {
    Value value;
    DenseElementsAttr constant;
    const onnx::TensorProto *initializer = nullptr;
    /// An initializer or a Constant node's value: an argument when it is a
    /// floating-point tensor and weights are arguments.
    bool isWeight = false;
  };

  LogicalResult setUpInputs(onnx::GraphProto &graph);
  /// Replaces the outputs of `node` by their values when every input of it
  /// is known at import time.
  void foldNode(const onnx::NodeProto &node);
  /// Decides which weight arguments are trained (Parameters.cpp), and reads
  /// a parameter that the exporter also holds transposed once: the copy
  /// becomes a transpose of it, so that a tie (GPT-2's embedding and
  /// logits) stays one parameter.
  void markParameters(const ParameterRecord &record, unsigned numInputs);

  /// Per weight argument: the framework's parameter it holds, or why it is
  /// not trained.
  llvm::StringMap<std::pair<bool, std::string>> parameters;
  LogicalResult checkOps(const onnx::GraphProto &graph, int64_t opset,
                         const ConverterTable &table);

  std::string filename;
  const OnnxImportOptions &options;
  llvm::StringMap<Entry> values;
  Block *body = nullptr;
  /// Initializers read as tensors that became arguments, in order.
  SmallVector<std::string> weightArguments;
  std::vector<std::string> errors;
  /// Inputs whose dynamic dimensions took OnnxImportOptions::dynamicSize.
  std::vector<std::string> notes;

  friend OnnxImport mlir::sbp::importOnnxModel(llvm::MemoryBufferRef,
                                               MLIRContext *,
                                               const OnnxImportOptions &,
                                               std::string &);
};

} // namespace mlir::sbp::onnx_import

namespace {

/// Folding bounds: values computed from constants with more elements, or
/// taking more scalar operations, are computed when the program runs.
constexpr int64_t kMaxFoldedElements = 1 << 16;
constexpr int64_t kFoldBudget = 1 << 20;

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, [&](int64_t size) { os << size; }, "x");
  return text.empty() ? "scalar" : text;
}

const char *onnxTypeName(int32_t type) {
  return onnx::TensorProto_DataType_IsValid(type)
             ? onnx::TensorProto_DataType_Name(
                   static_cast<onnx::TensorProto_DataType>(type))
                   .c_str()
             : "unknown";
}

/// How errors name node `index`: by its name, or by its position in the
/// graph when it has none (as PyTorch's exports often do not).
std::string nodeLabel(const onnx::NodeProto &node, int index) {
  if (!node.name().empty())
    return "'" + node.name() + "'";
  return "#" + std::to_string(index);
}

/// The static tensor type of a graph input or value_info, or null.
RankedTensorType getStaticType(MLIRContext *context,
                               const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return nullptr;
  Type element = getElementType(context, type.tensor_type().elem_type());
  if (!element)
    return nullptr;
  SmallVector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return nullptr;
    shape.push_back(dim.dim_value());
  }
  return RankedTensorType::get(shape, element);
}

} // namespace

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

Value GraphImporter::getValue(StringRef name, Location loc) {
  auto it = values.find(name);
  if (it == values.end())
    return nullptr;
  Entry &entry = it->second;
  if (entry.value)
    return entry.value;
  // Weights: floating-point tensors (not scalars) that the model holds.
  if (entry.isWeight && options.weightsAsArguments) {
    RankedTensorType type = getType(name, loc);
    if (type && isa<FloatType>(type.getElementType()) &&
        type.getNumElements() > 1) {
      entry.value = body->addArgument(
          type, NameLoc::get(builder.getStringAttr(name),
                             FileLineColLoc::get(context, filename, 0, 0)));
      weightArguments.push_back(name.str());
      return entry.value;
    }
  }
  DenseElementsAttr constant = getConstant(name);
  if (!constant)
    return nullptr;
  // Constants go first in the body, so that a value first read deep in the
  // graph still dominates every later use.
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  entry.value = arith::ConstantOp::create(builder, loc, constant);
  return entry.value;
}

RankedTensorType GraphImporter::getType(StringRef name, Location loc) {
  auto it = values.find(name);
  if (it == values.end())
    return nullptr;
  const Entry &entry = it->second;
  if (!entry.value && entry.constant)
    return cast<RankedTensorType>(entry.constant.getType());
  if (!entry.value && entry.initializer) {
    Type element = getElementType(context, entry.initializer->data_type());
    if (!element)
      return nullptr;
    return RankedTensorType::get(
        SmallVector<int64_t>(entry.initializer->dims().begin(),
                             entry.initializer->dims().end()),
        element);
  }
  Value value = getValue(name, loc);
  return value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
}

DenseElementsAttr GraphImporter::getConstant(StringRef name) {
  auto it = values.find(name);
  if (it == values.end())
    return nullptr;
  Entry &entry = it->second;
  if (!entry.constant && entry.initializer) {
    std::string error;
    entry.constant = getTensorAttr(context, *entry.initializer, error);
    if (!entry.constant)
      addError("initializer '" + name + "': " + error);
  }
  auto given = options.inputValues.find(name);
  if (!entry.constant && entry.value && isa<BlockArgument>(entry.value) &&
      given != options.inputValues.end()) {
    auto type = cast<RankedTensorType>(entry.value.getType());
    entry.constant = getRawAttr(type, given->second);
    if (!entry.constant)
      addError("the value given for input '" + name + "' does not fit " +
               "its type");
  }
  return entry.constant;
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

NodeImporter::NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
                           std::string label, int64_t opset, Location loc)
    : graph(graph), node(node), label(std::move(label)), opset(opset),
      loc(loc) {}

OpBuilder &NodeImporter::builder() { return graph.builder; }

bool NodeImporter::hasInput(unsigned i) const {
  return i < static_cast<unsigned>(node.input_size()) && !node.input(i).empty();
}

Value NodeImporter::input(unsigned i) {
  return hasInput(i) ? graph.getValue(node.input(i), loc) : Value();
}

RankedTensorType NodeImporter::inputType(unsigned i) {
  return hasInput(i) ? graph.getType(node.input(i), loc) : nullptr;
}

DenseElementsAttr NodeImporter::constantInput(unsigned i) {
  return hasInput(i) ? graph.getConstant(node.input(i)) : nullptr;
}

std::optional<SmallVector<int64_t>> NodeImporter::intsInput(unsigned i) {
  DenseElementsAttr constant = constantInput(i);
  if (!constant || !constant.getElementType().isInteger())
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &value : constant.getValues<APInt>())
    ints.push_back(value.getSExtValue());
  return ints;
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

bool NodeImporter::hasAttr(StringRef name) const { return attr(name); }

int64_t NodeImporter::intAttr(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? attribute->i() : defaultValue;
}

float NodeImporter::floatAttr(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? attribute->f() : defaultValue;
}

std::string NodeImporter::stringAttr(StringRef name,
                                     StringRef defaultValue) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? attribute->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef name) const {
  const onnx::AttributeProto *attribute = attr(name);
  if (!attribute)
    return std::nullopt;
  return SmallVector<int64_t>(attribute->ints().begin(),
                              attribute->ints().end());
}

std::optional<SmallVector<float>>
NodeImporter::floatsAttr(StringRef name) const {
  const onnx::AttributeProto *attribute = attr(name);
  if (!attribute)
    return std::nullopt;
  return SmallVector<float>(attribute->floats().begin(),
                            attribute->floats().end());
}

bool NodeImporter::hasOutput(unsigned i) const {
  return i < static_cast<unsigned>(node.output_size()) &&
         !node.output(i).empty();
}

void NodeImporter::setOutput(unsigned i, Value value) {
  if (hasOutput(i))
    graph.define(node.output(i), value);
}

void NodeImporter::setConstantOutput(unsigned i, DenseElementsAttr value,
                                     bool isWeight) {
  if (hasOutput(i))
    graph.defineConstant(node.output(i), value, isWeight);
}

LogicalResult NodeImporter::error(const Twine &message) {
  std::string text = message.str();
  if (StringRef(text).contains("known at import time"))
    text += " (a constant, or a graph input given with sbp-run --input or "
            "sbp-opt --onnx-input-value)";
  graph.addError("node " + label + " (" + node.op_type() + "): " + text);
  return failure();
}

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::setUpInputs(onnx::GraphProto &graph) {
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &tensor : graph.initializer())
    initializers.insert(tensor.name());
  bool ok = true;
  llvm::StringSet<> used;
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    if (initializers.contains(input.name()))
      continue;
    used.insert(input.name());
    if (!input.type().has_tensor_type()) {
      addError("input '" + input.name() + "' is not a tensor");
      ok = false;
      continue;
    }
    auto *tensorType = input.mutable_type()->mutable_tensor_type();
    auto given = options.inputShapes.find(input.name());
    if (given != options.inputShapes.end()) {
      auto *shape = tensorType->mutable_shape();
      if (tensorType->has_shape() &&
          shape->dim_size() != static_cast<int>(given->second.size())) {
        addError("--input-shape " + input.name() + "=" +
                 formatShape(given->second) + ": the input has rank " +
                 Twine(shape->dim_size()));
        ok = false;
        continue;
      }
      shape->clear_dim();
      for (int64_t size : given->second)
        shape->add_dim()->set_dim_value(size);
      continue;
    }
    // Dynamic dimensions take the given array's, else dynamicSize.
    auto value = options.valueShapes.find(input.name());
    bool hasValue = value != options.valueShapes.end();
    if (!tensorType->has_shape() && hasValue) {
      for (int64_t size : value->second)
        tensorType->mutable_shape()->add_dim()->set_dim_value(size);
      continue;
    }
    if (!tensorType->has_shape()) {
      addError("input '" + input.name() +
               "' has no shape; give it with --input-shape " + input.name() +
               "=AxB...");
      ok = false;
      continue;
    }
    auto *dims = tensorType->mutable_shape()->mutable_dim();
    bool dynamic = llvm::any_of(*dims, [](const auto &dim) {
      return !dim.has_dim_value() || dim.dim_value() < 0;
    });
    if (!dynamic)
      continue;
    if (hasValue && dims->size() != static_cast<int>(value->second.size())) {
      addError("the array given for input '" + input.name() + "' has rank " +
               Twine(value->second.size()) + ", the input has rank " +
               Twine(dims->size()));
      ok = false;
      continue;
    }
    SmallVector<std::string> defaulted;
    for (auto [i, dim] : llvm::enumerate(*dims)) {
      if (dim.has_dim_value() && dim.dim_value() >= 0)
        continue;
      std::string label =
          dim.has_dim_param() ? "'" + dim.dim_param() + "'" : std::to_string(i);
      if (hasValue) {
        dim.set_dim_value(value->second[i]);
      } else if (options.dynamicSize > 0) {
        dim.set_dim_value(options.dynamicSize);
        defaulted.push_back(label);
      } else {
        addError("input '" + input.name() + "' has a dynamic dimension " +
                 label + "; give its shape with --input-shape " + input.name() +
                 "=AxB...");
        ok = false;
        break;
      }
    }
    if (!defaulted.empty()) {
      SmallVector<int64_t> shape;
      for (const auto &dim : *dims)
        shape.push_back(dim.dim_value());
      notes.push_back(
          "input '" + input.name() + "': dynamic dimension" +
          (defaulted.size() > 1 ? "s " : " ") + llvm::join(defaulted, ", ") +
          " taken as " + std::to_string(options.dynamicSize) + ", shape " +
          formatShape(shape) + " (--input-shape " + input.name() +
          "=AxB... or --input " + input.name() + "=FILE.npy gives another)");
    }
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!used.contains(name)) {
      addError("--input-shape " + name.str() + ": the graph has no input '" +
               name.str() + "'");
      ok = false;
    }
  return success(ok);
}

void GraphImporter::foldNode(const onnx::NodeProto &node) {
  // Inputs read at import time or materialized as constants; a weight that
  // became an argument, or a computed value, is not known.
  for (const std::string &input : node.input()) {
    if (input.empty())
      continue;
    const Entry &entry = values.find(input)->second;
    if (entry.value && !entry.value.getDefiningOp<arith::ConstantOp>())
      return;
    if (!entry.value && !entry.constant && !entry.initializer)
      return;
  }
  for (const std::string &output : node.output()) {
    auto it = values.find(output);
    if (output.empty() || it == values.end() || !it->second.value)
      continue;
    auto type = dyn_cast<RankedTensorType>(it->second.value.getType());
    if (!type || !type.hasStaticShape() ||
        type.getNumElements() > kMaxFoldedElements)
      continue;
    if (DenseElementsAttr folded =
            evaluateConstant(it->second.value, kFoldBudget))
      defineConstant(output, folded, /*isWeight=*/false);
  }
}

void GraphImporter::markParameters(const ParameterRecord &record,
                                   unsigned numInputs) {
  llvm::StringMap<unsigned> firstHolder;
  SmallVector<unsigned> tied;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  for (auto [index, weight] : llvm::enumerate(weightArguments)) {
    std::string reason;
    std::optional<std::string> parameter;
    // A Constant node is a constant to ONNX; initializers hold parameters.
    if (!values.lookup(weight).initializer)
      reason = "a Constant node";
    else if (!record.present)
      parameter = weight;
    else
      parameter = getTrainedParameter(record, weight, reason);
    parameters[weight] = {parameter.has_value(),
                          parameter ? *parameter : reason};
    if (!parameter)
      continue;
    auto [first, isFirst] = firstHolder.try_emplace(*parameter, index);
    if (isFirst)
      continue;
    Value held = body->getArgument(numInputs + first->second);
    BlockArgument copy = body->getArgument(numInputs + index);
    auto heldType = cast<RankedTensorType>(held.getType());
    auto copyType = cast<RankedTensorType>(copy.getType());
    if (heldType == copyType) {
      copy.replaceAllUsesWith(held);
    } else if (heldType.getRank() == 2 && copyType.getRank() == 2 &&
               heldType.getDimSize(0) == copyType.getDimSize(1) &&
               heldType.getDimSize(1) == copyType.getDimSize(0)) {
      Value init = tensor::EmptyOp::create(builder, copy.getLoc(),
                                           copyType.getShape(),
                                           copyType.getElementType());
      copy.replaceAllUsesWith(
          linalg::TransposeOp::create(builder, copy.getLoc(), held, init,
                                      ArrayRef<int64_t>{1, 0})
              ->getResult(0));
    } else {
      notes.push_back("initializer '" + weight + "' holds " + *parameter +
                      " as well as '" + weightArguments[first->second] +
                      "' does, in a form sbp does not recognize: they are "
                      "trained apart");
      continue;
    }
    tied.push_back(index);
  }
  for (unsigned index : llvm::reverse(tied)) {
    body->eraseArgument(numInputs + index);
    weightArguments.erase(weightArguments.begin() + index);
  }
}

LogicalResult GraphImporter::checkOps(const onnx::GraphProto &graph,
                                      int64_t opset,
                                      const ConverterTable &table) {
  std::vector<std::string> unsupported;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      unsupported.push_back(nodeLabel(node, index) + " (" + node.domain() +
                            "." + node.op_type() + ")");
    else if (!table.count(node.op_type()))
      unsupported.push_back(nodeLabel(node, index) + " (" + node.op_type() +
                            ")");
  }
  if (unsupported.empty())
    return success();
  std::string list;
  for (const std::string &node : unsupported)
    list += "\n  " + node;
  addError(Twine(unsupported.size()) + " node" +
           (unsupported.size() == 1 ? "" : "s") +
           " with an op sbp does not import (opset " + Twine(opset) +
           "):" + list);
  return failure();
}

LogicalResult GraphImporter::importModel(onnx::ModelProto &model,
                                         OnnxImport &result) {
  // Before anything rewrites the value infos that carry it.
  ParameterRecord record = readParameterRecord(model);
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto &set : model.opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx")
      opset = set.version();
  if (opset < 0) {
    addError("the model imports no version of the default ONNX opset");
    return failure();
  }
  std::vector<std::string> adaptErrors;
  if (failed(adaptToOpset17(model, opset, adaptErrors))) {
    for (const std::string &message : adaptErrors)
      addError(message);
    return failure();
  }
  opset = std::min<int64_t>(opset, 17);
  onnx::GraphProto &graph = *model.mutable_graph();
  static const ConverterTable table = [] {
    ConverterTable converters;
    addElementwiseConverters(converters);
    addShapeConverters(converters);
    addContractionConverters(converters);
    addWindowConverters(converters);
    addResizeConverters(converters);
    addLossConverters(converters);
    addNormalizeConverters(converters);
    return converters;
  }();
  if (failed(checkOps(graph, opset, table)) || failed(setUpInputs(graph)))
    return failure();

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    addError(Twine("the ONNX checker rejects the model: ") + e.what());
    return failure();
  }
  try {
    onnx::ShapeInferenceOptions inference(/*check_type=*/true,
                                          /*strict_mode=*/0,
                                          /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception &e) {
    addError(Twine("ONNX shape inference fails: ") + e.what());
    return failure();
  }

  Location fileLoc = FileLineColLoc::get(context, filename, 0, 0);
  result.module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(result.module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType({}, {}));
  body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  for (const onnx::TensorProto &tensor : graph.initializer())
    values[tensor.name()] = Entry{Value(), nullptr, &tensor, true};
  SmallVector<Attribute> argNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (values.count(input.name()))
      continue;
    RankedTensorType type = getStaticType(context, input.type());
    if (!type) {
      addError("input '" + input.name() + "' has element type " +
               onnxTypeName(input.type().tensor_type().elem_type()) +
               ", which sbp does not import");
      return failure();
    }
    values[input.name()].value = body->addArgument(
        type, NameLoc::get(builder.getStringAttr(input.name()), fileLoc));
    argNames.push_back(builder.getStringAttr(input.name()));
  }
  unsigned numInputs = argNames.size();

  for (auto [index, node] : llvm::enumerate(graph.node())) {
    Location loc = NameLoc::get(
        builder.getStringAttr(node.name().empty()
                                  ? node.op_type() + "#" + std::to_string(index)
                                  : node.name()),
        fileLoc);
    NodeImporter importer(*this, node, nodeLabel(node, index), opset, loc);
    for (unsigned i = 0; i < importer.getNumInputs(); ++i)
      if (importer.hasInput(i) && !isDefined(node.input(i)))
        return importer.error("input '" + node.input(i) + "' is not defined");
    if (failed(table.lookup(node.op_type())(importer)))
      return failure();
    if (!errors.empty())
      return failure();
    for (unsigned i = 0; i < importer.getNumOutputs(); ++i)
      if (importer.hasOutput(i) && !isDefined(node.output(i)))
        return importer.error("output " + Twine(i) + " ('" + node.output(i) +
                              "') is not supported");
    foldNode(node);
  }

  SmallVector<Value> outputs;
  SmallVector<Attribute> resultNames;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = getValue(output.name(), fileLoc);
    if (!value) {
      addError("output '" + output.name() + "' is not computed");
      return failure();
    }
    outputs.push_back(value);
    resultNames.push_back(builder.getStringAttr(output.name()));
  }
  if (!errors.empty())
    return failure();
  func::ReturnOp::create(builder, fileLoc, outputs);
  // What folding left unused.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  markParameters(record, numInputs);
  func.setType(builder.getFunctionType(body->getArgumentTypes(),
                                       ValueRange(outputs).getTypes()));

  for (const std::string &weight : weightArguments) {
    argNames.push_back(builder.getStringAttr(weight));
    DenseElementsAttr value = getConstant(weight);
    if (!value)
      return failure();
    ArrayRef<char> raw = value.getRawData();
    std::string bytes(raw.begin(), raw.end());
    // A splat stores one element; the argument needs all of them.
    if (value.isSplat()) {
      bytes.clear();
      for (int64_t i = 0, e = value.getNumElements(); i < e; ++i)
        bytes.append(raw.begin(), raw.end());
    }
    auto [trainable, parameter] = parameters.lookup(weight);
    result.weights.push_back(OnnxWeight{numInputs++, weight, std::move(bytes),
                                        trainable, parameter});
  }
  StringAttr nameAttr = builder.getStringAttr("onnx.name");
  for (auto [index, name] : llvm::enumerate(argNames))
    func.setArgAttr(index, nameAttr, name);
  for (auto [index, name] : llvm::enumerate(resultNames))
    func.setResultAttr(index, nameAttr, name);
  return success();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

bool sbp::isOnnxModel(StringRef filename, StringRef contents) {
  return filename.ends_with(".onnx") ||
         (!contents.empty() && contents.front() == 0x08);
}

bool sbp::parseOnnxInputShape(StringRef flag, OnnxImportOptions &options,
                              std::string &error) {
  auto [name, shapeText] = flag.rsplit('=');
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  if (!shapeText.empty() && shapeText != "scalar")
    shapeText.split(parts, 'x');
  bool ok = !name.empty() && flag.contains('=');
  for (StringRef part : parts) {
    int64_t size = 0;
    ok &= !part.getAsInteger(10, size) && size >= 0;
    shape.push_back(size);
  }
  if (!ok) {
    error = "--input-shape " + flag.str() +
            ": expected NAME=AxB... (for example x=2x32)";
    return false;
  }
  options.inputShapes[name] = shape;
  return true;
}

OnnxImport sbp::importOnnxModel(llvm::MemoryBufferRef buffer,
                                MLIRContext *context,
                                const OnnxImportOptions &options,
                                std::string &error) {
  context->loadDialect<func::FuncDialect, arith::ArithDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       tensor::TensorDialect>();
  OnnxImport result;
  StringRef filename = buffer.getBufferIdentifier();
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(buffer.getBufferStart()),
      static_cast<int>(buffer.getBufferSize()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    error = (filename + ": not an ONNX model (the protobuf does not parse; "
                        "is the file truncated?)")
                .str();
    return result;
  }
  if (!model.has_graph()) {
    error = (filename + ": not an ONNX model (no graph)").str();
    return result;
  }
  if (std::string reason;
      failed(onnx_import::loadExternalData(model, filename, reason))) {
    error = (filename + ": " + reason).str();
    return result;
  }
  GraphImporter importer(context, filename, options);
  bool ok = succeeded(importer.importModel(model, result));
  if (ok && failed(verify(*result.module))) {
    importer.addError("the imported program does not verify");
    ok = false;
  }
  if (!ok) {
    result.module = nullptr;
    result.weights.clear();
    error = llvm::join(importer.errors, "\n");
  }
  result.notes = std::move(importer.notes);
  return result;
}
