//===- Entry.cpp - A compiled entry function, without MLIR ----------------===//
//
// Returned buffers belong to the caller (the deallocation pipeline clones
// anything it does not own): host programs' results are copied out and
// freed here; device results are freed by the host after downloading.
//
//===----------------------------------------------------------------------===//

#include "sbp/Run/Entry.h"
#include "sbp/Runtime/Float16.h"
#include "sbp/Runtime/Memref.h"
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace sbp::run;
using nlohmann::json;
using sbp::runtime::BFloat16;
using sbp::runtime::Half;
using sbp::runtime::LayoutEntry;
using sbp::runtime::NpyArray;

void EntryPoint::invoke(const std::vector<void *> &data,
                        const std::vector<const std::vector<int64_t> *> &shapes,
                        const std::vector<TensorSpec> &resultSpecs,
                        std::vector<ReturnedBuffer> &returned) const {
  // Descriptor fields: allocated, aligned, offset, sizes, strides.
  size_t fields = 0;
  for (const std::vector<int64_t> *shape : shapes)
    fields += 3 + 2 * shape->size();
  std::vector<int64_t> descriptors(fields);
  std::vector<void *> pointers;
  int64_t *at = descriptors.data();
  for (size_t i = 0; i < data.size(); ++i) {
    const std::vector<int64_t> &shape = *shapes[i];
    int64_t rank = static_cast<int64_t>(shape.size());
    at[0] = at[1] = reinterpret_cast<int64_t>(data[i]);
    at[2] = 0;
    for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
      at[3 + d] = shape[d];
      at[3 + rank + d] = stride;
      stride *= shape[d];
    }
    for (int64_t f = 0; f < 3 + 2 * rank; ++f)
      pointers.push_back(at + f);
    at += 3 + 2 * rank;
  }
  size_t resultFields = 0;
  for (const TensorSpec &spec : resultSpecs)
    resultFields += 3 + 2 * spec.localShape.size();
  std::vector<int64_t> fieldsOut(resultFields);
  if (!resultSpecs.empty())
    pointers.push_back(fieldsOut.data());

  packed(pointers.data());

  returned.assign(resultSpecs.size(), ReturnedBuffer());
  at = fieldsOut.data();
  for (size_t i = 0; i < resultSpecs.size(); ++i) {
    int64_t rank = static_cast<int64_t>(resultSpecs[i].localShape.size());
    // The returned fields are a memref descriptor, dense: the deallocation
    // pipeline returns fresh buffers with the identity layout.
    runtime::MemrefView view(rank, at, resultSpecs[i].dtype);
    returned[i].allocated = reinterpret_cast<void *>(at[0]);
    returned[i].data = view.tensor.data;
    returned[i].shape.assign(view.tensor.shape, view.tensor.shape + rank);
    at += 3 + 2 * rank;
  }
}

void EntryPoint::call(const std::vector<NpyArray *> &args,
                      const std::vector<TensorSpec> &resultSpecs,
                      std::vector<NpyArray> &results) const {
  std::vector<void *> data;
  std::vector<const std::vector<int64_t> *> shapes;
  for (NpyArray *arg : args) {
    data.push_back(arg->data.data());
    shapes.push_back(&arg->shape);
  }
  std::vector<ReturnedBuffer> returned;
  invoke(data, shapes, resultSpecs, returned);
  results.assign(resultSpecs.size(), NpyArray());
  // Results that are one value returned twice share their buffer: free
  // each buffer once.
  std::set<void *> owned;
  for (size_t i = 0; i < returned.size(); ++i) {
    NpyArray &result = results[i];
    result.dtype = resultSpecs[i].dtype;
    result.shape = returned[i].shape;
    result.data.resize(result.numElements() * sbp_dtype_size(result.dtype));
    std::memcpy(result.data.data(), returned[i].data, result.data.size());
    owned.insert(returned[i].allocated);
  }
  for (void *buffer : owned)
    std::free(buffer);
}

