//===- Cluster.cpp - The machines a program is planned for ----------------===//

#include "sbp/Cost/Cluster.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::sbp;
using json = nlohmann::json;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One node of eight GPUs, the inter-node link of its multi-node form, and
/// the device.
struct NodePreset {
  llvm::StringRef name;
  Link nvlink;
  Link network;
  Device device;
};

/// Contractions at the maximum achievable matmul FLOP/s measured for bf16
/// (stas00/ml-engineering's MAMF table: 271.2 of A100 SXM's 312 TFLOP/s,
/// 794.5 of H100 SXM's 989; H200 has H100's chip and clocks), the same
/// fraction of the vendor's dense tensor-core peak for the other types
/// (TF32 stands for f32 contractions, as frameworks run them by default):
/// a schedule prices what the device sustains, not its spec sheet. Links
/// likewise at the bus bandwidth NCCL's maintainers quote for these
/// machines: NVLink 230 GB/s per A100 of the 300 GB/s line rate (protocol
/// overhead; NVIDIA/nccl-tests#149) and 370 per H100 of 450
/// (NVIDIA/nccl-tests#212); InfiniBand 192 GB/s per DGX A100 of its eight
/// HDR adapters (NVIDIA/nccl#812), 48 GB/s per NDR adapter of 50
/// (NVIDIA/nccl-tests#267, #290); latencies a ring step as NCCL's tuning
/// model prices its Simple protocol, which large messages use (hwLat in
/// src/graph/tuning.cc: 3.4 us over NVLink, 14 over the network). HBM at
/// 90% of the vendor figure, the most a streaming kernel reaches (NVIDIA
/// developer forums, "Trouble to reach peak bandwidth of A100": 1.80 of
/// 2.04 TB/s, 88% by Nsight Compute, against about 90% for the best kernel
/// of a GTC talk). Other loops and memory sizes are vendor figures.
constexpr double kA100Matmul = 271.2 / 312;
constexpr double kH100Matmul = 794.5 / 989;
constexpr double kHbm = 0.9;

const NodePreset &getNodePreset(size_t index) {
  static const NodePreset presets[] = {
      {"dgx-a100-8",
       {230e9, 3.4e-6},
       {24e9, 14e-6},
       {{{"f32", 156e12 * kA100Matmul},
         {"f16", 312e12 * kA100Matmul},
         {"bf16", 312e12 * kA100Matmul},
         {"f64", 19.5e12 * kA100Matmul}},
        {{"f32", 19.5e12}, {"f16", 78e12}, {"bf16", 39e12}, {"f64", 9.7e12}},
        2.039e12 * kHbm,
        80 * kGiB}},
      {"dgx-h100-8",
       {370e9, 3.4e-6},
       {48e9, 14e-6},
       {{{"f32", 495e12 * kH100Matmul},
         {"f16", 989e12 * kH100Matmul},
         {"bf16", 989e12 * kH100Matmul},
         {"f64", 67e12 * kH100Matmul}},
        {{"f32", 67e12}, {"f16", 134e12}, {"bf16", 134e12}, {"f64", 34e12}},
        3.35e12 * kHbm,
        80 * kGiB}},
      {"h200-8",
       {370e9, 3.4e-6},
       {48e9, 14e-6},
       {{{"f32", 495e12 * kH100Matmul},
         {"f16", 989e12 * kH100Matmul},
         {"bf16", 989e12 * kH100Matmul},
         {"f64", 67e12 * kH100Matmul}},
        {{"f32", 67e12}, {"f16", 134e12}, {"bf16", 134e12}, {"f64", 34e12}},
        4.8e12 * kHbm,
        141e9}},
  };
  return presets[index];
}
constexpr size_t kNumNodePresets = 3;

