//===- EntryTest.cpp - Saved programs' manifests and comparisons ----------===//

#include "sbp/Run/Entry.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstring>
#include <fstream>

using namespace sbp::run;
using sbp::runtime::LayoutEntry;
using sbp::runtime::NpyArray;

namespace {

NpyArray makeArray(std::vector<int64_t> shape, std::vector<float> values) {
  NpyArray array;
  array.dtype = SBP_F32;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

std::string tempPath(const char *name) {
  return testing::TempDir() + "/" + name;
}

TEST(Manifest, RoundTrip) {
  Manifest manifest;
  manifest.entry = "block";
  manifest.backend = Backend::Cuda;
  manifest.mesh = {2, 2};
  TensorSpec x;
  x.name = "arg0";
  x.dtype = SBP_I64;
  x.typeName = "tensor<4x?xi64>";
  x.localShape = {4, -1};
  x.layout.meshShape = manifest.mesh;
  x.layout.entries.resize(2);
  x.layout.entries[0].kind = LayoutEntry::Split;
  x.layout.entries[0].dim = 1;
  x.layout.entries[1].kind = LayoutEntry::Partial;
  x.layout.entries[1].reduction = SBP_MAX;
  manifest.args = {x};
  manifest.argShapes = {{4, 10}};
  TensorSpec y = x;
  y.name = "result0";
  y.isBool = true;
  y.layout.entries[0] = LayoutEntry();
  manifest.results = {y};
  manifest.hasExpected = true;

  std::string path = tempPath("manifest.json"), error;
  ASSERT_TRUE(writeManifest(path, manifest, error)) << error;
  std::optional<Manifest> read = readManifest(path, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->entry, "block");
  EXPECT_EQ(read->backend, Backend::Cuda);
  EXPECT_EQ(read->mesh, manifest.mesh);
  EXPECT_TRUE(read->hasExpected);
  ASSERT_EQ(read->args.size(), 1u);
  EXPECT_EQ(read->args[0].dtype, SBP_I64);
  EXPECT_EQ(read->args[0].localShape, (std::vector<int64_t>{4, -1}));
  EXPECT_EQ(read->argShapes[0], (std::vector<int64_t>{4, 10}));
  EXPECT_EQ(read->args[0].layout.entries[0].kind, LayoutEntry::Split);
  EXPECT_EQ(read->args[0].layout.entries[0].dim, 1);
  EXPECT_EQ(read->args[0].layout.entries[1].kind, LayoutEntry::Partial);
  EXPECT_EQ(read->args[0].layout.entries[1].reduction, SBP_MAX);
  ASSERT_EQ(read->results.size(), 1u);
  EXPECT_TRUE(read->results[0].isBool);
  EXPECT_EQ(read->results[0].layout.entries[0].kind, LayoutEntry::Broadcast);
}

TEST(Manifest, ErrorsNameTheProblem) {
  std::string path = tempPath("bad.json"), error;
  auto check = [&](const char *text, const char *expected) {
    std::ofstream(path) << text;
    EXPECT_FALSE(readManifest(path, error)) << text;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  };
  check("[1, 2", "not a JSON object");
  check(R"({"mesh": [2]})", "no \"entry\" name");
  check(R"({"entry": "f", "mesh": [0], "args": [], "results": []})",
        "mesh sizes must be positive integers");
  check(R"({"entry": "f", "backend": "tpu", "mesh": [2]})",
        "unknown backend \"tpu\"");
  // A field of the wrong type is an error, not an abort.
  check(R"({"entry": "f", "mesh": [2], "args": [{"name": "x", "dtype": "f32",
        "shape": [2], "layout": ["broadcast"]}], "results": []})",
        "a tensor needs name, dtype, shape");
  check(R"({"entry": "f", "mesh": [2], "args": [{"name": "x", "dtype": 0,
        "shape": [2], "layout": ["broadcast"]}], "results": []})",
        "x: global_shape must be a list of 1 sizes");
  check(R"({"entry": "f", "mesh": [2], "args": [], "results": [{"name": "y",
        "dtype": 0, "shape": [2], "layout": [{"split": "zero"}]}]})",
        "y: a layout entry is");
  EXPECT_FALSE(readManifest(tempPath("missing.json"), error));
  EXPECT_NE(error.find("cannot read the file"), std::string::npos);
}

TEST(Compare, NormwiseAndNaN) {
  // Errors are relative to the largest reference magnitude.
  Comparison c = compareResults({makeArray({3}, {1, 2, 100.5})},
                                {makeArray({3}, {1, 2, 100})});
  EXPECT_DOUBLE_EQ(c.maxAbs, 0.5);
  EXPECT_DOUBLE_EQ(c.maxRel, 0.005);
  EXPECT_TRUE(c.shapeError.empty());
  // NaN in the same place matches (and is counted); against a number it
  // is an infinite error.
  c = compareResults({makeArray({2}, {NAN, 1})}, {makeArray({2}, {NAN, 1})});
  EXPECT_EQ(c.maxAbs, 0);
  EXPECT_EQ(c.nans, 1);
  c = compareResults({makeArray({2}, {NAN, 1})}, {makeArray({2}, {0, 1})});
  EXPECT_TRUE(std::isinf(c.maxAbs));
  c = compareResults({makeArray({2}, {0, 1})}, {makeArray({1, 2}, {0, 1})});
  EXPECT_EQ(c.shapeError, "result0: shape [2] but the reference is [1, 2]");
}

TEST(RandomInputs, SameSeedSameValues) {
  TensorSpec spec;
  spec.dtype = SBP_F32;
  std::mt19937_64 a(7), b(7);
  NpyArray x = randomArray(spec, {16}, a), y = randomArray(spec, {16}, b);
  EXPECT_EQ(x.data, y.data);
  for (int64_t i = 0; i < 16; ++i) {
    float v = reinterpret_cast<const float *>(x.data.data())[i];
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  spec.dtype = SBP_I8;
  spec.isBool = true;
  NpyArray flags = randomArray(spec, {64}, a);
  for (char v : flags.data)
    EXPECT_TRUE(v == 0 || v == 1);
}

} // namespace
