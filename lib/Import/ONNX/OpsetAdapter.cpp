//===- OpsetAdapter.cpp - ONNX opsets 18 to 23 as opset 17 ----------------===//
//
// The ONNX library sbp links (its checker and shape inference) knows opsets
// up to 17, while PyTorch's exporter writes opset 18 and later. Between 17
// and 23, the ops sbp imports changed in a few ways only, and a model of a
// later opset is rewritten into opset 17, node by node:
// - Reduce* (18) take their axes as an input: constant axes become the
//   attribute again; no axes with noop_with_empty_axes is an Identity.
// - Split (18) may give num_outputs: opset 17 splits evenly into the
//   outputs, the same where the size divides.
// - Gelu (20) is expanded: 0.5 x (1 + erf(x / sqrt 2)), or with tanh
//   (NewOps.cpp).
// - Attributes added with a default (Resize's antialias, axes and
//   keep_aspect_ratio_policy, AveragePool's dilations, Cast's saturate) are
//   dropped when they hold it, and reported otherwise; so are Pad's axes
//   input and its wrap mode.
// - GroupNormalization (18, 21), RMSNormalization, RotaryEmbedding and
//   Attention (23) become the nodes of their function bodies (NewOps.cpp).
// LSTMs, GRUs and RNNs, of any opset from 13, are unrolled over their
// sequence into the ops they are made of (NewOps.cpp). An expansion that
// needs a shape the model does not declare gets it from shape inference
// over the nodes rewritten in the rounds before.
// Every other change of those opsets adds element types or ops, which the
// importer reports as it does for any model. The IR version of any model
// drops to 8, the library's.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {
/// The newest opset whose changes are known here.
constexpr int64_t kNewestOpset = 23;

/// The integers of constant `name`: an initializer or a Constant's output,
/// or what reshapes or concatenates such integers (the unoptimized exports
/// of PyTorch's dynamo exporter reshape their axes). The importer folds
/// every constant node; this runs before it, on opsets it does not read.
std::optional<std::vector<int64_t>>
getConstantInts(const onnx::GraphProto &graph, const std::string &name,
                int depth = 0) {
  for (const onnx::NodeProto &node : graph.node()) {
    if (depth > 8 || node.output_size() != 1 || node.output(0) != name ||
        node.input_size() == 0)
      continue;
    StringRef op = node.op_type();
    if (op == "Identity" || op == "Reshape" || op == "Squeeze" ||
        op == "Unsqueeze" || op == "Flatten")
      return getConstantInts(graph, node.input(0), depth + 1);
    if (op == "Concat") {
      std::vector<int64_t> values;
      for (const std::string &input : node.input()) {
        auto part = getConstantInts(graph, input, depth + 1);
        if (!part)
          return std::nullopt;
        values.insert(values.end(), part->begin(), part->end());
      }
      return values;
    }
  }
  const onnx::TensorProto *tensor = nullptr;
  for (const onnx::TensorProto &initializer : graph.initializer())
    if (initializer.name() == name)
      tensor = &initializer;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.output(0) == name)
      for (const onnx::AttributeProto &attribute : node.attribute())
        if (attribute.name() == "value" && attribute.has_t())
          tensor = &attribute.t();
  if (!tensor || tensor->data_type() != onnx::TensorProto::INT64)
    return std::nullopt;
  if (!tensor->has_raw_data())
    return std::vector<int64_t>(tensor->int64_data().begin(),
                                tensor->int64_data().end());
  const std::string &raw = tensor->raw_data();
  std::vector<int64_t> values(raw.size() / sizeof(int64_t));
  std::memcpy(values.data(), raw.data(), values.size() * sizeof(int64_t));
  return values;
}

/// Removes attribute `name` of `node`, if it has it.
void dropAttribute(onnx::NodeProto &node, StringRef name) {
  auto *attributes = node.mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i)
    if (attributes->Get(i).name() == name)
      attributes->DeleteSubrange(i, 1);
}