/// This host before calibration: what `sbp-run --calibrate` measures on
/// one core of a recent x86 server for sbp's generated code (MLP layers,
/// attention-score loops, streaming adds that allocate their result,
/// thread-to-thread all-reduce).
Cluster getCpuLocal() {
  Cluster cluster;
  cluster.name = "cpu-local";
  int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  cluster.hostCores = cores;
  cluster.shape = {cores};
  cluster.links = {Link{4e9, 30e-6}};
  cluster.device.peakFlops = {{"f32", 40e9}, {"f64", 20e9}};
  cluster.device.loopFlops = {{"f32", 2.5e9}, {"f64", 2.5e9}};
  cluster.device.memoryBandwidth = 3e9;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  cluster.device.memoryCapacity =
      pages > 0 && pageSize > 0 ? double(pages) * pageSize : 16 * kGiB;
  return cluster;
}

/// Reads a positive number at `key` of `object`; `path` names the field.
llvm::Expected<double> readPositive(const json &object, const char *key,
                                    const std::string &path, bool allowZero) {
  auto it = object.find(key);
  if (it == object.end())
    return makeError("missing field '" + path + key + "'");
  if (!it->is_number())
    return makeError("field '" + path + key + "' must be a number");
  double value = it->get<double>();
  if (value < 0 || (!allowZero && value == 0) || !std::isfinite(value))
    return makeError("field '" + path + key + "' must be " +
                     (allowZero ? "non-negative" : "positive") + ", not " +
                     it->dump());
  return value;
}

/// Reads an object of per-type FLOP/s at `key`.
llvm::Expected<std::map<std::string, double>>
readFlops(const json &device, const char *key, bool required) {
  std::map<std::string, double> flops;
  auto it = device.find(key);
  if (it == device.end()) {
    if (required)
      return makeError(std::string("missing field 'device.") + key + "'");
    return flops;
  }
  if (!it->is_object() || it->empty())
    return makeError(std::string("field 'device.") + key +
                     "' must be an object of FLOP/s per element type");
  for (auto &[type, value] : it->items()) {
    auto number = readPositive(*it, type.c_str(),
                               std::string("device.") + key + ".", false);
    if (!number)
      return number.takeError();
    flops[type] = *number;
  }
  return flops;
}

llvm::Expected<Cluster> parseClusterJson(const json &root) {
  if (!root.is_object())
    return makeError("the top level must be an object");
  Cluster cluster;
  if (auto name = root.find("name"); name != root.end() && name->is_string())
    cluster.name = name->get<std::string>();
  auto mesh = root.find("mesh");
  if (mesh == root.end())
    return makeError("missing field 'mesh'");
  if (!mesh->is_array() || mesh->empty())
    return makeError("field 'mesh' must be a non-empty array of sizes");
  for (const json &size : *mesh) {
    if (!size.is_number_integer() || size.get<int64_t>() <= 0)
      return makeError("field 'mesh' must hold positive integers");
    cluster.shape.push_back(size.get<int64_t>());
  }
  auto links = root.find("links");
  if (links == root.end())
    return makeError("missing field 'links'");
  if (!links->is_array() || links->size() != cluster.shape.size())
    return makeError(llvm::formatv("field 'links' must be an array of one "
                                   "link per mesh level ({0})",
                                   cluster.shape.size()));
  for (auto [index, link] : llvm::enumerate(*links)) {
    std::string path = llvm::formatv("links[{0}].", index).str();
    if (!link.is_object())
      return makeError("field '" + path.substr(0, path.size() - 1) +
                       "' must be an object");
    auto bandwidth = readPositive(link, "bandwidth", path, false);
    if (!bandwidth)
      return bandwidth.takeError();
    auto latency = readPositive(link, "latency", path, true);
    if (!latency)
      return latency.takeError();
    cluster.links.push_back(Link{*bandwidth, *latency});
  }
  auto device = root.find("device");
  if (device == root.end())
    return makeError("missing field 'device'");
  if (!device->is_object())
    return makeError("field 'device' must be an object");
  auto peak = readFlops(*device, "peak_flops", true);
  if (!peak)
    return peak.takeError();
  cluster.device.peakFlops = std::move(*peak);
  auto loop = readFlops(*device, "loop_flops", false);
  if (!loop)
    return loop.takeError();
  cluster.device.loopFlops = std::move(*loop);
  auto bandwidth = readPositive(*device, "memory_bandwidth", "device.", false);
  if (!bandwidth)
    return bandwidth.takeError();
  cluster.device.memoryBandwidth = *bandwidth;
  auto capacity = readPositive(*device, "memory_capacity", "device.", false);
  if (!capacity)
    return capacity.takeError();
  cluster.device.memoryCapacity = *capacity;
  if (auto cores = root.find("host_cores"); cores != root.end()) {
    if (!cores->is_number_integer() || cores->get<int64_t>() <= 0)
      return makeError("field 'host_cores' must be a positive integer");
    cluster.hostCores = cores->get<int64_t>();
  }
  if (root.contains("oversubscribed_efficiency")) {
    auto efficiency =
        readPositive(root, "oversubscribed_efficiency", "", false);
    if (!efficiency)
      return efficiency.takeError();
    if (*efficiency > 1)
      return makeError("field 'oversubscribed_efficiency' must be at most 1");
    cluster.oversubscribedEfficiency = *efficiency;
  }
  return cluster;
}

