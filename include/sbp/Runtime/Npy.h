//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The .npy format (versions 1.0, 2.0 and 3.0): a magic string, a version, a
// header holding a Python dict literal with 'descr', 'fortran_order' and
// 'shape', then the raw data. sbp-run reads its inputs and writes its
// outputs with these.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_NPY_H
#define SBP_RUNTIME_NPY_H

#include "sbp/Runtime/sbp_runtime.h"
#include <cstdint>
#include <string>
#include <vector>

namespace sbp::runtime {

/// A dense row-major array.
struct NpyArray {
  sbp_dtype dtype = SBP_F32;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t numElements() const;
};

/// Reads `path`. On failure returns false and sets `error` to a message that
/// names the file and what is wrong with it. Fortran-ordered arrays are
/// reordered to row-major; little-endian f2, f4, f8, i4, i8, i1 and b1 (read
/// as i1) are supported.
bool readNpy(const std::string &path, NpyArray &array, std::string &error);

/// Writes `array` to `path` as a version 1.0 .npy file (2.0 when the header
/// needs it); bf16, which NumPy has no type for, widened to f4. On failure
/// returns false and sets `error`.
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

/// `array` (f32 or bf16) as `dtype` (bf16 or f32): rounded to the nearest
/// bf16, or widened exactly.
NpyArray convertFloats(const NpyArray &array, sbp_dtype dtype);

} // namespace sbp::runtime

#endif // SBP_RUNTIME_NPY_H
