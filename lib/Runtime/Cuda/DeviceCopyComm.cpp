//===- DeviceCopyComm.cpp - The virtual mesh's collectives ----------------===//

#include "DeviceComm.h"
#include <algorithm>

using namespace sbp::cuda;

namespace {

/// Collectives of ranks that are threads of one process (the virtual
/// mesh), by device copies: each rank waits for its input, publishes its
/// buffers' addresses over the host communicator, copies what it needs
/// from its peers' buffers (unified addressing reaches every GPU of the
/// process), waits for its copies and meets the group again before any
/// rank may change its input. f32/f64 sums accumulate with cuBLAS axpy in
/// group order, so every rank computes the same bits; other reductions,
/// all-to-alls and (eager) sends go through host memory.
class DeviceCopyComm : public sbp_comm {
public:
  explicit DeviceCopyComm(sbp_comm *host) : host(host), staging(host) {
    copyIdentity(*this, *host);
  }

  int allReduce(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, sbp_reduction kind) override {
    if (!canAdd(in->dtype, kind))
      return staging.allReduce(axes, n, in, out, kind);
    std::vector<Buffers> peers;
    if (!exchange(axes, n, in, out, peers))
      return fail();
    int64_t bytes = getBytes(in);
    Scratch addend(peers.size() > 1 ? bytes : 0);
    bool ok = copy(out->data, peers[0].in, bytes);
    for (size_t q = 1; ok && q < peers.size(); ++q)
      ok = copy(addend.data, peers[q].in, bytes) &&
           add(out->data, addend.data, numElements(*in), in->dtype);
    return finish(axes, n, ok);
  }

  int allGather(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t dim) override {
    std::vector<Buffers> peers;
    if (!exchange(axes, n, in, out, peers))
      return fail();
    Split3 whole(*out, dim);
    int64_t p = peers.size();
    bool ok = true;
    for (int64_t q = 0; ok && q < p; ++q) {
      int64_t start = pieceOffset(whole.extent, p, q);
      int64_t row = pieceSize(whole.extent, p, q) * whole.inner * whole.bytes;
      ok = copy2D(static_cast<char *>(out->data) +
                      start * whole.inner * whole.bytes,
                  whole.extent * whole.inner * whole.bytes, peers[q].in, row,
                  row, whole.outer);
    }
    return finish(axes, n, ok);
  }

  int reduceScatter(const int64_t *axes, int64_t n, const sbp_tensor *in,
                    sbp_tensor *out, int64_t dim, sbp_reduction kind) override {
    if (!canAdd(in->dtype, kind))
      return staging.reduceScatter(axes, n, in, out, dim, kind);
    std::vector<Buffers> peers;
    if (!exchange(axes, n, in, out, peers))
      return fail();
    Split3 whole(*in, dim);
    int64_t p = peers.size(), me = getIndex(axes, n);
    int64_t start = pieceOffset(whole.extent, p, me);
    int64_t row = pieceSize(whole.extent, p, me) * whole.inner * whole.bytes;
    int64_t pitch = whole.extent * whole.inner * whole.bytes;
    int64_t offset = start * whole.inner * whole.bytes;
    // This rank's piece of every peer's input, summed in group order.
    Scratch addend(p > 1 ? getBytes(out) : 0);
    bool ok =
        copy2D(out->data, row, static_cast<const char *>(peers[0].in) + offset,
               pitch, row, whole.outer);
    for (int64_t q = 1; ok && q < p; ++q)
      ok = copy2D(addend.data, row,
                  static_cast<const char *>(peers[q].in) + offset, pitch, row,
                  whole.outer) &&
           add(out->data, addend.data, numElements(*out), in->dtype);
    return finish(axes, n, ok);
  }

  int allToAll(const int64_t *axes, int64_t n, const sbp_tensor *in,
               sbp_tensor *out, int64_t split, int64_t concat) override {
    return staging.allToAll(axes, n, in, out, split, concat);
  }

  int broadcast(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t root) override {
    std::vector<Buffers> peers;
    if (!exchange(axes, n, in, out, peers))
      return fail();
    bool ok = root >= 0 && root < int64_t(peers.size()) &&
              copy(out->data, peers[root].in, getBytes(out));
    return finish(axes, n, ok);
  }

  // Sends stay eager (a send returns before its receive is posted, so
  // that two ranks may send to each other first): through host memory.
  int send(const int64_t *axes, int64_t n, const sbp_tensor *in,
           int64_t peer) override {
    return staging.send(axes, n, in, peer);
  }
  int recv(const int64_t *axes, int64_t n, sbp_tensor *out,
           int64_t peer) override {
    return staging.recv(axes, n, out, peer);
  }