double lookupFlops(const std::map<std::string, double> &flops,
                   llvm::StringRef type) {
  auto it = flops.find(type.str());
  if (it != flops.end())
    return it->second;
  // Narrow types run at least as fast as f32 and wide ones at its half.
  it = flops.find("f32");
  if (it == flops.end())
    return 0;
  return type == "f64" || type == "i64" ? it->second / 2 : it->second;
}

} // namespace

int64_t Cluster::getNumDevices() const {
  int64_t devices = 1;
  for (int64_t size : shape)
    devices *= size;
  return devices;
}

/// A shared host's ranks beyond its cores take turns.
static double getCoreShare(const Cluster &cluster, int64_t numRanks) {
  if (!cluster.hostCores || numRanks <= *cluster.hostCores)
    return 1;
  return double(*cluster.hostCores) / numRanks *
         cluster.oversubscribedEfficiency;
}

double Cluster::getPeakFlops(llvm::StringRef type, int64_t numRanks) const {
  double flops = lookupFlops(device.peakFlops, type);
  if (flops == 0)
    flops = device.peakFlops.begin()->second;
  return flops * getCoreShare(*this, numRanks);
}

double Cluster::getLoopFlops(llvm::StringRef type, int64_t numRanks) const {
  double flops = lookupFlops(device.loopFlops, type);
  if (flops == 0)
    return getPeakFlops(type, numRanks);
  return flops * getCoreShare(*this, numRanks);
}

double Cluster::getMemoryBandwidth(int64_t numRanks) const {
  return device.memoryBandwidth * getCoreShare(*this, numRanks);
}

llvm::Expected<llvm::SmallVector<Link>>
Cluster::getMeshLinks(llvm::ArrayRef<int64_t> meshShape) const {
  int64_t meshDevices = 1;
  for (int64_t size : meshShape)
    meshDevices *= size;
  if (hostCores)
    return llvm::SmallVector<Link>(meshShape.size(), links.front());
  if (meshDevices != getNumDevices())
    return makeError(llvm::formatv(
        "the mesh has {0} devices but cluster '{1}' has {2}", meshDevices,
        name.empty() ? "<unnamed>" : name, getNumDevices()));
  llvm::SmallVector<Link> result;
  for (size_t axis = 0; axis < meshShape.size(); ++axis) {
    int64_t stride = 1;
    for (size_t a = axis + 1; a < meshShape.size(); ++a)
      stride *= meshShape[a];
    // The levels whose coordinate changes within the group of device 0.
    Link link{std::numeric_limits<double>::infinity(), 0};
    int64_t inner = getNumDevices();
    for (size_t level = 0; level < shape.size(); ++level) {
      inner /= shape[level];
      bool crossed = false;
      for (int64_t k = 1; k < meshShape[axis] && !crossed; ++k)
        crossed = (k * stride / inner) % shape[level] != 0;
      if (!crossed)
        continue;
      link.bandwidth = std::min(link.bandwidth, links[level].bandwidth);
      link.latency = std::max(link.latency, links[level].latency);
    }
    if (!std::isfinite(link.bandwidth))
      link = links.back();
    result.push_back(link);
  }
  return result;
}