NpyArray sbp::run::randomArray(const TensorSpec &spec,
                               const std::vector<int64_t> &shape,
                               std::mt19937_64 &rng) {
  NpyArray array;
  array.dtype = spec.dtype;
  array.shape = shape;
  int64_t n = array.numElements();
  array.data.resize(n * sbp_dtype_size(spec.dtype));
  std::uniform_real_distribution<double> real(spec.positive ? 0.5 : -1.0,
                                              spec.positive ? 1.5 : 1.0);
  int64_t most = spec.isBool ? 1 : 3;
  if (spec.indexBound > 0)
    most = std::min<int64_t>(most, spec.indexBound - 1);
  std::uniform_int_distribution<int> integer(0, int(most));
  for (int64_t i = 0; i < n; ++i) {
    switch (spec.dtype) {
    case SBP_F32:
      reinterpret_cast<float *>(array.data.data())[i] = real(rng);
      break;
    case SBP_F64:
      reinterpret_cast<double *>(array.data.data())[i] = real(rng);
      break;
    case SBP_I32:
      reinterpret_cast<int32_t *>(array.data.data())[i] = integer(rng);
      break;
    case SBP_I64:
      reinterpret_cast<int64_t *>(array.data.data())[i] = integer(rng);
      break;
    case SBP_I8:
      reinterpret_cast<int8_t *>(array.data.data())[i] = integer(rng);
      break;
    case SBP_F16:
      reinterpret_cast<Half *>(array.data.data())[i] = float(real(rng));
      break;
    case SBP_BF16:
      reinterpret_cast<BFloat16 *>(array.data.data())[i] = float(real(rng));
      break;
    }
  }
  return array;
}

std::string sbp::run::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") +
            (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text + "]";
}

const char *sbp::run::dtypeName(sbp_dtype dtype) {
  switch (dtype) {
  case SBP_F32:
    return "f32";
  case SBP_F64:
    return "f64";
  case SBP_I32:
    return "i32";
  case SBP_I64:
    return "i64";
  case SBP_I8:
    return "i8";
  case SBP_F16:
    return "f16";
  case SBP_BF16:
    return "bf16";
  }
  return "?";
}

namespace {

double element(const NpyArray &array, int64_t i) {
  switch (array.dtype) {
  case SBP_F32:
    return reinterpret_cast<const float *>(array.data.data())[i];
  case SBP_F64:
    return reinterpret_cast<const double *>(array.data.data())[i];
  case SBP_I32:
    return reinterpret_cast<const int32_t *>(array.data.data())[i];
  case SBP_I64:
    return static_cast<double>(
        reinterpret_cast<const int64_t *>(array.data.data())[i]);
  case SBP_I8:
    return reinterpret_cast<const int8_t *>(array.data.data())[i];
  case SBP_F16:
    return reinterpret_cast<const Half *>(array.data.data())[i];
  case SBP_BF16:
    return reinterpret_cast<const BFloat16 *>(array.data.data())[i];
  }
  return 0;
}

const char *getBackendName(Backend backend) {
  return backend == Backend::Cuda           ? "cuda"
         : backend == Backend::EmulatedCuda ? "emulated-cuda"
                                            : "cpu";
}

json toJson(const TensorSpec &spec) {
  json layout = json::array();
  for (const LayoutEntry &entry : spec.layout.entries) {
    if (entry.kind == LayoutEntry::Split)
      layout.push_back({{"split", entry.dim}});
    else if (entry.kind == LayoutEntry::Partial)
      layout.push_back({{"partial", static_cast<int>(entry.reduction)}});
    else
      layout.push_back("broadcast");
  }
  return {{"name", spec.name},
          {"dtype", static_cast<int>(spec.dtype)},
          {"bool", spec.isBool},
          {"type", spec.typeName},
          {"shape", spec.localShape},
          {"layout", layout},
          {"index_bound", spec.indexBound},
          {"positive", spec.positive}};
}

/// Reads `value` into `spec`; false with `error` naming what is wrong.
bool fromJson(const json &value, const std::vector<int64_t> &mesh,
              TensorSpec &spec, std::string &error) {
  if (!value.is_object() || !value.contains("name") ||
      !value["name"].is_string() || !value.contains("dtype") ||
      !value["dtype"].is_number_integer() || !value.contains("shape") ||
      !value["shape"].is_array() || !value.contains("layout") ||
      !value["layout"].is_array() || value["layout"].size() != mesh.size()) {
    error = "a tensor needs name, dtype, shape and a layout entry per mesh "
            "axis";
    return false;
  }
  spec.name = value["name"].get<std::string>();
  int dtype = value["dtype"].get<int>();
  if (dtype < SBP_F32 || dtype > SBP_I8) {
    error = spec.name + ": unknown dtype " + std::to_string(dtype);
    return false;
  }
  spec.dtype = static_cast<sbp_dtype>(dtype);
  spec.isBool = value.contains("bool") && value["bool"].is_boolean() &&
                value["bool"].get<bool>();
  if (value.contains("type") && value["type"].is_string())
    spec.typeName = value["type"].get<std::string>();
  if (value.contains("index_bound") && value["index_bound"].is_number_integer())
    spec.indexBound = value["index_bound"].get<int64_t>();
  spec.positive = value.contains("positive") &&
                  value["positive"].is_boolean() &&
                  value["positive"].get<bool>();
  for (const json &size : value["shape"]) {
    if (!size.is_number_integer()) {
      error = spec.name + ": shape sizes must be integers";
      return false;
    }
    spec.localShape.push_back(size.get<int64_t>());
  }
  spec.layout.meshShape = mesh;
  for (const json &item : value["layout"]) {
    LayoutEntry entry;
    if (item.is_object() && item.contains("split") &&
        item["split"].is_number_integer()) {
      entry.kind = LayoutEntry::Split;
      entry.dim = item["split"].get<int64_t>();
    } else if (item.is_object() && item.contains("partial") &&
               item["partial"].is_number_integer()) {
      entry.kind = LayoutEntry::Partial;
      entry.reduction = static_cast<sbp_reduction>(item["partial"].get<int>());
    } else if (item != "broadcast") {
      error = spec.name + ": a layout entry is {\"split\": D}, "
                          "{\"partial\": K} or \"broadcast\"";
      return false;
    }
    spec.layout.entries.push_back(entry);
  }
  return true;
}

} // namespace

