//===- Cluster.h - The machines a program is planned for --------*- C++ -*-===//
//
// A cluster is a grid of identical devices (`shape`, outermost level first:
// `[128, 8]` is 128 nodes of 8 GPUs) with one kind of link per level and one
// device description. It is read from JSON (docs/cost-model.md gives the
// format) or named by a built-in preset, and maps the axes of any mesh of
// the same size onto the links its groups cross.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_COST_CLUSTER_H
#define SBP_COST_CLUSTER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <optional>
#include <string>

namespace mlir {
namespace sbp {

/// A link between the devices of one cluster level, as one device sees it.
struct Link {
  /// Bytes per second one device sends and receives at once.
  double bandwidth = 0;
  /// Seconds per message (alpha of the alpha-beta model).
  double latency = 0;
};

/// One device: compute, memory and its speed.
struct Device {
  /// Peak FLOP/s of contractions (matmul-like ops), per element type name
  /// (`f32`, `f16`, `bf16`, `f64`, ...).
  std::map<std::string, double> peakFlops;
  /// FLOP/s of the other loops (element-wise, reductions) per element type;
  /// a type missing here uses its peak.
  std::map<std::string, double> loopFlops;
  /// Bytes per second between the device and its memory.
  double memoryBandwidth = 0;
  /// Bytes of memory.
  double memoryCapacity = 0;
};

/// A cluster description.
struct Cluster {
  std::string name;
  /// Devices per level, outermost first.
  llvm::SmallVector<int64_t> shape;
  /// One link per level.
  llvm::SmallVector<Link> links;
  Device device;
  /// Set for a host whose ranks are threads sharing `hostCores` cores: any
  /// number of ranks fits, and ranks beyond the cores share their compute.
  std::optional<int64_t> hostCores;
  /// On a shared host, the fraction of the cores' speed that ranks beyond
  /// the cores keep when they take turns (switching costs the rest).
  double oversubscribedEfficiency = 1;

  int64_t getNumDevices() const;

  /// Contraction FLOP/s per device for elements named `type` on a mesh of
  /// `numRanks` devices (a shared host divides its cores among the ranks).
  double getPeakFlops(llvm::StringRef type, int64_t numRanks) const;
  /// FLOP/s of other loops, likewise.
  double getLoopFlops(llvm::StringRef type, int64_t numRanks) const;
  /// Memory bandwidth per device on a mesh of `numRanks` devices.
  double getMemoryBandwidth(int64_t numRanks) const;

  /// The link each axis of a mesh of shape `meshShape` uses: the slowest
  /// (lowest bandwidth, highest latency) of the cluster levels its groups
  /// span, devices numbered row-major in both. Fails, naming both sizes,
  /// when the mesh has a different number of devices than the cluster.
  llvm::Expected<llvm::SmallVector<Link>>
  getMeshLinks(llvm::ArrayRef<int64_t> meshShape) const;

  /// The JSON text of this description (the format `parseCluster` reads).
  std::string toJson() const;
};

/// Reads a cluster from JSON text; `source` names it in errors, which name
/// the missing or invalid field.
llvm::Expected<Cluster> parseCluster(llvm::StringRef json,
                                     llvm::StringRef source);

/// The built-in preset `name`: `cpu-local`, `dgx-a100-8`, `dgx-h100-8`,
/// `h200-8`, and multi-node forms `<preset>x<nodes>` such as
/// `dgx-a100-8x128`.
llvm::Expected<Cluster> getClusterPreset(llvm::StringRef name);

/// The names of the single-node presets, for help texts and errors.
llvm::ArrayRef<llvm::StringRef> getClusterPresetNames();

/// A preset name or a JSON file path.
llvm::Expected<Cluster> loadCluster(llvm::StringRef presetOrFile);

/// Parses a byte count: a number with an optional unit (`B`, `KiB`, `MiB`,
/// `GiB`, `TiB`, `KB`, `MB`, `GB`, `TB`).
std::optional<double> parseByteSize(llvm::StringRef text);

/// Parses a mesh shape, positive sizes separated by 'x' (`2x4`).
std::optional<llvm::SmallVector<int64_t>> parseMeshShape(llvm::StringRef text);

} // namespace sbp
} // namespace mlir

#endif // SBP_COST_CLUSTER_H