/// A graph of `model`'s values and `nodes` (opset 17 where rewritten)
/// with the value types ONNX shape inference finds for the ops the
/// library knows (it skips the others) beside those the model declares:
/// what the expansions read. Without float initializer data, which
/// neither needs.
onnx::GraphProto typeGraph(const onnx::ModelProto &model,
                           ArrayRef<onnx::NodeProto> nodes) {
  onnx::ModelProto typed;
  typed.set_ir_version(model.ir_version());
  onnx::OperatorSetIdProto &set = *typed.add_opset_import();
  set.set_version(17);
  const onnx::GraphProto &graph = model.graph();
  onnx::GraphProto &copy = *typed.mutable_graph();
  for (const onnx::NodeProto &node : nodes)
    *copy.add_node() = node;
  *copy.mutable_input() = graph.input();
  *copy.mutable_output() = graph.output();
  *copy.mutable_value_info() = graph.value_info();
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    onnx::TensorProto &kept = *copy.add_initializer();
    if (initializer.data_type() == onnx::TensorProto::INT64) {
      kept = initializer;
      continue;
    }
    kept.set_name(initializer.name());
    kept.set_data_type(initializer.data_type());
    *kept.mutable_dims() = initializer.dims();
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*strict_mode=*/0,
                                        /*data_prop=*/false);
    onnx::shape_inference::InferShapes(
        typed, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &) {
    // The declared types alone.
  }
  return std::move(copy);
}

/// Whether `node` is an LSTM, GRU or RNN, which are unrolled.
bool isRecurrent(const onnx::NodeProto &node) {
  return node.op_type() == "LSTM" || node.op_type() == "GRU" ||
         node.op_type() == "RNN";
}

/// Rewrites one node; appends it (or what replaces it) to `out`. Returns
/// a reason where the node cannot be expressed in opset 17.
std::optional<std::string> adaptNode(const onnx::GraphProto &graph,
                                     int64_t opset, onnx::NodeProto node,
                                     std::vector<onnx::NodeProto> &out) {
  const std::string &op = node.op_type();
  // Models of opset 17 or before keep their nodes, but the recurrent ones.
  if (opset <= 17 && !isRecurrent(node)) {
    out.push_back(std::move(node));
    return std::nullopt;
  }
  if (isRecurrent(node))
    return opset < 13 ? op + " before opset 13"
                      : expandRecurrent(graph, node, out);
  auto intAttr = [&](StringRef name, int64_t otherwise) {
    const onnx::AttributeProto *attribute = findAttribute(node, name);
    return attribute ? attribute->i() : otherwise;
  };
  // Drops `name` where it holds its default; a reason otherwise.
  auto dropDefault =
      [&](StringRef name,
          function_ref<bool(const onnx::AttributeProto &)> isDefault)
      -> std::optional<std::string> {
    const onnx::AttributeProto *attribute = findAttribute(node, name);
    if (attribute && !isDefault(*attribute))
      return (op + "'s attribute '" + name + "' other than its default").str();
    dropAttribute(node, name);
    return std::nullopt;
  };
  static const llvm::StringSet<> reductions = {
      "ReduceMax",    "ReduceMin",       "ReduceMean",
      "ReduceProd",   "ReduceL1",        "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  if (reductions.contains(op)) {
    bool noop = intAttr("noop_with_empty_axes", 0) != 0;
    dropAttribute(node, "noop_with_empty_axes");
    if (node.input_size() > 1 && !node.input(1).empty()) {
      std::optional<std::vector<int64_t>> axes =
          getConstantInts(graph, node.input(1));
      if (!axes)
        return op + " with axes that are not a constant";
      // No axes attribute reduces over all of them in opset 17.
      if (!axes->empty()) {
        onnx::AttributeProto *attribute = node.add_attribute();
        attribute->set_name("axes");
        attribute->set_type(onnx::AttributeProto::INTS);
        for (int64_t axis : *axes)
          attribute->add_ints(axis);
      }
      noop &= axes->empty();
    }
    if (node.input_size() > 1)
      node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
    if (noop) {
      node.set_op_type("Identity");
      node.clear_attribute();
    }
  } else if (op == "Split") {
    dropAttribute(node, "num_outputs");
  } else if (op == "Pad") {
    if (node.input_size() > 3 && !node.input(3).empty())
      return std::string("Pad with an axes input");
    const onnx::AttributeProto *mode = findAttribute(node, "mode");
    if (mode && mode->s() == "wrap")
      return std::string("Pad in wrap mode");
  } else if (op == "Resize") {
    auto isZero = [](const onnx::AttributeProto &a) { return a.i() == 0; };
    const onnx::AttributeProto *mode =
        findAttribute(node, "coordinate_transformation_mode");
    if (mode && mode->s() == "half_pixel_symmetric")
      return std::string("Resize in half_pixel_symmetric mode");
    if (auto reason = dropDefault("antialias", isZero))
      return reason;
    if (auto reason = dropDefault("axes", [](const onnx::AttributeProto &a) {
          return a.ints_size() == 0;
        }))
      return reason;
    if (auto reason = dropDefault(
            "keep_aspect_ratio_policy",
            [](const onnx::AttributeProto &a) { return a.s() == "stretch"; }))
      return reason;
  } else if (op == "AveragePool") {
    if (auto reason =
            dropDefault("dilations", [](const onnx::AttributeProto &a) {
              return llvm::all_of(a.ints(), [](int64_t d) { return d == 1; });
            }))
      return reason;
  } else if (op == "Cast" || op == "CastLike") {
    dropAttribute(node, "saturate");
  } else if (op == "Gelu") {
    return expandGelu(node, out);
  } else if (op == "RMSNormalization") {
    return expandRmsNormalization(graph, node, out);
  } else if (op == "GroupNormalization") {
    return expandGroupNormalization(graph, node, opset, out);
  } else if (op == "RotaryEmbedding") {
    return expandRotaryEmbedding(graph, node, out);
  } else if (op == "Attention") {
    return expandAttention(graph, node, out);
  }
  out.push_back(std::move(node));
  return std::nullopt;
}
} // namespace

