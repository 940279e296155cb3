//===- Builders.cpp - IR building blocks of the ONNX importer -------------===//
//
// Element-wise ops with numpy broadcasting, reductions and reshapes, built
// as linalg and tensor ops whose SBP rules sbp derives (from indexing maps)
// or knows (reassociations).
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

Type onnx_import::getElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

namespace {
template <typename T, typename Field>
DenseElementsAttr fromField(RankedTensorType type, const Field &field) {
  SmallVector<T> data(field.begin(), field.end());
  return DenseElementsAttr::get(type, ArrayRef<T>(data));
}
} // namespace

DenseElementsAttr onnx_import::getRawAttr(RankedTensorType type,
                                          StringRef bytes) {
  Type element = type.getElementType();
  int64_t width =
      element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  if (static_cast<int64_t>(bytes.size()) != type.getNumElements() * width)
    return nullptr;
  if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : bytes)
      bits.push_back(c != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(bytes.data(), bytes.size()));
}

DenseElementsAttr onnx_import::getTensorAttr(MLIRContext *context,
                                             const onnx::TensorProto &tensor,
                                             std::string &error) {
  Type element = getElementType(context, tensor.data_type());
  if (!element) {
    error =
        "element type " +
        (onnx::TensorProto_DataType_IsValid(tensor.data_type())
             ? onnx::TensorProto_DataType_Name(
                   static_cast<onnx::TensorProto_DataType>(tensor.data_type()))
             : std::to_string(tensor.data_type())) +
        " is not supported";
    return nullptr;
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "weights in external data files are not supported";
    return nullptr;
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(shape, element);
  int64_t count = type.getNumElements();
  auto checkCount = [&](int64_t have) {
    if (have == count)
      return true;
    error = "holds " + std::to_string(have) + " values for shape with " +
            std::to_string(count);
    return false;
  };
  if (tensor.has_raw_data()) {
    DenseElementsAttr attr = getRawAttr(type, tensor.raw_data());
    if (!attr)
      error = "raw data of " + std::to_string(tensor.raw_data().size()) +
              " bytes for " + std::to_string(count) + " elements";
    return attr;
  }
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!checkCount(tensor.float_data_size()))
      return nullptr;
    return fromField<float>(type, tensor.float_data());
  case onnx::TensorProto::DOUBLE:
    if (!checkCount(tensor.double_data_size()))
      return nullptr;
    return fromField<double>(type, tensor.double_data());
  case onnx::TensorProto::INT64:
    if (!checkCount(tensor.int64_data_size()))
      return nullptr;
    return fromField<int64_t>(type, tensor.int64_data());
  case onnx::TensorProto::INT32:
    if (!checkCount(tensor.int32_data_size()))
      return nullptr;
    return fromField<int32_t>(type, tensor.int32_data());
  case onnx::TensorProto::INT8:
    if (!checkCount(tensor.int32_data_size()))
      return nullptr;
    return fromField<int8_t>(type, tensor.int32_data());
  case onnx::TensorProto::BOOL: {
    if (!checkCount(tensor.int32_data_size()))
      return nullptr;
    SmallVector<bool> bits;
    for (int32_t v : tensor.int32_data())
      bits.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  default:
    error = "unsupported storage";
    return nullptr;
  }
}

DenseElementsAttr onnx_import::foldableInput(NodeImporter &n, unsigned i) {
  // Integer constants small enough to evaluate at import time.
  constexpr int64_t kMaxFoldedElements = 1024;
  // The type first: reading a weight's value would convert all of it.
  RankedTensorType type = n.inputType(i);
  if (!type || !type.getElementType().isInteger() ||
      type.getElementType().isInteger(1) ||
      type.getNumElements() > kMaxFoldedElements)
    return nullptr;
  return n.constantInput(i);
}

std::optional<int64_t> onnx_import::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}
