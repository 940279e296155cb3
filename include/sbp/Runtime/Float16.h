//===- Float16.h - 16-bit floats on the host --------------------*- C++ -*-===//
//
// IEEE binary16 (f16) and bfloat16 (bf16) elements as the runtime moves and
// reduces them: stored as their bits, converted to float for arithmetic
// (rounding to nearest even on the way back), so the templates that reduce
// f32 and f64 tensors reduce them too.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_FLOAT16_H
#define SBP_RUNTIME_FLOAT16_H

#include <cstdint>
#include <cstring>
#include <limits>

namespace sbp::runtime {

/// The bits of an f32, and back.
inline uint32_t toBits(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  return word;
}
inline float fromBits(uint32_t word) {
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// bfloat16: the upper half of an f32.
inline float bfloat16ToFloat(uint16_t bits) {
  return fromBits(uint32_t(bits) << 16);
}

inline uint16_t floatToBFloat16(float value) {
  uint32_t word = toBits(value);
  if ((word & 0x7fffffffu) > 0x7f800000u) // NaN stays a quiet NaN.
    return uint16_t((word >> 16) | 0x40);
  word += 0x7fffu + ((word >> 16) & 1);
  return uint16_t(word >> 16);
}

/// IEEE binary16: 1 sign, 5 exponent (bias 15) and 10 fraction bits.
inline float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  uint32_t word;
  if (exponent == 0x1f) {
    word = sign | 0x7f800000u | (fraction << 13);
  } else if (exponent != 0) {
    word = sign | ((exponent + 112) << 23) | (fraction << 13);
  } else if (fraction == 0) {
    word = sign;
  } else {
    // A subnormal: normalize the fraction.
    exponent = 113;
    while (!(fraction & 0x400)) {
      fraction <<= 1;
      --exponent;
    }
    word = sign | (exponent << 23) | ((fraction & 0x3ff) << 13);
  }
  return fromBits(word);
}

inline uint16_t floatToHalf(float value) {
  uint32_t word = toBits(value);
  uint16_t sign = uint16_t((word >> 16) & 0x8000);
  uint32_t magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return sign | 0x7e00;
  if (magnitude >= 0x477ff000u) // Rounds to infinity (65520 and above).
    return sign | 0x7c00;
  if (magnitude < 0x38800000u) {
    // A subnormal or zero: the fraction with its implicit bit, shifted so
    // that units are 2^-24, rounded to nearest even.
    if (magnitude < 0x33000000u)
      return sign;
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1),
             midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return sign | uint16_t(half);
  }
  magnitude -= 0x38000000u; // Rebias the exponent from 127 to 15.
  magnitude += 0xfffu + ((magnitude >> 13) & 1);
  return sign | uint16_t(magnitude >> 13);
}

/// An element stored as 16 bits and computed with as a float.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
struct Float16 {
  uint16_t bits;
  Float16() = default;
  Float16(float value) : bits(FromFloat(value)) {}
  operator float() const { return ToFloat(bits); }
  Float16 operator-() const { return Float16(-float(*this)); }
  Float16 &operator+=(Float16 other) {
    return *this = Float16(float(*this) + float(other));
  }
};

using Half = Float16<halfToFloat, floatToHalf>;
using BFloat16 = Float16<bfloat16ToFloat, floatToBFloat16>;

} // namespace sbp::runtime

/// Infinities and extremes, for the neutral elements of max and min.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
class std::numeric_limits<sbp::runtime::Float16<ToFloat, FromFloat>> {
  using T = sbp::runtime::Float16<ToFloat, FromFloat>;

public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static T infinity() { return T(std::numeric_limits<float>::infinity()); }
  static T max() {
    T value;
    value.bits = ToFloat == sbp::runtime::halfToFloat ? 0x7bff : 0x7f7f;
    return value;
  }
  static T lowest() {
    T value = max();
    value.bits |= 0x8000;
    return value;
  }
};

#endif // SBP_RUNTIME_FLOAT16_H
