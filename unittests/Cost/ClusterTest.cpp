//===- ClusterTest.cpp - Cluster presets, files and mesh links ------------===//

#include "sbp/Cost/Cluster.h"
#include "gtest/gtest.h"

using namespace mlir::sbp;

namespace {

std::string errorOf(llvm::Expected<Cluster> cluster) {
  EXPECT_FALSE(bool(cluster));
  return cluster ? "" : llvm::toString(cluster.takeError());
}

TEST(Cluster, Presets) {
  for (llvm::StringRef name : getClusterPresetNames()) {
    auto cluster = getClusterPreset(name);
    ASSERT_TRUE(bool(cluster)) << name.str();
    EXPECT_GT(cluster->device.memoryCapacity, 0);
  }
  auto a100 = getClusterPreset("dgx-a100-8");
  ASSERT_TRUE(bool(a100));
  EXPECT_EQ(a100->getNumDevices(), 8);
  // The measured achievable rate, not the spec sheet's 312 TFLOP/s.
  EXPECT_DOUBLE_EQ(a100->getPeakFlops("bf16", 8), 271.2e12);
  // Likewise NCCL's bus bandwidth, not NVLink's 300 GB/s line rate, and
  // the HBM bandwidth a streaming kernel reaches.
  EXPECT_DOUBLE_EQ(a100->links.front().bandwidth, 230e9);
  EXPECT_DOUBLE_EQ(a100->device.memoryBandwidth, 0.9 * 2.039e12);
  auto pod = getClusterPreset("dgx-a100-8x128");
  ASSERT_TRUE(bool(pod));
  EXPECT_EQ(pod->getNumDevices(), 1024);
  EXPECT_EQ(pod->shape.size(), 2u);
  // InfiniBand per GPU: 192 GB/s per node over eight HDR adapters.
  EXPECT_DOUBLE_EQ(pod->links.front().bandwidth, 24e9);
  EXPECT_DOUBLE_EQ(pod->links.back().bandwidth, 230e9);
  EXPECT_NE(errorOf(getClusterPreset("dgx-a100-9"))
                .find("unknown cluster "
                      "preset 'dgx-a100-9'"),
            std::string::npos);
  EXPECT_FALSE(bool(getClusterPreset("dgx-a100-8x0")));
}

TEST(Cluster, MeshAxesUseTheSlowestLinkTheyCross) {
  auto pod = getClusterPreset("dgx-h100-8x4");
  ASSERT_TRUE(bool(pod));
  const Link &network = pod->links[0], &nvlink = pod->links[1];
  // [4, 8]: nodes by GPUs.
  auto links = pod->getMeshLinks({4, 8});
  ASSERT_TRUE(bool(links));
  EXPECT_EQ((*links)[0].bandwidth, network.bandwidth);
  EXPECT_EQ((*links)[1].bandwidth, nvlink.bandwidth);
  // [2, 16]: the inner axis spans two nodes.
  links = pod->getMeshLinks({2, 16});
  ASSERT_TRUE(bool(links));
  EXPECT_EQ((*links)[0].bandwidth, network.bandwidth);
  EXPECT_EQ((*links)[1].bandwidth, network.bandwidth);
  // [4, 2, 4]: the middle and inner axes stay in a node.
  links = pod->getMeshLinks({4, 2, 4});
  ASSERT_TRUE(bool(links));
  EXPECT_EQ((*links)[0].bandwidth, network.bandwidth);
  EXPECT_EQ((*links)[1].bandwidth, nvlink.bandwidth);
  EXPECT_EQ((*links)[2].bandwidth, nvlink.bandwidth);
  auto wrong = pod->getMeshLinks({4, 4});
  ASSERT_FALSE(bool(wrong));
  EXPECT_EQ(llvm::toString(wrong.takeError()),
            "the mesh has 16 devices but cluster 'dgx-h100-8x4' has 32");
}

TEST(Cluster, HostClustersShareCores) {
  auto host = parseCluster(R"({"mesh": [2], "host_cores": 2,
      "links": [{"bandwidth": 1e9, "latency": 1e-6}],
      "device": {"peak_flops": {"f32": 1e11}, "memory_bandwidth": 1e10,
                 "memory_capacity": 1e9}})",
                           "host.json");
  ASSERT_TRUE(bool(host)) << llvm::toString(host.takeError());
  EXPECT_DOUBLE_EQ(host->getPeakFlops("f32", 2), 1e11);
  EXPECT_DOUBLE_EQ(host->getPeakFlops("f32", 4), 5e10);
  // No loop rate given: the peak.
  EXPECT_DOUBLE_EQ(host->getLoopFlops("f32", 1), 1e11);
  EXPECT_TRUE(bool(host->getMeshLinks({2, 2})));
  // Taking turns costs what the calibration measured.
  host->oversubscribedEfficiency = 0.5;
  EXPECT_DOUBLE_EQ(host->getPeakFlops("f32", 4), 2.5e10);
  EXPECT_DOUBLE_EQ(host->getPeakFlops("f32", 2), 1e11);
  // The file round-trips.
  auto again = parseCluster(host->toJson(), "again.json");
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->toJson(), host->toJson());
}

TEST(Cluster, BadFilesNameTheField) {
  const char *device = R"("device": {"peak_flops": {"f32": 1e12},
      "memory_bandwidth": 1e12, "memory_capacity": 1e9})";
  EXPECT_EQ(errorOf(parseCluster("{", "c.json")), "c.json: not valid JSON");
  EXPECT_EQ(errorOf(parseCluster(
                std::string(R"({"links": [], )") + device + "}", "c.json")),
            "c.json: missing field 'mesh'");
  EXPECT_EQ(errorOf(parseCluster(
                std::string(R"({"mesh": [8], "links": [{"bandwidth": -1,
                  "latency": 0}], )") +
                    device + "}",
                "c.json")),
            "c.json: field 'links[0].bandwidth' must be positive, not -1");
  EXPECT_EQ(errorOf(parseCluster(
                R"({"mesh": [8], "links": [{"bandwidth": 1, "latency": 0}],
                    "device": {"peak_flops": {"f32": 1e12},
                               "memory_capacity": 1e9}})",
                "c.json")),
            "c.json: missing field 'device.memory_bandwidth'");
  EXPECT_EQ(errorOf(parseCluster(
                R"({"mesh": [8, 2], "links": [{"bandwidth": 1, "latency": 0}],
                    "device": {}})",
                "c.json")),
            "c.json: field 'links' must be an array of one link per mesh "
            "level (2)");
}

TEST(Cluster, ByteSizes) {
  EXPECT_EQ(parseByteSize("2GiB"), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parseByteSize("40 GB"), 40e9);
  EXPECT_EQ(parseByteSize("1024"), 1024.0);
  EXPECT_EQ(parseByteSize("1.5MiB"), 1.5 * 1024 * 1024);
  EXPECT_FALSE(parseByteSize("lots"));
  EXPECT_FALSE(parseByteSize("-1GiB"));
  EXPECT_FALSE(parseByteSize("3 parsecs"));
}

} // namespace
