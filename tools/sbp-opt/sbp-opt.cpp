//===- sbp-opt.cpp - mlir-opt with the sbp dialect and passes -------------===//
//
// Every upstream dialect, extension and pass, plus sbp's. Inputs go through
// openSbpInputFile so that the sbp syntax `sbp.annotate %x #sbp.nd<...>`
// parses. An ONNX model is imported first and handed on as MLIR text with
// its locations, so the passes report errors on the model's nodes. A
// StableHLO program is imported the same way (--import-stablehlo=false
// reads it as it is).
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "sbp/Import/Onnx.h"
#include "sbp/Import/Stablehlo.h"
#include "sbp/InitSbp.h"
#include "sbp/Runtime/Npy.h"
#include "sbp/Tools/InputFile.h"
#include "sbp/Transforms/ProgressLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory onnxCategory("ONNX import options");
cl::opt<std::string> onnxWeights(
    "onnx-weights",
    cl::desc("Floating-point ONNX initializers become function 'arguments' "
             "(the default) or 'constants'"),
    cl::init("arguments"), cl::cat(onnxCategory));
cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Shape of an ONNX input with dynamic dimensions: "
                         "NAME=AxB... (repeatable)"),
                cl::cat(onnxCategory));
cl::list<std::string> inputValues(
    "onnx-input-value",
    cl::desc("Value of an ONNX input that must be known at import time (a "
             "shape given as an input): NAME=FILE.npy (repeatable)"),
    cl::cat(onnxCategory));

cl::opt<bool> quietFlag(
    "quiet", cl::desc("No status lines while long passes run (the search's)"),
    cl::init(false));
cl::alias quietAlias("q", cl::desc("Alias for --quiet"),
                     cl::aliasopt(quietFlag));

cl::OptionCategory stablehloCategory("StableHLO import options");
cl::opt<bool> importStablehloFlag(
    "import-stablehlo",
    cl::desc("Import a StableHLO program (run the sbp-import-stablehlo "
             "pipeline) before the given passes; off with --split-input-file "
             "and --verify-diagnostics"),
    cl::init(true), cl::cat(stablehloCategory));

/// Imports a StableHLO program into MLIR text with its locations; returns
/// `input` as it is when it holds no StableHLO, null after printing errors.
std::unique_ptr<llvm::MemoryBuffer>
importStablehlo(std::unique_ptr<llvm::MemoryBuffer> input,
                const DialectRegistry &registry) {
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  const llvm::MemoryBuffer &text = *input;
  sourceMgr->AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
  if (failed(mlir::sbp::checkStablehloOpNames(text, &context)))
    return nullptr;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return nullptr;
  // Only a file with StableHLO ops is replaced by its import; any other
  // goes on as written, comments and all.
  if (!mlir::sbp::isStablehloModule(*module))
    return llvm::MemoryBuffer::getMemBufferCopy(text.getBuffer(),
                                                text.getBufferIdentifier());
  if (failed(mlir::sbp::importStablehlo(*module)))
    return nullptr;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  // Shardings become `sbp.annotate %x #sbp.nd<...>`, which MLIR's parser
  // reads only after the rewrite every sbp input gets.
  return llvm::MemoryBuffer::getMemBufferCopy(
      mlir::sbp::normalizeSbpSyntax(printed), text.getBufferIdentifier());
}

/// Imports an ONNX model into MLIR text; null after printing the errors.
std::unique_ptr<llvm::MemoryBuffer>
importOnnx(const llvm::MemoryBuffer &model, const DialectRegistry &registry) {
  mlir::sbp::OnnxImportOptions options;
  std::string error;
  if (onnxWeights != "arguments" && onnxWeights != "constants") {
    llvm::errs() << "sbp-opt: --onnx-weights=" << onnxWeights
                 << ": expected arguments or constants\n";
    return nullptr;
  }
  options.weightsAsArguments = onnxWeights == "arguments";
  for (const std::string &flag : inputShapes)
    if (!mlir::sbp::parseOnnxInputShape(flag, options, error)) {
      llvm::errs() << "sbp-opt: " << error << "\n";
      return nullptr;
    }
  std::vector<::sbp::runtime::NpyArray> values(inputValues.size());
  for (auto [flag, array] : llvm::zip(inputValues, values)) {
    auto [name, path] = llvm::StringRef(flag).rsplit('=');
    if (name.empty() || path.empty() ||
        !::sbp::runtime::readNpy(path.str(), array, error)) {
      llvm::errs() << "sbp-opt: --onnx-input-value " << flag << ": "
                   << (error.empty() ? "expected NAME=FILE.npy" : error)
                   << "\n";
      return nullptr;
    }
    options.inputValues[name] =
        llvm::StringRef(array.data.data(), array.data.size());
    options.valueShapes[name].assign(array.shape.begin(), array.shape.end());
  }
  MLIRContext context(registry);
  mlir::sbp::OnnxImport imported = mlir::sbp::importOnnxModel(
      model.getMemBufferRef(), &context, options, error);
  if (!imported.module) {
    llvm::errs() << error << "\n";
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  imported.module->print(os, OpPrintingFlags().enableDebugInfo());
  return llvm::MemoryBuffer::getMemBufferCopy(text,
                                              model.getBufferIdentifier());
}
} // namespace

int main(int argc, char **argv) {
  registerAllPasses();
  mlir::sbp::registerSbpPassesAndPipelines();

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  mlir::sbp::registerSbpDialects(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "sbp optimizer driver: SBP auto-parallelization\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  mlir::sbp::ProgressLine::setQuiet(quietFlag);
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return 0;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::sbp::openSbpInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "sbp-opt: " << errorMessage << "\n";
    return 1;
  }
  if (mlir::sbp::isOnnxModel(inputFilename, input->getBuffer())) {
    input = importOnnx(*input, registry);
    if (!input)
      return 1;
  } else if (importStablehloFlag && config.inputSplitMarker().empty() &&
             !config.shouldVerifyDiagnostics() &&
             mlir::sbp::mayHoldStablehlo(input->getBuffer())) {
    input = importStablehlo(std::move(input), registry);
    if (!input)
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "sbp-opt: " << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
