//===- ExternalData.cpp - Tensors stored beside the ONNX model ------------===//
//
// ONNX keeps large tensors in files next to the model (PyTorch's exporter
// does so by default): the tensor names a `location` relative to the
// model's directory, an `offset` and a `length`. They are read into the
// tensors' raw data before anything else looks at the model.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::sbp;
using namespace mlir::sbp::onnx_import;

namespace {
/// Reads the external data of `tensor`; `files` keeps the files read.
LogicalResult
readExternal(onnx::TensorProto &tensor, StringRef directory,
             llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> &files,
             std::string &error) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t value;
      if (StringRef(entry.value()).getAsInteger(10, value)) {
        error = "its external data has a bad " + entry.key() + " '" +
                entry.value() + "'";
        return failure();
      }
      (entry.key() == "offset" ? offset : length.emplace()) = value;
    }
  }
  // The data must lie beside the model, as ONNX's checker requires.
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         "..")) {
    error = "its external data location '" + location +
            "' is not a path inside the model's directory";
    return failure();
  }
  SmallString<256> path(directory);
  llvm::sys::path::append(path, location);
  std::unique_ptr<llvm::MemoryBuffer> &file = files[path];
  if (!file) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> read =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!read) {
      error = "its external data file " + path.str().str() +
              " cannot be read: " + read.getError().message();
      return failure();
    }
    file = std::move(*read);
  }
  uint64_t size = file->getBufferSize();
  uint64_t count = length.value_or(offset <= size ? size - offset : 0);
  if (offset > size || count > size - offset) {
    error = "its external data (offset " + std::to_string(offset) +
            ", length " + std::to_string(count) + ") lies beyond the end of " +
            path.str().str() + " (" + std::to_string(size) + " bytes)";
    return failure();
  }
  tensor.set_raw_data(file->getBufferStart() + offset, count);
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return success();
}
} // namespace

LogicalResult onnx_import::loadExternalData(onnx::ModelProto &model,
                                            StringRef modelPath,
                                            std::string &error) {
  SmallString<256> directory(modelPath);
  llvm::sys::path::remove_filename(directory);
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
  auto load = [&](onnx::TensorProto &tensor, const Twine &what) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return success();
    std::string reason;
    if (succeeded(readExternal(tensor, directory, files, reason)))
      return success();
    error = (what + ": " + reason).str();
    return failure();
  };
  onnx::GraphProto &graph = *model.mutable_graph();
  for (onnx::TensorProto &tensor : *graph.mutable_initializer())
    if (failed(load(tensor, "initializer '" + tensor.name() + "'")))
      return failure();
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attribute : *node.mutable_attribute())
      if (attribute.has_t() &&
          failed(load(*attribute.mutable_t(),
                      "the tensor of node '" + node.name() + "'")))
        return failure();
  return success();
}