LogicalResult onnx_import::adaptToOpset17(onnx::ModelProto &model,
                                          int64_t opset,
                                          std::vector<std::string> &errors) {
  // The checker refuses IR versions after its own, whatever the opset;
  // those add only element types, which the importer reports.
  model.set_ir_version(std::min<int64_t>(model.ir_version(), 8));
  if (opset <= 17 && llvm::none_of(model.graph().node(), isRecurrent))
    return success();
  if (opset > kNewestOpset) {
    errors.push_back("opset " + std::to_string(opset) + " is newer than " +
                     std::to_string(kNewestOpset) + ", the newest sbp imports");
    return failure();
  }
  onnx::GraphProto &graph = *model.mutable_graph();
  // Rounds: an expansion that needs a shape the model does not declare
  // waits for shape inference over what the rounds before rewrote (the
  // nodes before it may be newer ops themselves).
  std::vector<onnx::NodeProto> nodes(graph.node().begin(), graph.node().end());
  // The nodes to rewrite: their positions in `nodes`, and in the model.
  std::vector<std::pair<size_t, int64_t>> pending;
  for (size_t k = 0; k < nodes.size(); ++k)
    pending.push_back({k, k});
  std::vector<std::string> reasons;
  // The first round reads the declared types alone: shape inference runs
  // only for what waits.
  bool inferred = false;
  while (!pending.empty()) {
    onnx::GraphProto typed;
    if (inferred)
      typed = typeGraph(model, nodes);
    const onnx::GraphProto &types = inferred ? typed : graph;
    std::vector<onnx::NodeProto> next;
    std::vector<std::pair<size_t, int64_t>> waiting;
    reasons.clear();
    size_t at = 0;
    for (auto [position, node] : llvm::enumerate(nodes)) {
      if (at == pending.size() || pending[at].first != position) {
        next.push_back(node);
        continue;
      }
      int64_t index = pending[at++].second;
      size_t before = next.size();
      std::optional<std::string> reason = adaptNode(types, opset, node, next);
      if (!reason)
        continue;
      // The node waits as it is, without what its expansion had written.
      next.resize(before);
      waiting.push_back({next.size(), index});
      reasons.push_back("node " +
                        (node.name().empty() ? "#" + std::to_string(index)
                                             : "'" + node.name() + "'") +
                        ": " + *reason + " (opset " + std::to_string(opset) +
                        ") is not supported");
      next.push_back(node);
    }
    bool progress = !inferred || waiting.size() < pending.size();
    nodes = std::move(next);
    pending = std::move(waiting);
    if (!progress)
      break;
    inferred = true;
  }
  if (!pending.empty()) {
    errors.insert(errors.end(), reasons.begin(), reasons.end());
    return failure();
  }
  graph.clear_node();
  for (onnx::NodeProto &node : nodes)
    *graph.add_node() = std::move(node);
  if (opset <= 17)
    return success();
  for (onnx::OperatorSetIdProto &set : *model.mutable_opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx")
      set.set_version(17);
  return success();
}

const onnx::AttributeProto *
onnx_import::findAttribute(const onnx::NodeProto &node, StringRef name) {
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}
