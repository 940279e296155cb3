//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//

#include "sbp/Runtime/Npy.h"
#include "sbp/Runtime/Float16.h"
#include <cstring>
#include <fstream>
#include <sstream>

using namespace sbp::runtime;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

bool fail(std::string &error, const std::string &path,
          const std::string &message) {
  error = path + ": " + message;
  return false;
}

/// The value of `key` in a header dict literal, up to the next top-level
/// comma or the closing brace.
bool findValue(const std::string &header, const std::string &key,
               std::string &value) {
  size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos)
    return false;
  pos = header.find(':', pos);
  if (pos == std::string::npos)
    return false;
  size_t end = ++pos;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  value = header.substr(pos, end - pos);
  size_t first = value.find_first_not_of(" \t");
  size_t last = value.find_last_not_of(" \t");
  value =
      first == std::string::npos ? "" : value.substr(first, last - first + 1);
  return true;
}

bool parseDescr(const std::string &descr, sbp_dtype &dtype, bool &bigEndian) {
  if (descr.size() < 4 || descr.front() != '\'' || descr.back() != '\'')
    return false;
  std::string d = descr.substr(1, descr.size() - 2);
  bigEndian = d[0] == '>';
  std::string kind = d.substr(1);
  if (kind == "f2")
    dtype = SBP_F16;
  else if (kind == "f4")
    dtype = SBP_F32;
  else if (kind == "f8")
    dtype = SBP_F64;
  // Unsigned integers are read as the signless integers of their width
  // that programs compute on (imported unsigned types become those).
  else if (kind == "i4" || kind == "u4")
    dtype = SBP_I32;
  else if (kind == "i8" || kind == "u8")
    dtype = SBP_I64;
  else if (kind == "i1" || kind == "u1" || kind == "b1")
    dtype = SBP_I8;
  else
    return false;
  return true;
}

const char *descrOf(sbp_dtype dtype) {
  switch (dtype) {
  case SBP_F32:
    return "<f4";
  case SBP_F64:
    return "<f8";
  case SBP_I32:
    return "<i4";
  case SBP_I64:
    return "<i8";
  case SBP_I8:
    return "|i1";
  case SBP_F16:
    return "<f2";
  case SBP_BF16:
    // NumPy has no bfloat16: writeNpy widens it.
    return "";
  }
  return "";
}

bool parseShape(const std::string &text, std::vector<int64_t> &shape) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return false;
  std::stringstream items(text.substr(1, text.size() - 2));
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t first = item.find_first_not_of(" \t");
    if (first == std::string::npos)
      continue; // The trailing comma of a 1-tuple.
    char *end = nullptr;
    long long size = std::strtoll(item.c_str() + first, &end, 10);
    if (end == item.c_str() + first || size < 0)
      return false;
    shape.push_back(size);
  }
  return true;
}

/// Reorders column-major `data` of `shape` to row-major.
std::vector<char> toRowMajor(const std::vector<char> &data,
                             const std::vector<int64_t> &shape,
                             int64_t elementSize) {
  std::vector<char> out(data.size());
  int64_t rank = shape.size(), count = data.size() / elementSize;
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    // `index` walks the elements in row-major order.
    int64_t column = 0;
    for (int64_t d = rank - 1; d >= 0; --d)
      column = column * shape[d] + index[d];
    std::memcpy(&out[linear * elementSize], &data[column * elementSize],
                elementSize);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  return out;
}

} // namespace

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

