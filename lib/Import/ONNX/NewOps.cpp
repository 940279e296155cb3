//===- NewOps.cpp - Ops added after opset 17, as opset-17 nodes ----------===//
//
// The ops that later opsets added and sbp imports become the opset-17
// nodes of their function bodies (the ONNX library sbp links knows opset
// 17), named after the replaced node's first output so that names stay
// unique. Where a body needs a shape (a reduction over axes counted from
// the front, heads split off a 3-d input, a causal mask), it comes from the
// value types of the graph the adapter hands over: those the model
// declares, as exporters write them, and those shape inference finds.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "llvm/ADT/StringMap.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {

/// Input or output `i` of a node, empty where it is left out.
std::string
getName(const google::protobuf::RepeatedPtrField<std::string> &names, int i) {
  return i < names.size() ? names.Get(i) : std::string();
}

int64_t getInt(const onnx::NodeProto &node, StringRef name, int64_t otherwise) {
  const onnx::AttributeProto *attribute = findAttribute(node, name);
  return attribute ? attribute->i() : otherwise;
}

/// The type of value `name` where the graph declares it (an input, an
/// output or a value_info, as exporters write them for intermediates).
const onnx::TypeProto_Tensor *getDeclaredType(const onnx::GraphProto &graph,
                                              const std::string &name) {
  for (const auto *values :
       {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.name() == name && value.type().has_tensor_type() &&
          value.type().tensor_type().has_shape())
        return &value.type().tensor_type();
  return nullptr;
}

std::optional<int64_t> getDeclaredRank(const onnx::GraphProto &graph,
                                       const std::string &name) {
  if (const onnx::TypeProto_Tensor *type = getDeclaredType(graph, name))
    return type->shape().dim_size();
  return std::nullopt;
}

/// The declared static shape of `name`, if every size is known.
std::optional<SmallVector<int64_t>>
getDeclaredShape(const onnx::GraphProto &graph, const std::string &name) {
  const onnx::TypeProto_Tensor *type = getDeclaredType(graph, name);
  if (!type)
    return std::nullopt;
  SmallVector<int64_t> shape;
  for (const onnx::TensorShapeProto_Dimension &dim : type->shape().dim()) {
    if (!dim.has_dim_value())
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

/// Appends the opset-17 nodes that compute one newer node, named after
/// its first output so that names stay unique.
class Expansion {
public:
  Expansion(const onnx::NodeProto &node, StringRef kind,
            std::vector<onnx::NodeProto> &out)
      : node(node), out(out) {
    // Named after an output the node computes (an LSTM may leave the
    // first one out).
    for (const std::string &output : node.output())
      if (!output.empty()) {
        prefix = (output + "/sbp." + kind + ".").str();
        break;
      }
  }

  /// A node of `type` on `inputs` with `attributes`; its outputs' names.
  SmallVector<std::string> addOutputs(StringRef type,
                                      ArrayRef<std::string> inputs,
                                      ArrayRef<onnx::AttributeProto> attributes,
                                      int count) {
    SmallVector<std::string> outputs;
    for (int i = 0; i < count; ++i)
      outputs.push_back(fresh());
    make(type, inputs, attributes, outputs);
    return outputs;
  }
  std::string add(StringRef type, ArrayRef<std::string> inputs,
                  ArrayRef<onnx::AttributeProto> attributes = {}) {
    return addOutputs(type, inputs, attributes, 1)[0];
  }
  /// The node that computes the replaced node's output `name`.
  void addNamed(StringRef type, ArrayRef<std::string> inputs,
                ArrayRef<onnx::AttributeProto> attributes,
                const std::string &name) {
    make(type, inputs, attributes, {name}).set_name(node.name());
  }
  /// The node that computes the replaced node's first output.
  void addLast(StringRef type, ArrayRef<std::string> inputs,
               ArrayRef<onnx::AttributeProto> attributes = {}) {
    addNamed(type, inputs, attributes, node.output(0));
  }
  /// `value` as a constant of `like`'s element type.
  std::string floatLike(float value, const std::string &like) {
    return add("CastLike", {constant(floatTensor(value)), like});
  }
  /// `value` as a constant of element type `type` (before opset 15, which
  /// has no CastLike).
  std::string floatAs(float value, int type) {
    return add("Cast", {constant(floatTensor(value))}, {intAttr("to", type)});
  }
  /// A 0-d int64 constant.
  std::string scalar(int64_t value) {
    onnx::TensorProto tensor;
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_int64_data(value);
    return constant(std::move(tensor));
  }
  /// A 1-d int64 constant.
  std::string ints(ArrayRef<int64_t> values) {
    onnx::TensorProto tensor;
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_dims(values.size());
    for (int64_t value : values)
      tensor.add_int64_data(value);
    return constant(std::move(tensor));
  }
  /// A 0-d f32 tensor.
  static onnx::TensorProto floatTensor(float value) {
    onnx::TensorProto tensor;
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_float_data(value);
    return tensor;
  }
  /// The `value` attribute of a Constant or ConstantOfShape.
  static onnx::AttributeProto valueAttr(onnx::TensorProto tensor) {
    onnx::AttributeProto result = attribute("value");
    result.set_type(onnx::AttributeProto::TENSOR);
    *result.mutable_t() = std::move(tensor);
    return result;
  }
  static onnx::AttributeProto intAttr(StringRef name, int64_t value) {
    onnx::AttributeProto result = attribute(name);
    result.set_type(onnx::AttributeProto::INT);
    result.set_i(value);
    return result;
  }
  static onnx::AttributeProto intsAttr(StringRef name,
                                       ArrayRef<int64_t> values) {
    onnx::AttributeProto result = attribute(name);
    result.set_type(onnx::AttributeProto::INTS);
    for (int64_t value : values)
      result.add_ints(value);
    return result;
  }

private:
  static onnx::AttributeProto attribute(StringRef name) {
    onnx::AttributeProto result;
    result.set_name(name.str());
    return result;
  }
  std::string fresh() { return prefix + std::to_string(next++); }
  std::string constant(onnx::TensorProto tensor) {
    return add("Constant", {}, {valueAttr(std::move(tensor))});
  }
  onnx::NodeProto &make(StringRef type, ArrayRef<std::string> inputs,
                        ArrayRef<onnx::AttributeProto> attributes,
                        ArrayRef<std::string> outputs) {
    onnx::NodeProto &added = out.emplace_back();
    added.set_op_type(type.str());
    added.set_name(outputs.front());
    for (const std::string &input : inputs)
      added.add_input(input);
    for (const onnx::AttributeProto &a : attributes)
      *added.add_attribute() = a;
    for (const std::string &output : outputs)
      added.add_output(output);
    return added;
  }

  const onnx::NodeProto &node;
  std::string prefix;
  std::vector<onnx::NodeProto> &out;
  int next = 0;
};

} // namespace

std::optional<std::string>
onnx_import::expandGelu(const onnx::NodeProto &node,
                        std::vector<onnx::NodeProto> &out) {
  const onnx::AttributeProto *approximate = findAttribute(node, "approximate");
  bool tanh = approximate && approximate->s() == "tanh";
  if (approximate && !tanh && approximate->s() != "none")
    return "Gelu with approximate '" + approximate->s() + "'";
  const std::string &x = node.input(0);
  Expansion e(node, "gelu", out);
  std::string inner;
  if (tanh) {
    std::string cube = e.add("Mul", {e.add("Mul", {x, x}), x});
    std::string sum =
        e.add("Add", {x, e.add("Mul", {cube, e.floatLike(0.044715f, x)})});
    inner = e.add("Tanh", {e.add("Mul", {sum, e.floatLike(0.7978845608f, x)})});
  } else {
    inner = e.add("Erf", {e.add("Mul", {x, e.floatLike(0.7071067812f, x)})});
  }
  e.addLast("Mul", {e.add("Mul", {x, e.floatLike(0.5f, x)}),
                    e.add("Add", {inner, e.floatLike(1.0f, x)})});
  return std::nullopt;
}

/// RMSNormalization (23): x / sqrt(mean(x^2 over axis..-1) + epsilon) *
/// scale, computed in `stash_type` and cast back, as its function body.
std::optional<std::string>
onnx_import::expandRmsNormalization(const onnx::GraphProto &graph,
                                    const onnx::NodeProto &node,
                                    std::vector<onnx::NodeProto> &out) {
  int64_t axis = getInt(node, "axis", -1),
          stashType = getInt(node, "stash_type", 1);
  const onnx::AttributeProto *epsilonAttr = findAttribute(node, "epsilon");
  float epsilon = epsilonAttr ? epsilonAttr->f() : 1e-5f;
  const std::string &x = node.input(0);
  SmallVector<int64_t> axes;
  if (axis < 0) {
    for (int64_t a = axis; a < 0; ++a)
      axes.push_back(a);
  } else {
    std::optional<int64_t> rank = getDeclaredRank(graph, x);
    if (!rank)
      return std::string("RMSNormalization over a non-negative axis of an "
                         "input whose rank the model does not declare");
    for (int64_t a = axis; a < *rank; ++a)
      axes.push_back(a);
  }
  Expansion e(node, "rms", out);
  std::string stashed =
      e.add("Cast", {x}, {Expansion::intAttr("to", stashType)});
  std::string mean = e.add(
      "ReduceMean", {e.add("Mul", {stashed, stashed})},
      {Expansion::intsAttr("axes", axes), Expansion::intAttr("keepdims", 1)});
  std::string rms =
      e.add("Sqrt", {e.add("Add", {mean, e.floatLike(epsilon, mean)})});
  std::string normalized = e.add("Mul", {stashed, e.add("Reciprocal", {rms})});
  e.addLast("Mul", {e.add("CastLike", {normalized, x}), node.input(1)});
  return std::nullopt;
}

/// GroupNormalization (18, 21): the channels of [N, C, ...] in `num_groups`
/// groups, each normalized over its channels and positions (mean and
/// variance in `stash_type`), then scaled and shifted per channel (21) or
/// per group (18: `scale` and `bias` of `num_groups` elements).
std::optional<std::string> onnx_import::expandGroupNormalization(
    const onnx::GraphProto &graph, const onnx::NodeProto &node, int64_t opset,
    std::vector<onnx::NodeProto> &out) {
  int64_t groups = getInt(node, "num_groups", 0),
          stashType = getInt(node, "stash_type", 1);
  const onnx::AttributeProto *epsilonAttr = findAttribute(node, "epsilon");
  float epsilon = epsilonAttr ? epsilonAttr->f() : 1e-5f;
  const std::string &x = node.input(0);
  std::optional<int64_t> rank = getDeclaredRank(graph, x);
  if (groups < 1)
    return std::string("GroupNormalization without a positive num_groups");
  if (!rank || *rank < 2)
    return std::string("GroupNormalization of an input whose rank (2 or "
                       "more) the model does not declare");
  Expansion e(node, "groupnorm", out);
  std::string grouped = e.add(
      "Reshape", {e.add("Cast", {x}, {Expansion::intAttr("to", stashType)}),
                  e.ints({0, groups, -1})});
  auto mean = [&](const std::string &value) {
    return e.add(
        "ReduceMean", {value},
        {Expansion::intsAttr("axes", {2}), Expansion::intAttr("keepdims", 1)});
  };
  std::string centered = e.add("Sub", {grouped, mean(grouped)});
  std::string variance = mean(e.add("Mul", {centered, centered}));
  std::string normalized = e.add(
      "Div",
      {centered,
       e.add("Sqrt",
             {e.add("Add", {variance, e.floatLike(epsilon, variance)})})});
  normalized = e.add("CastLike", {normalized, x});
  std::string scale = node.input(1), bias = node.input(2);
  if (opset < 21) {
    // Per group, on the grouped view.
    scale = e.add("Unsqueeze", {scale, e.ints({1})});
    bias = e.add("Unsqueeze", {bias, e.ints({1})});
    std::string y = e.add("Add", {e.add("Mul", {normalized, scale}), bias});
    e.addLast("Reshape", {y, e.add("Shape", {x})});
    return std::nullopt;
  }
  // Per channel: [C] against [N, C, ...] from the second dimension.
  normalized = e.add("Reshape", {normalized, e.add("Shape", {x})});
  if (*rank > 2) {
    SmallVector<int64_t> trailing;
    for (int64_t d = 1; d < *rank - 1; ++d)
      trailing.push_back(d);
    scale = e.add("Unsqueeze", {scale, e.ints(trailing)});
    bias = e.add("Unsqueeze", {bias, e.ints(trailing)});
  }
  e.addLast("Add", {e.add("Mul", {normalized, scale}), bias});
  return std::nullopt;
}

/// RotaryEmbedding (23) on [batch, heads, seq, head] or [batch, seq,
/// heads * head] input: the first `rotary_embedding_dim` (0: all) of each
/// head's elements rotated in pairs (halves, or neighbours when
/// interleaved) by the cos and sin caches, read at `position_ids` when
/// given.
std::optional<std::string>
onnx_import::expandRotaryEmbedding(const onnx::GraphProto &graph,
                                   const onnx::NodeProto &node,
                                   std::vector<onnx::NodeProto> &out) {
  bool interleaved = getInt(node, "interleaved", 0) != 0;
  int64_t numHeads = getInt(node, "num_heads", 0),
          rotaryDim = getInt(node, "rotary_embedding_dim", 0);
  const std::string &input = node.input(0);
  int64_t rank = getDeclaredRank(graph, input).value_or(numHeads ? 3 : 4);
  if (rank != 3 && rank != 4)
    return "RotaryEmbedding of a rank-" + std::to_string(rank) + " input";
  if (rank == 3 && numHeads < 1)
    return std::string("RotaryEmbedding of a 3-d input without num_heads");
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  Expansion e(node, "rotary", out);
  // [batch, seq, heads, head], the function body's layout.
  std::string x = rank == 4
                      ? e.add("Transpose", {input},
                              {Expansion::intsAttr("perm", {0, 2, 1, 3})})
                      : e.add("Reshape", {input, e.ints({0, 0, numHeads, -1})});
  std::string cosine = node.input(1), sine = node.input(2);
  if (node.input_size() > 3 && !node.input(3).empty()) {
    cosine = e.add("Gather", {cosine, node.input(3)});
    sine = e.add("Gather", {sine, node.input(3)});
  }
  cosine = e.add("Unsqueeze", {cosine, e.ints({2})});
  sine = e.add("Unsqueeze", {sine, e.ints({2})});
  std::string rotated = x;
  if (rotaryDim > 0)
    rotated =
        e.add("Slice", {x, e.ints({0}), e.ints({rotaryDim}), e.ints({3})});
  std::string first, second;
  if (interleaved) {
    first = e.add("Slice", {rotated, e.ints({0}), e.ints({kEnd}), e.ints({3}),
                            e.ints({2})});
    second = e.add("Slice", {rotated, e.ints({1}), e.ints({kEnd}), e.ints({3}),
                             e.ints({2})});
  } else {
    // Equal halves: opset 17's Split divides evenly.
    SmallVector<std::string> halves =
        e.addOutputs("Split", {rotated}, {Expansion::intAttr("axis", 3)}, 2);
    first = halves[0];
    second = halves[1];
  }
  std::string real = e.add(
      "Sub", {e.add("Mul", {cosine, first}), e.add("Mul", {sine, second})});
  std::string imaginary = e.add(
      "Add", {e.add("Mul", {sine, first}), e.add("Mul", {cosine, second})});
  std::string result;
  if (interleaved) {
    std::string pairs = e.add("Concat",
                              {e.add("Unsqueeze", {real, e.ints({-1})}),
                               e.add("Unsqueeze", {imaginary, e.ints({-1})})},
                              {Expansion::intAttr("axis", -1)});
    result = e.add("Reshape", {pairs, e.ints({0, 0, 0, -1})});
  } else {
    result =
        e.add("Concat", {real, imaginary}, {Expansion::intAttr("axis", -1)});
  }
  if (rotaryDim > 0)
    result = e.add("Concat",
                   {result, e.add("Slice", {x, e.ints({rotaryDim}),
                                            e.ints({kEnd}), e.ints({3})})},
                   {Expansion::intAttr("axis", -1)});
  if (rank == 4)
    e.addLast("Transpose", {result},
              {Expansion::intsAttr("perm", {0, 2, 1, 3})});
  else
    e.addLast("Reshape", {result, e.ints({0, 0, -1})});
  return std::nullopt;
}

/// Attention (23), as its function body: Q and K scaled by the square
/// root of `scale`, their product softcapped, the given and causal masks
/// added, softmax (in `softmax_precision`), rows that every key is masked
/// from zeroed, times V. 3-d inputs are split into heads, K and V
/// repeated for grouped queries, past keys and values put before the new
/// ones. The shapes are the graph's value types.
std::optional<std::string>
onnx_import::expandAttention(const onnx::GraphProto &graph,
                             const onnx::NodeProto &node,
                             std::vector<onnx::NodeProto> &out) {
  auto input = [&](int i) { return getName(node.input(), i); };
  auto output = [&](int i) { return getName(node.output(), i); };
  if (!output(3).empty())
    return std::string("Attention's qk_matmul_output");
  if (input(4).empty() != input(5).empty())
    return std::string("Attention with only one of past_key and past_value");
  std::optional<SmallVector<int64_t>> q = getDeclaredShape(graph, input(0)),
                                      k = getDeclaredShape(graph, input(1)),
                                      v = getDeclaredShape(graph, input(2));
  if (!q || !k || !v)
    return std::string("Attention on Q, K or V whose static shape the model "
                       "does not declare");
  int64_t rank = q->size();
  if ((rank != 3 && rank != 4) || int64_t(k->size()) != rank ||
      int64_t(v->size()) != rank)
    return std::string("Attention on inputs of ranks other than 3 or 4");
  int64_t batch = (*q)[0], qHeads, kvHeads, qLength, kvLength, headSize,
          valueSize;
  if (rank == 3) {
    qHeads = getInt(node, "q_num_heads", 0);
    kvHeads = getInt(node, "kv_num_heads", 0);
    if (qHeads < 1 || kvHeads < 1 || (*q)[2] % qHeads || (*k)[2] % kvHeads ||
        (*v)[2] % kvHeads)
      return std::string("Attention on 3-d inputs without q_num_heads and "
                         "kv_num_heads that divide their hidden sizes");
    qLength = (*q)[1];
    kvLength = (*k)[1];
    headSize = (*q)[2] / qHeads;
    valueSize = (*v)[2] / kvHeads;
  } else {
    qHeads = (*q)[1];
    kvHeads = (*k)[1];
    qLength = (*q)[2];
    kvLength = (*k)[2];
    headSize = (*q)[3];
    valueSize = (*v)[3];
  }
  if (qHeads % kvHeads)
    return std::string("Attention with query heads no multiple of the key "
                       "heads");
  Expansion e(node, "attention", out);
  auto heads = [&](const std::string &x, int64_t length, int64_t count,
                   int64_t size) {
    if (rank == 4)
      return x;
    return e.add("Transpose",
                 {e.add("Reshape", {x, e.ints({batch, length, count, size})})},
                 {Expansion::intsAttr("perm", {0, 2, 1, 3})});
  };
  std::string query = heads(input(0), qLength, qHeads, headSize);
  std::string key = heads(input(1), kvLength, kvHeads, headSize);
  std::string value = heads(input(2), kvLength, kvHeads, valueSize);
  int64_t pastLength = 0;
  if (!input(4).empty()) {
    std::optional<SmallVector<int64_t>> past =
        getDeclaredShape(graph, input(4));
    if (!past || past->size() != 4)
      return std::string("Attention with a past_key whose static shape the "
                         "model does not declare");
    pastLength = (*past)[2];
    kvLength += pastLength;
    key = e.add("Concat", {input(4), key}, {Expansion::intAttr("axis", 2)});
    value = e.add("Concat", {input(5), value}, {Expansion::intAttr("axis", 2)});
  }
  if (!output(1).empty())
    e.addNamed("Identity", {key}, {}, output(1));
  if (!output(2).empty())
    e.addNamed("Identity", {value}, {}, output(2));

  const onnx::AttributeProto *scaleAttr = findAttribute(node, "scale");
  float root =
      std::sqrt(scaleAttr ? scaleAttr->f() : 1.0f / std::sqrt(float(headSize)));
  query = e.add("Mul", {query, e.floatLike(root, query)});
  key = e.add("Mul", {key, e.floatLike(root, key)});
  if (qHeads != kvHeads) {
    // Each key and value head serves its group of query heads in turn.
    auto repeat = [&](const std::string &x, int64_t size) {
      std::string wide =
          e.add("Expand", {e.add("Unsqueeze", {x, e.ints({2})}),
                           e.ints({1, 1, qHeads / kvHeads, 1, 1})});
      return e.add("Reshape", {wide, e.ints({batch, qHeads, kvLength, size})});
    };
    key = repeat(key, headSize);
    value = repeat(value, valueSize);
  }
  std::string scores = e.add(
      "MatMul", {query, e.add("Transpose", {key},
                              {Expansion::intsAttr("perm", {0, 1, 3, 2})})});
  const onnx::AttributeProto *softcap = findAttribute(node, "softcap");
  if (softcap && softcap->f() > 0) {
    std::string cap = e.floatLike(softcap->f(), scores);
    scores = e.add("Mul", {e.add("Tanh", {e.add("Div", {scores, cap})}), cap});
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::string bias;
  if (!input(3).empty()) {
    const onnx::TypeProto_Tensor *mask = getDeclaredType(graph, input(3));
    std::optional<SmallVector<int64_t>> maskShape =
        getDeclaredShape(graph, input(3));
    if (!mask || !maskShape || maskShape->empty() ||
        maskShape->back() != kvLength)
      return std::string("Attention with an attn_mask whose static shape "
                         "the model does not declare or that does not span "
                         "every key");
    bias = input(3);
    if (mask->elem_type() == onnx::TensorProto::BOOL)
      bias = e.add("Where",
                   {bias, e.floatLike(0, scores), e.floatLike(-kInf, scores)});
  }
  if (getInt(node, "is_causal", 0)) {
    // Query i (after the past) sees the keys up to its own position: the
    // lower triangle of ones from the past's diagonal. Built from ops
    // rather than held as a tensor, which the importer would take for a
    // weight.
    onnx::TensorProto one = Expansion::floatTensor(1);
    one.add_dims(1);
    std::string ones = e.add("ConstantOfShape", {e.ints({qLength, kvLength})},
                             {Expansion::valueAttr(std::move(one))});
    std::string allowed =
        e.add("Cast",
              {e.add("Trilu", {ones, e.ints({pastLength})},
                     {Expansion::intAttr("upper", 0)})},
              {Expansion::intAttr("to", onnx::TensorProto::BOOL)});
    std::string mask = e.add(
        "Where", {allowed, e.floatLike(0, scores), e.floatLike(-kInf, scores)});
    bias = bias.empty() ? mask : e.add("Add", {bias, mask});
  }
  if (!bias.empty())
    scores = e.add("Add", {scores, bias});
  if (const onnx::AttributeProto *precision =
          findAttribute(node, "softmax_precision"))
    scores =
        e.add("Cast", {scores}, {Expansion::intAttr("to", precision->i())});
  std::string probabilities = e.add(
      "CastLike",
      {e.add("Softmax", {scores}, {Expansion::intAttr("axis", -1)}), query});
  if (!input(3).empty()) {
    // A row masked from every key attends to nothing (softmax gives NaN).
    std::string none = e.add("IsInf",
                             {e.add("ReduceMax", {bias},
                                    {Expansion::intsAttr("axes", {-1}),
                                     Expansion::intAttr("keepdims", 1)})},
                             {Expansion::intAttr("detect_positive", 0)});
    probabilities =
        e.add("Where", {none, e.floatLike(0, probabilities), probabilities});
  }
  if (rank == 4) {
    e.addLast("MatMul", {probabilities, value});
    return std::nullopt;
  }
  std::string result =
      e.add("Transpose", {e.add("MatMul", {probabilities, value})},
            {Expansion::intsAttr("perm", {0, 2, 1, 3})});
  e.addLast("Reshape", {result, e.ints({batch, qLength, qHeads * valueSize})});
  return std::nullopt;
}

/// LSTM, GRU and RNN (7, 14) unrolled over their static sequence, per
/// direction and step (`clip` bounding every activation's input):
/// - LSTM: gates i, o, f, c of `x_t W^T + h R^T + Wb + Rb`, peepholes P
///   adding the previous cell to i and f and the new one to o; then
///   `c = f c' + i g(c~)` and `h = o h(c)`;
/// - GRU: gates z, r of `x_t W^T + h R^T + Wb + Rb`, the candidate
///   `g(x_t Wh^T + (r h) Rh^T + Rbh + Wbh)`, or with `linear_before_reset`
///   `g(x_t Wh^T + r (h Rh^T + Rbh) + Wbh)`; then `h = (1 - z) h~ + z h`;
/// - RNN: `h = f(x_t W^T + h R^T + Wb + Rb)`.
/// Steps at or past a batch element's `sequence_lens` keep its states and
/// write zeros.
std::optional<std::string>
onnx_import::expandRecurrent(const onnx::GraphProto &graph,
                             const onnx::NodeProto &node,
                             std::vector<onnx::NodeProto> &out) {
  auto input = [&](int i) { return getName(node.input(), i); };
  auto output = [&](int i) { return getName(node.output(), i); };
  const std::string &op = node.op_type();
  bool lstm = op == "LSTM", gru = op == "GRU";
  int64_t hidden = getInt(node, "hidden_size", 0),
          layout = getInt(node, "layout", 0);
  const onnx::AttributeProto *directionAttr = findAttribute(node, "direction");
  std::string direction = directionAttr ? directionAttr->s() : "forward";
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return op + " with direction '" + direction + "'";
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (getInt(node, "input_forget", 0))
    return op + " with input_forget";
  SmallVector<std::string> defaults =
      lstm  ? SmallVector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : gru ? SmallVector<std::string>{"Sigmoid", "Tanh"}
            : SmallVector<std::string>{"Tanh"};
  int64_t perDirection = defaults.size();
  SmallVector<std::string> activations;
  for (int64_t d = 0; d < directions; ++d)
    activations.append(defaults.begin(), defaults.end());
  if (const onnx::AttributeProto *given = findAttribute(node, "activations")) {
    static const llvm::StringMap<StringRef> known = {{"sigmoid", "Sigmoid"},
                                                     {"tanh", "Tanh"},
                                                     {"relu", "Relu"},
                                                     {"softsign", "Softsign"},
                                                     {"softplus", "Softplus"}};
    if (given->strings_size() != perDirection * directions)
      return op + " with other than " + std::to_string(perDirection) +
             " activations a direction";
    for (auto [k, name] : llvm::enumerate(given->strings())) {
      auto it = known.find(StringRef(name).lower());
      if (it == known.end())
        return op + " with activation '" + name + "'";
      activations[k] = it->second.str();
    }
  }
  const onnx::AttributeProto *clipAttr = findAttribute(node, "clip");
  std::optional<SmallVector<int64_t>> shape = getDeclaredShape(graph, input(0));
  if (!shape || shape->size() != 3 || hidden < 1)
    return op + " without hidden_size, or on an input whose static shape "
                "the model does not declare";
  int64_t steps = (*shape)[layout ? 1 : 0], batch = (*shape)[layout ? 0 : 1];
  const std::string &x = input(0);
  int type = getDeclaredType(graph, x)->elem_type();
  Expansion e(node, StringRef(op).lower(), out);
  auto axis = [](int64_t a) { return Expansion::intAttr("axis", a); };
  std::string zeros;
  // With sequence_lens, step t of a batch element at or past its length
  // keeps the states and outputs zeros (a reverse direction so starts at
  // the element's last step).
  std::string lengths;
  if (!input(4).empty())
    lengths =
        e.add("Unsqueeze",
              {e.add("Cast", {input(4)},
                     {Expansion::intAttr("to", onnx::TensorProto::INT64)}),
               e.ints({1})});
  if (input(5).empty() || (lstm && input(6).empty()) || !lengths.empty())
    zeros = e.add("Cast", {e.add("ConstantOfShape", {e.ints({batch, hidden})})},
                  {Expansion::intAttr("to", type)});
  std::string one = gru ? e.floatAs(1, type) : std::string();
  bool linearBeforeReset = gru && getInt(node, "linear_before_reset", 0);
  SmallVector<std::string> outputs, lastH, lastC;
  for (int64_t d = 0; d < directions; ++d) {
    auto pick = [&](const std::string &t) {
      return e.add("Gather", {t, e.scalar(d)}, {axis(0)});
    };
    auto activate = [&](int which, std::string value) {
      if (clipAttr)
        value = e.add("Clip", {value, e.floatAs(-clipAttr->f(), type),
                               e.floatAs(clipAttr->f(), type)});
      return e.add(activations[perDirection * d + which], {value});
    };
    auto add = [&](std::string a, const std::string &b) {
      return b.empty() ? a : e.add("Add", {a, b});
    };
    std::string w = e.add("Transpose", {pick(input(1))});
    std::string r = e.add("Transpose", {pick(input(2))});
    // Wb and Rb; for the GRU per gate (its candidate adds them apart).
    std::string bias;
    SmallVector<std::string> wb(3), rb(3);
    if (!input(3).empty()) {
      SmallVector<std::string> halves =
          e.addOutputs("Split", {pick(input(3))}, {axis(0)}, 2);
      if (gru) {
        wb = e.addOutputs("Split", {halves[0]}, {axis(0)}, 3);
        rb = e.addOutputs("Split", {halves[1]}, {axis(0)}, 3);
      } else {
        bias = e.add("Add", {halves[0], halves[1]});
      }
    }
    SmallVector<std::string> peepholes;
    if (lstm && !input(7).empty())
      peepholes = e.addOutputs("Split", {pick(input(7))}, {axis(0)}, 3);
    SmallVector<std::string> wGates, rGates;
    if (gru) {
      wGates = e.addOutputs("Split", {w}, {axis(1)}, 3);
      rGates = e.addOutputs("Split", {r}, {axis(1)}, 3);
    }
    // States are [directions, batch, hidden], or [batch, directions,
    // hidden] in layout 1.
    auto pickState = [&](const std::string &t) {
      return e.add("Gather", {t, e.scalar(d)}, {axis(layout)});
    };
    std::string h = input(5).empty() ? zeros : pickState(input(5));
    std::string c;
    if (lstm)
      c = input(6).empty() ? zeros : pickState(input(6));
    bool reverse = direction == "reverse" || d == 1;
    SmallVector<std::string> byTime(steps);
    for (int64_t k = 0; k < steps; ++k) {
      int64_t t = reverse ? steps - 1 - k : k;
      std::string xt = e.add("Gather", {x, e.scalar(t)}, {axis(layout)});
      std::string previousH = h, previousC = c;
      if (gru) {
        auto gate = [&](int g) {
          return add(add(e.add("Add", {e.add("MatMul", {xt, wGates[g]}),
                                       e.add("MatMul", {h, rGates[g]})}),
                         wb[g]),
                     rb[g]);
        };
        std::string update = activate(0, gate(0)), reset = activate(0, gate(1));
        std::string recurrent =
            linearBeforeReset
                ? e.add("Mul",
                        {reset, add(e.add("MatMul", {h, rGates[2]}), rb[2])})
                : add(e.add("MatMul", {e.add("Mul", {reset, h}), rGates[2]}),
                      rb[2]);
        std::string candidate = activate(
            1, add(e.add("Add", {e.add("MatMul", {xt, wGates[2]}), recurrent}),
                   wb[2]));
        h = e.add("Add",
                  {e.add("Mul", {e.add("Sub", {one, update}), candidate}),
                   e.add("Mul", {update, h})});
      } else {
        std::string gates = add(
            e.add("Add", {e.add("MatMul", {xt, w}), e.add("MatMul", {h, r})}),
            bias);
        if (!lstm) {
          h = activate(0, gates);
        } else {
          SmallVector<std::string> g =
              e.addOutputs("Split", {gates}, {axis(1)}, 4);
          std::string in = g[0], keep = g[2];
          if (!peepholes.empty()) {
            in = e.add("Add", {in, e.add("Mul", {peepholes[0], c})});
            keep = e.add("Add", {keep, e.add("Mul", {peepholes[2], c})});
          }
          c = e.add("Add",
                    {e.add("Mul", {activate(0, keep), c}),
                     e.add("Mul", {activate(0, in), activate(1, g[3])})});
          std::string put = g[1];
          if (!peepholes.empty())
            put = e.add("Add", {put, e.add("Mul", {peepholes[1], c})});
          h = e.add("Mul", {activate(0, put), activate(2, c)});
        }
      }
      std::string written = h;
      if (!lengths.empty()) {
        std::string active = e.add("Less", {e.scalar(t), lengths});
        h = e.add("Where", {active, h, previousH});
        if (lstm)
          c = e.add("Where", {active, c, previousC});
        written = e.add("Where", {active, h, zeros});
      }
      byTime[t] = e.add("Unsqueeze", {written, e.ints({0})});
    }
    // [steps, 1, batch, hidden].
    outputs.push_back(
        e.add("Unsqueeze", {e.add("Concat", byTime, {axis(0)}), e.ints({1})}));
    lastH.push_back(e.add("Unsqueeze", {h, e.ints({0})}));
    if (lstm)
      lastC.push_back(e.add("Unsqueeze", {c, e.ints({0})}));
  }
  SmallVector<std::string> results = {e.add("Concat", outputs, {axis(1)}),
                                      e.add("Concat", lastH, {axis(0)})};
  if (lstm)
    results.push_back(e.add("Concat", lastC, {axis(0)}));
  if (layout) {
    results[0] = e.add("Transpose", {results[0]},
                       {Expansion::intsAttr("perm", {2, 0, 1, 3})});
    for (std::string &state : MutableArrayRef(results).drop_front())
      state =
          e.add("Transpose", {state}, {Expansion::intsAttr("perm", {1, 0, 2})});
  }
  for (auto [k, value] : llvm::enumerate(results))
    if (!output(k).empty())
      e.addNamed("Identity", {value}, {}, output(k));
  return std::nullopt;
}
