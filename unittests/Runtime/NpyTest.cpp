//===- NpyTest.cpp - .npy files written by NumPy, and our own -------------===//
//
// Inputs/ holds files written by NumPy 2 (np.save and
// np.lib.format.write_array).
//
//===----------------------------------------------------------------------===//

#include "sbp/Runtime/Npy.h"
#include "gtest/gtest.h"
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace sbp::runtime;

namespace {

std::string input(const std::string &name) {
  return std::string(SBP_NPY_INPUTS) + "/" + name;
}

template <typename T> std::vector<T> values(const NpyArray &array) {
  std::vector<T> result(array.numElements());
  std::memcpy(result.data(), array.data.data(), array.data.size());
  return result;
}

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

TEST(Npy, ReadsNumPyFloat32) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(readNpy(input("f32_2x3.npy"), array, error)) << error;
  EXPECT_EQ(array.dtype, SBP_F32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(array), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, ReadsVersion2) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(readNpy(input("f32_2x3_v2.npy"), array, error)) << error;
  EXPECT_EQ(values<float>(array), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, ReadsOneDimensionalFloat64) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(readNpy(input("f64_5.npy"), array, error)) << error;
  EXPECT_EQ(array.dtype, SBP_F64);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(values<double>(array),
            (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

TEST(Npy, ReordersFortranArrays) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(readNpy(input("i64_2x3x4_fortran.npy"), array, error)) << error;
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  std::vector<int64_t> expected(24);
  for (int i = 0; i < 24; ++i)
    expected[i] = i;
  EXPECT_EQ(values<int64_t>(array), expected);
}

TEST(Npy, ReadsScalarsBooleansAndEmptyArrays) {
  NpyArray scalar, flags, empty;
  std::string error;
  ASSERT_TRUE(readNpy(input("i32_scalar.npy"), scalar, error)) << error;
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(values<int32_t>(scalar), (std::vector<int32_t>{7}));
  ASSERT_TRUE(readNpy(input("bool_4.npy"), flags, error)) << error;
  EXPECT_EQ(flags.dtype, SBP_I8);
  EXPECT_EQ(values<int8_t>(flags), (std::vector<int8_t>{1, 0, 1, 1}));
  ASSERT_TRUE(readNpy(input("f32_empty.npy"), empty, error)) << error;
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(empty.data.empty());
}

TEST(Npy, ReadsUnsignedAsSignlessOfTheirWidth) {
  NpyArray array;
  std::string error;
  ASSERT_TRUE(readNpy(input("u32_3.npy"), array, error)) << error;
  EXPECT_EQ(array.dtype, SBP_I32);
  std::vector<int32_t> got = values<int32_t>(array);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(static_cast<uint32_t>(got[2]), 4000000000u);
  EXPECT_EQ(got[1], 7);
}

TEST(Npy, ErrorsNameTheFileAndTheProblem) {
  struct Case {
    const char *file, *message;
  } cases[] = {
      {"f32_truncated.npy", "truncated data: expected 24 bytes"},
      {"not_npy.npy", "not a .npy file"},
      {"f32_big_endian.npy", "big-endian data is not supported"},
      {"c64_2.npy", "unsupported dtype '<c8'"},
      {"missing.npy", "cannot open file"},
  };
  for (const Case &c : cases) {
    NpyArray array;
    std::string error;
    EXPECT_FALSE(readNpy(input(c.file), array, error)) << c.file;
    EXPECT_NE(error.find(input(c.file) + ": "), std::string::npos) << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << error;
  }
}

TEST(Npy, WritesWhatNumPyWrites) {
  NpyArray array;
  array.dtype = SBP_F32;
  array.shape = {2, 3};
  std::vector<float> data = {0, 1, 2, 3, 4, 5};
  array.data.assign(reinterpret_cast<char *>(data.data()),
                    reinterpret_cast<char *>(data.data() + 6));
  std::string path = testing::TempDir() + "npy_written.npy", error;
  ASSERT_TRUE(writeNpy(path, array, error)) << error;
  EXPECT_EQ(readBytes(path), readBytes(input("f32_2x3.npy")));
  std::remove(path.c_str());
}

TEST(Npy, RoundTripsEveryDtypeAndRank) {
  for (sbp_dtype dtype : {SBP_F32, SBP_F64, SBP_I32, SBP_I64, SBP_I8})
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {7}, {0, 3}, {2, 3, 4}}) {
      NpyArray array;
      array.dtype = dtype;
      array.shape = shape;
      array.data.resize(array.numElements() * sbp_dtype_size(dtype));
      for (size_t i = 0; i < array.data.size(); ++i)
        array.data[i] = static_cast<char>(i * 7 + 1);
      std::string path = testing::TempDir() + "npy_round_trip.npy", error;
      ASSERT_TRUE(writeNpy(path, array, error)) << error;
      NpyArray back;
      ASSERT_TRUE(readNpy(path, back, error)) << error;
      EXPECT_EQ(back.dtype, dtype);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.data, array.data);
      std::remove(path.c_str());
    }
}

} // namespace