bool sbp::runtime::readNpy(const std::string &path, NpyArray &array,
                           std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return fail(error, path, "cannot open file");
  char magic[kMagicSize + 2];
  if (!file.read(magic, sizeof(magic)) ||
      std::memcmp(magic, kMagic, kMagicSize) != 0)
    return fail(error, path, "not a .npy file (bad magic string)");
  int major = static_cast<unsigned char>(magic[kMagicSize]);
  uint32_t headerSize = 0;
  unsigned char sizeBytes[4] = {0, 0, 0, 0};
  int sizeWidth = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return fail(error, path,
                "unsupported .npy version " + std::to_string(major));
  if (!file.read(reinterpret_cast<char *>(sizeBytes), sizeWidth))
    return fail(error, path, "truncated header");
  for (int i = sizeWidth - 1; i >= 0; --i)
    headerSize = headerSize * 256 + sizeBytes[i];
  std::string header(headerSize, '\0');
  if (!file.read(&header[0], headerSize))
    return fail(error, path, "truncated header");

  std::string descr, fortran, shapeText;
  if (!findValue(header, "descr", descr) ||
      !findValue(header, "fortran_order", fortran) ||
      !findValue(header, "shape", shapeText))
    return fail(error, path, "header lacks descr, fortran_order or shape");
  bool bigEndian = false;
  if (!parseDescr(descr, array.dtype, bigEndian))
    return fail(error, path,
                "unsupported dtype " + descr +
                    " (f4, f8, i4, i8, u4, u8, i1, u1 and b1 are)");
  if (bigEndian && sbp_dtype_size(array.dtype) > 1)
    return fail(error, path, "big-endian data is not supported");
  if (fortran != "False" && fortran != "True")
    return fail(error, path, "bad fortran_order " + fortran);
  array.shape.clear();
  if (!parseShape(shapeText, array.shape))
    return fail(error, path, "bad shape " + shapeText);

  int64_t bytes = array.numElements() * sbp_dtype_size(array.dtype);
  array.data.assign(bytes, 0);
  if (bytes > 0 && !file.read(array.data.data(), bytes))
    return fail(error, path,
                "truncated data: expected " + std::to_string(bytes) +
                    " bytes for shape " + shapeText);
  if (file.peek() != std::ifstream::traits_type::eof())
    return fail(error, path, "trailing bytes after the data");
  if (fortran == "True" && array.shape.size() > 1)
    array.data =
        toRowMajor(array.data, array.shape, sbp_dtype_size(array.dtype));
  return true;
}

bool sbp::runtime::writeNpy(const std::string &path, const NpyArray &array,
                            std::string &error) {
  if (array.dtype == SBP_BF16)
    return writeNpy(path, convertFloats(array, SBP_F32), error);
  std::ostringstream dict;
  dict << "{'descr': '" << descrOf(array.dtype)
       << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    dict << (i ? ", " : "") << array.shape[i];
  if (array.shape.size() == 1)
    dict << ",";
  dict << "), }";
  std::string header = dict.str();
  // The data starts at a multiple of 64 bytes; the header ends with '\n'.
  bool wide = header.size() + 12 > 65535;
  size_t prefix = kMagicSize + 2 + (wide ? 4 : 2);
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    return fail(error, path, "cannot create file");
  file.write(kMagic, kMagicSize);
  char version[2] = {static_cast<char>(wide ? 2 : 1), 0};
  file.write(version, 2);
  uint32_t size = header.size();
  for (int i = 0; i < (wide ? 4 : 2); ++i)
    file.put(static_cast<char>((size >> (8 * i)) & 0xff));
  file << header;
  file.write(array.data.data(), array.data.size());
  if (!file)
    return fail(error, path, "write failed");
  return true;
}

NpyArray sbp::runtime::convertFloats(const NpyArray &array, sbp_dtype dtype) {
  NpyArray result;
  result.dtype = dtype;
  result.shape = array.shape;
  int64_t n = array.numElements();
  result.data.resize(n * sbp_dtype_size(dtype));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == SBP_BF16) {
      float value;
      std::memcpy(&value, array.data.data() + 4 * i, 4);
      BFloat16 rounded(value);
      std::memcpy(result.data.data() + 2 * i, &rounded, 2);
    } else {
      BFloat16 value;
      std::memcpy(&value, array.data.data() + 2 * i, 2);
      float widened = value;
      std::memcpy(result.data.data() + 4 * i, &widened, 4);
    }
  }
  return result;
}