Comparison sbp::run::compareResults(const std::vector<NpyArray> &results,
                                    const std::vector<NpyArray> &expected) {
  Comparison comparison;
  double maxRef = 0;
  for (size_t r = 0; r < results.size(); ++r) {
    if (results[r].shape != expected[r].shape) {
      comparison.shapeError = "result" + std::to_string(r) + ": shape " +
                              formatShape(results[r].shape) +
                              " but the reference is " +
                              formatShape(expected[r].shape);
      return comparison;
    }
    comparison.hasF64 |= results[r].dtype == SBP_F64;
    for (int64_t i = 0, n = results[r].numElements(); i < n; ++i) {
      double a = element(results[r], i), b = element(expected[r], i);
      double diff = std::fabs(a - b);
      if (std::isnan(a) != std::isnan(b))
        diff = INFINITY;
      else if (std::isnan(a) || a == b)
        diff = 0;
      comparison.nans += std::isnan(b);
      comparison.maxAbs = std::max(comparison.maxAbs, diff);
      if (!std::isnan(b))
        maxRef = std::max(maxRef, std::fabs(b));
    }
  }
  comparison.maxRel =
      comparison.maxAbs == 0 ? 0 : comparison.maxAbs / std::max(maxRef, 1e-30);
  return comparison;
}

bool sbp::run::writeManifest(const std::string &path, const Manifest &manifest,
                             std::string &error) {
  json args = json::array(), results = json::array();
  for (size_t i = 0; i < manifest.args.size(); ++i) {
    args.push_back(toJson(manifest.args[i]));
    if (i < manifest.argShapes.size())
      args.back()["global_shape"] = manifest.argShapes[i];
  }
  for (const TensorSpec &spec : manifest.results)
    results.push_back(toJson(spec));
  json document = {
      {"entry", manifest.entry}, {"backend", getBackendName(manifest.backend)},
      {"mesh", manifest.mesh},   {"args", args},
      {"results", results},      {"expected", manifest.hasExpected}};
  if (manifest.trainSteps) {
    document["train_steps"] = manifest.trainSteps;
    document["carried"] = manifest.carried;
  }
  std::ofstream out(path);
  out << document.dump(2) << "\n";
  if (!out) {
    error = path + ": cannot write the file";
    return false;
  }
  return true;
}