std::string Cluster::toJson() const {
  json root;
  root["name"] = name;
  root["mesh"] = json::array();
  for (int64_t size : shape)
    root["mesh"].push_back(size);
  root["links"] = json::array();
  for (const Link &link : links)
    root["links"].push_back(
        {{"bandwidth", link.bandwidth}, {"latency", link.latency}});
  json dev;
  dev["peak_flops"] = device.peakFlops;
  if (!device.loopFlops.empty())
    dev["loop_flops"] = device.loopFlops;
  dev["memory_bandwidth"] = device.memoryBandwidth;
  dev["memory_capacity"] = device.memoryCapacity;
  root["device"] = dev;
  if (hostCores)
    root["host_cores"] = *hostCores;
  if (oversubscribedEfficiency != 1)
    root["oversubscribed_efficiency"] = oversubscribedEfficiency;
  return root.dump(2) + "\n";
}

llvm::Expected<Cluster> mlir::sbp::parseCluster(llvm::StringRef text,
                                                llvm::StringRef source) {
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return makeError(source + ": not valid JSON");
  auto cluster = parseClusterJson(root);
  if (!cluster)
    return makeError(source + ": " + llvm::toString(cluster.takeError()));
  if (cluster->name.empty())
    cluster->name = source.str();
  return cluster;
}

llvm::ArrayRef<llvm::StringRef> mlir::sbp::getClusterPresetNames() {
  static const llvm::StringRef names[] = {"cpu-local", "dgx-a100-8",
                                          "dgx-h100-8", "h200-8"};
  return names;
}

llvm::Expected<Cluster> mlir::sbp::getClusterPreset(llvm::StringRef name) {
  if (name == "cpu-local")
    return getCpuLocal();
  for (size_t i = 0; i < kNumNodePresets; ++i) {
    const NodePreset &preset = getNodePreset(i);
    if (!name.starts_with(preset.name))
      continue;
    llvm::StringRef rest = name.drop_front(preset.name.size());
    int64_t nodes = 1;
    if (!rest.empty() && (!rest.consume_front("x") ||
                          rest.getAsInteger(10, nodes) || nodes <= 0))
      continue;
    Cluster cluster;
    cluster.name = name.str();
    cluster.device = preset.device;
    if (nodes > 1) {
      cluster.shape = {nodes, 8};
      cluster.links = {preset.network, preset.nvlink};
    } else {
      cluster.shape = {8};
      cluster.links = {preset.nvlink};
    }
    return cluster;
  }
  return makeError("unknown cluster preset '" + name +
                   "' (presets: " + llvm::join(getClusterPresetNames(), ", ") +
                   ", and multi-node forms such as dgx-a100-8x128; or a "
                   "JSON file)");
}

llvm::Expected<Cluster> mlir::sbp::loadCluster(llvm::StringRef presetOrFile) {
  if (!presetOrFile.ends_with(".json"))
    return getClusterPreset(presetOrFile);
  auto buffer = llvm::MemoryBuffer::getFile(presetOrFile);
  if (!buffer)
    return makeError("cannot read cluster file '" + presetOrFile +
                     "': " + buffer.getError().message());
  return parseCluster((*buffer)->getBuffer(), presetOrFile);
}

std::optional<double> mlir::sbp::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t digits = text.find_first_not_of("0123456789.eE+");
  llvm::StringRef number = text.take_front(digits);
  llvm::StringRef unit = text.drop_front(number.size()).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || value < 0)
    return std::nullopt;
  static const std::pair<llvm::StringRef, double> units[] = {
      {"", 1},          {"B", 1},      {"KiB", 1024.0},
      {"MiB", 1048576}, {"GiB", kGiB}, {"TiB", kGiB * 1024},
      {"KB", 1e3},      {"MB", 1e6},   {"GB", 1e9},
      {"TB", 1e12},     {"K", 1024.0}, {"M", 1048576},
      {"G", kGiB}};
  for (auto [name, scale] : units)
    if (unit.equals_insensitive(name))
      return value * scale;
  return std::nullopt;
}

std::optional<llvm::SmallVector<int64_t>>
mlir::sbp::parseMeshShape(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  llvm::SmallVector<int64_t> shape;
  for (llvm::StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size <= 0)
      return std::nullopt;
    shape.push_back(size);
  }
  return shape;
}