  void abort(const std::string &reason) override { host->abort(reason); }
  sbp_comm *getHostComm() override { return host; }

private:
  struct Buffers {
    const void *in;
    void *out;
  };

  static bool canAdd(sbp_dtype dtype, sbp_reduction kind) {
    return kind == SBP_SUM && (dtype == SBP_F32 || dtype == SBP_F64);
  }

  int64_t getIndex(const int64_t *axes, int64_t n) const {
    int64_t index = 0;
    for (int64_t i = 0; i < n; ++i)
      index = index * meshShape[axes[i]] + coords[axes[i]];
    return index;
  }

  bool synchronize() {
    RankState &rank = getRank();
    return rank.check("cuStreamSynchronize",
                      getDriver()->streamSynchronize(rank.activeStream()));
  }

  /// Waits for this rank's input and learns every group member's buffers,
  /// in group order.
  bool exchange(const int64_t *axes, int64_t n, const sbp_tensor *in,
                const sbp_tensor *out, std::vector<Buffers> &peers) {
    if (!synchronize())
      return false;
    int64_t size = 1;
    for (int64_t i = 0; i < n; ++i)
      size *= meshShape[axes[i]];
    int64_t mine[2] = {reinterpret_cast<int64_t>(in ? in->data : nullptr),
                       reinterpret_cast<int64_t>(out ? out->data : nullptr)};
    std::vector<int64_t> all(2 * size);
    int64_t mineShape[] = {1, 2}, allShape[] = {size, 2};
    sbp_tensor local{mine, 2, mineShape, SBP_I64};
    sbp_tensor gathered{all.data(), 2, allShape, SBP_I64};
    if (host->allGather(axes, n, &local, &gathered, 0) != SBP_OK)
      return false;
    peers.resize(size);
    for (int64_t q = 0; q < size; ++q)
      peers[q] = {reinterpret_cast<const void *>(all[2 * q]),
                  reinterpret_cast<void *>(all[2 * q + 1])};
    return true;
  }

  /// Waits for this rank's copies, then for the group: after that no peer
  /// reads this rank's input any more.
  int finish(const int64_t *axes, int64_t n, bool ok) {
    if (!ok || !synchronize())
      return fail();
    int64_t one = 1, value = 0, sum = 0;
    sbp_tensor in{&value, 1, &one, SBP_I64}, out{&sum, 1, &one, SBP_I64};
    return host->allReduce(axes, n, &in, &out, SBP_SUM);
  }

  bool copy(void *dst, const void *src, int64_t bytes) {
    RankState &rank = getRank();
    return rank.check("cuMemcpyAsync", getDriver()->memcpyAsync(
                                           reinterpret_cast<CUdeviceptr>(dst),
                                           reinterpret_cast<CUdeviceptr>(src),
                                           bytes, rank.activeStream()));
  }

  /// `sum` += `addend`, `count` elements of `dtype` (f32 or f64).
  bool add(void *sum, const void *addend, int64_t count, sbp_dtype dtype) {
    RankState &rank = getRank();
    cublasHandle_t handle = getCublasHandle(rank, rank.activeStream());
    if (!handle)
      return false;
    const Cublas *cublas = getCublas();
    // cuBLAS counts in int: large tensors go in chunks.
    const int64_t chunk = int64_t(1) << 30;
    for (int64_t at = 0; at < count; at += chunk) {
      int length = static_cast<int>(std::min(chunk, count - at));
      int status;
      if (dtype == SBP_F64) {
        double one = 1;
        status = cublas->daxpy(handle, length, &one,
                               static_cast<const double *>(addend) + at, 1,
                               static_cast<double *>(sum) + at, 1);
      } else {
        float one = 1;
        status = cublas->saxpy(handle, length, &one,
                               static_cast<const float *>(addend) + at, 1,
                               static_cast<float *>(sum) + at, 1);
      }
      if (status)
        return rank.fail(std::string("cublas axpy: ") +
                         cublas->getStatusString(status));
    }
    return true;
  }

  int fail() {
    host->abort(getRank().error.empty() ? "a device copy failed"
                                        : getRank().error);
    return SBP_ERR_ABORTED;
  }

  sbp_comm *host;
  StagingComm staging;
};

} // namespace

extern "C" sbp_comm *sbp_cuda_device_comm_create(sbp_comm *host) {
  return new DeviceCopyComm(host);
}