std::optional<Manifest> sbp::run::readManifest(const std::string &path,
                                               std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the file";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto fail = [&](const std::string &what) {
    error = path + ": " + what;
    return std::nullopt;
  };
  if (document.is_discarded() || !document.is_object())
    return fail("not a JSON object");
  Manifest manifest;
  if (!document.contains("entry") || !document["entry"].is_string())
    return fail("no \"entry\" name");
  manifest.entry = document["entry"].get<std::string>();
  // Fields are checked before they are read: a wrong type would otherwise
  // abort (the JSON library is built without exceptions).
  std::string backend = "cpu";
  if (document.contains("backend") && document["backend"].is_string())
    backend = document["backend"].get<std::string>();
  if (backend == "cuda")
    manifest.backend = Backend::Cuda;
  else if (backend == "cpu" || backend == "emulated-cuda")
    manifest.backend = backend == "cpu" ? Backend::Cpu : Backend::EmulatedCuda;
  else
    return fail("unknown backend \"" + backend + "\"");
  if (!document.contains("mesh") || !document["mesh"].is_array())
    return fail("no \"mesh\" shape");
  for (const json &size : document["mesh"]) {
    if (!size.is_number_integer() || size.get<int64_t>() < 1)
      return fail("mesh sizes must be positive integers");
    manifest.mesh.push_back(size.get<int64_t>());
  }
  for (const char *key : {"args", "results"}) {
    if (!document.contains(key) || !document[key].is_array())
      return fail(std::string("no \"") + key + "\" list");
    for (const json &value : document[key]) {
      TensorSpec spec;
      std::string problem;
      if (!fromJson(value, manifest.mesh, spec, problem))
        return fail(std::string(key) + ": " + problem);
      if (std::string(key) == "results") {
        manifest.results.push_back(spec);
        continue;
      }
      std::vector<int64_t> shape;
      if (value.contains("global_shape") && value["global_shape"].is_array())
        for (const json &size : value["global_shape"])
          if (size.is_number_integer())
            shape.push_back(size.get<int64_t>());
      if (shape.size() != spec.localShape.size())
        return fail(spec.name + ": global_shape must be a list of " +
                    std::to_string(spec.localShape.size()) + " sizes");
      manifest.args.push_back(spec);
      manifest.argShapes.push_back(shape);
    }
  }
  manifest.hasExpected = document.contains("expected") &&
                         document["expected"].is_boolean() &&
                         document["expected"].get<bool>();
  if (document.contains("train_steps")) {
    const json &steps = document["train_steps"];
    const json &carried =
        document.contains("carried") ? document["carried"] : json();
    if (!steps.is_number_integer() || steps.get<int64_t>() < 1)
      return fail("train_steps must be a positive integer");
    int64_t most = std::min(manifest.args.size(), manifest.results.size());
    if (!carried.is_number_integer() || carried.get<int64_t>() < 0 ||
        carried.get<int64_t>() > most)
      return fail("carried must be an integer in [0, " + std::to_string(most) +
                  "] (the updated arguments of a training step)");
    if (manifest.results.empty())
      return fail("a training step returns its loss last; there are no "
                  "results");
    manifest.trainSteps = steps.get<int64_t>();
    manifest.carried = carried.get<int64_t>();
  }
  return manifest;
}

NpyArray sbp::run::makeLossCurve(const std::vector<double> &losses,
                                 sbp_dtype dtype) {
  NpyArray curve;
  curve.dtype = dtype == SBP_F64 ? SBP_F64 : SBP_F32;
  curve.shape = {int64_t(losses.size())};
  curve.data.resize(losses.size() * sbp_dtype_size(curve.dtype));
  for (size_t k = 0; k < losses.size(); ++k)
    if (curve.dtype == SBP_F64)
      reinterpret_cast<double *>(curve.data.data())[k] = losses[k];
    else
      reinterpret_cast<float *>(curve.data.data())[k] = losses[k];
  return curve;
}
