//===- DeviceComm.cpp - Collectives on device buffers ---------------------===//
//
// Two communicators whose tensors live in the rank's device memory:
//
// - StagingComm runs a host communicator's collective on host copies: the
//   threads backend's virtual mesh (every rank on one GPU, or ranks spread
//   over the GPUs of one machine) and MPI between processes;
// - NcclComm calls NCCL on the rank's stream, one NCCL communicator per
//   group of mesh axes, created when the communicator is (or, on meshes of
//   more than 3 axes, at first use) with a ncclUniqueId that group rank 0
//   makes and broadcasts over the host communicator.
//
// NCCL concatenates along the flat buffer; gathers, scatters and
// all-to-alls along another dimension move their pieces with 2-d copies
// (cuMemcpy2DAsync) around grouped sends and receives, which also serve
// the uneven pieces of balanced splits.
//
//===----------------------------------------------------------------------===//

#include "../Comm.h"
#include "../Tensors.h"
#include "CudaLibraries.h"
#include "sbp/Runtime/sbp_cuda.h"
#include <algorithm>
#include <map>
#include <memory>

using namespace sbp::cuda;
using sbp::runtime::numElements;
using sbp::runtime::pieceOffset;
using sbp::runtime::pieceSize;

namespace {

/// Copies the rank and mesh of `host` into `comm`.
void copyIdentity(sbp_comm &comm, const sbp_comm &host) {
  comm.rank = host.rank;
  comm.meshShape = host.meshShape;
  comm.coords = host.coords;
}

int64_t getBytes(const sbp_tensor *t) {
  return t ? numElements(*t) * sbp_dtype_size(t->dtype) : 0;
}

/// A host copy of a device tensor.
struct HostTensor {
  std::vector<char> data;
  sbp_tensor tensor;

  explicit HostTensor(const sbp_tensor *device) : tensor(*device) {
    data.resize(getBytes(device));
    tensor.data = data.data();
  }
};

class StagingComm : public sbp_comm {
public:
  explicit StagingComm(sbp_comm *host) : host(host) {
    copyIdentity(*this, *host);
  }

  int allReduce(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, sbp_reduction kind) override {
    return stage(in, out, [&](const sbp_tensor *i, sbp_tensor *o) {
      return host->allReduce(axes, n, i, o, kind);
    });
  }
  int allGather(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t dim) override {
    return stage(in, out, [&](const sbp_tensor *i, sbp_tensor *o) {
      return host->allGather(axes, n, i, o, dim);
    });
  }
  int reduceScatter(const int64_t *axes, int64_t n, const sbp_tensor *in,
                    sbp_tensor *out, int64_t dim, sbp_reduction kind) override {
    return stage(in, out, [&](const sbp_tensor *i, sbp_tensor *o) {
      return host->reduceScatter(axes, n, i, o, dim, kind);
    });
  }
  int allToAll(const int64_t *axes, int64_t n, const sbp_tensor *in,
               sbp_tensor *out, int64_t split, int64_t concat) override {
    return stage(in, out, [&](const sbp_tensor *i, sbp_tensor *o) {
      return host->allToAll(axes, n, i, o, split, concat);
    });
  }
  int broadcast(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t root) override {
    return stage(in, out, [&](const sbp_tensor *i, sbp_tensor *o) {
      return host->broadcast(axes, n, i, o, root);
    });
  }
  int send(const int64_t *axes, int64_t n, const sbp_tensor *in,
           int64_t peer) override {
    return stage(in, nullptr, [&](const sbp_tensor *i, sbp_tensor *) {
      return host->send(axes, n, i, peer);
    });
  }
  int recv(const int64_t *axes, int64_t n, sbp_tensor *out,
           int64_t peer) override {
    return stage(nullptr, out, [&](const sbp_tensor *, sbp_tensor *o) {
      return host->recv(axes, n, o, peer);
    });
  }
  void abort(const std::string &reason) override { host->abort(reason); }
  sbp_comm *getHostComm() override { return host; }

private:
  /// Downloads `in`, runs `collective` on host tensors, uploads `out`.
  template <typename Fn>
  int stage(const sbp_tensor *in, sbp_tensor *out, Fn collective) {
    std::unique_ptr<HostTensor> hostIn, hostOut;
    if (in) {
      hostIn = std::make_unique<HostTensor>(in);
      if (sbp_cuda_download(hostIn->data.data(), in->data, getBytes(in)))
        return fail();
    }
    if (out)
      hostOut = std::make_unique<HostTensor>(out);
    int status = collective(hostIn ? &hostIn->tensor : nullptr,
                            hostOut ? &hostOut->tensor : nullptr);
    if (status != SBP_OK || !out)
      return status;
    return sbp_cuda_upload(out->data, hostOut->data.data(), getBytes(out))
               ? fail()
               : SBP_OK;
  }

  /// Stops the world with the rank's CUDA error.
  int fail() {
    host->abort(getRank().error);
    return SBP_ERR_ABORTED;
  }

  sbp_comm *host;
};

int getNcclType(sbp_dtype dtype) {
  switch (dtype) {
  case SBP_F64:
    return ncclFloat64;
  case SBP_I32:
    return ncclInt32;
  case SBP_I64:
    return ncclInt64;
  case SBP_I8:
    return ncclInt8;
  default:
    return ncclFloat32;
  }
}

int getNcclOp(sbp_reduction kind) {
  return kind == SBP_MAX ? ncclMax : kind == SBP_MIN ? ncclMin : ncclSum;
}

/// A tensor seen as [outer, size(dim), inner] with its element size.
struct Split3 {
  int64_t outer = 1, extent = 1, inner = 1, bytes = 1;

  Split3(const sbp_tensor &t, int64_t dim) : bytes(sbp_dtype_size(t.dtype)) {
    for (int64_t d = 0; d < t.rank; ++d)
      (d < dim ? outer : d == dim ? extent : inner) *= t.shape[d];
  }
};

/// A device buffer of the rank's stream, freed (stream-ordered) at scope
/// exit.
struct Scratch {
  void *data;
  explicit Scratch(int64_t bytes) : data(sbp_cuda_alloc(bytes)) {}
  ~Scratch() { sbp_cuda_free(data); }
  char *at(int64_t offset) const { return static_cast<char *>(data) + offset; }
};

class NcclComm : public sbp_comm {
public:
  NcclComm(sbp_comm *host, const Nccl *nccl) : host(host), nccl(nccl) {
    copyIdentity(*this, *host);
  }
  ~NcclComm() override {
    for (auto &entry : groups)
      nccl->commDestroy(entry.second.comm);
  }

  int allReduce(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, sbp_reduction kind) override {
    Group *group = getGroup(axes, n);
    return group && check("ncclAllReduce",
                          nccl->allReduce(in->data, out->data, numElements(*in),
                                          getNcclType(in->dtype),
                                          getNcclOp(kind), group->comm,
                                          getRank().activeStream()))
               ? SBP_OK
               : SBP_ERR_ABORTED;
  }

  int allGather(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t dim) override {
    Group *group = getGroup(axes, n);
    if (!group)
      return SBP_ERR_ABORTED;
    Split3 whole(*out, dim);
    int64_t p = group->size, type = getNcclType(in->dtype);
    if (whole.outer == 1 && whole.extent % p == 0)
      return check("ncclAllGather",
                   nccl->allGather(in->data, out->data, numElements(*in), type,
                                   group->comm, getRank().activeStream()))
                 ? SBP_OK
                 : SBP_ERR_ABORTED;
    // Uneven pieces or a gather inside rows: pieces arrive one after the
    // other, then move into place.
    Scratch packed(getBytes(out));
    nccl->groupStart();
    for (int64_t q = 0; q < p; ++q) {
      int64_t piece = pieceSize(whole.extent, p, q);
      nccl->send(in->data, numElements(*in), type, q, group->comm,
                 getRank().activeStream());
      nccl->recv(packed.at(whole.outer * pieceOffset(whole.extent, p, q) *
                           whole.inner * whole.bytes),
                 whole.outer * piece * whole.inner, type, q, group->comm,
                 getRank().activeStream());
    }
    if (!check("ncclGroupEnd (all_gather)", nccl->groupEnd()))
      return SBP_ERR_ABORTED;
    return unpack(packed, whole, p, *out) ? SBP_OK : fail();
  }

  int reduceScatter(const int64_t *axes, int64_t n, const sbp_tensor *in,
                    sbp_tensor *out, int64_t dim, sbp_reduction kind) override {
    Group *group = getGroup(axes, n);
    if (!group)
      return SBP_ERR_ABORTED;
    Split3 whole(*in, dim);
    int64_t p = group->size, type = getNcclType(in->dtype);
    // Each piece contiguous, in group order.
    std::unique_ptr<Scratch> packed;
    const void *source = in->data;
    if (whole.outer != 1) {
      packed = std::make_unique<Scratch>(getBytes(in));
      if (!pack(*in, whole, p, *packed))
        return fail();
      source = packed->data;
    }
    if (whole.extent % p == 0)
      return check("ncclReduceScatter",
                   nccl->reduceScatter(source, out->data, numElements(*out),
                                       type, getNcclOp(kind), group->comm,
                                       getRank().activeStream()))
                 ? SBP_OK
                 : SBP_ERR_ABORTED;
    Scratch reduced(getBytes(in));
    if (!check("ncclAllReduce (reduce_scatter)",
               nccl->allReduce(source, reduced.data, numElements(*in), type,
                               getNcclOp(kind), group->comm,
                               getRank().activeStream())))
      return SBP_ERR_ABORTED;
    int64_t start = pieceOffset(whole.extent, p, group->index);
    return copy2D(out->data, getBytes(out),
                  reduced.at(whole.outer * start * whole.inner * whole.bytes),
                  getBytes(out), getBytes(out), 1)
               ? SBP_OK
               : fail();
  }

  int allToAll(const int64_t *axes, int64_t n, const sbp_tensor *in,
               sbp_tensor *out, int64_t split, int64_t concat) override {
    Group *group = getGroup(axes, n);
    if (!group)
      return SBP_ERR_ABORTED;
    Split3 source(*in, split), target(*out, concat);
    int64_t p = group->size, type = getNcclType(in->dtype);
    Scratch packedIn(getBytes(in)), packedOut(getBytes(out));
    if (!pack(*in, source, p, packedIn))
      return fail();
    nccl->groupStart();
    for (int64_t q = 0; q < p; ++q) {
      nccl->send(packedIn.at(source.outer * pieceOffset(source.extent, p, q) *
                             source.inner * source.bytes),
                 source.outer * pieceSize(source.extent, p, q) * source.inner,
                 type, q, group->comm, getRank().activeStream());
      nccl->recv(packedOut.at(target.outer * pieceOffset(target.extent, p, q) *
                              target.inner * target.bytes),
                 target.outer * pieceSize(target.extent, p, q) * target.inner,
                 type, q, group->comm, getRank().activeStream());
    }
    if (!check("ncclGroupEnd (all_to_all)", nccl->groupEnd()))
      return SBP_ERR_ABORTED;
    return unpack(packedOut, target, p, *out) ? SBP_OK : fail();
  }

  int broadcast(const int64_t *axes, int64_t n, const sbp_tensor *in,
                sbp_tensor *out, int64_t root) override {
    Group *group = getGroup(axes, n);
    return group &&
                   check("ncclBroadcast",
                         nccl->broadcast(in->data, out->data, numElements(*in),
                                         getNcclType(in->dtype), root,
                                         group->comm, getRank().activeStream()))
               ? SBP_OK
               : SBP_ERR_ABORTED;
  }

  int send(const int64_t *axes, int64_t n, const sbp_tensor *in,
           int64_t peer) override {
    Group *group = getGroup(axes, n);
    return group && check("ncclSend",
                          nccl->send(in->data, numElements(*in),
                                     getNcclType(in->dtype), peer, group->comm,
                                     getRank().activeStream()))
               ? SBP_OK
               : SBP_ERR_ABORTED;
  }

  int recv(const int64_t *axes, int64_t n, sbp_tensor *out,
           int64_t peer) override {
    Group *group = getGroup(axes, n);
    return group && check("ncclRecv",
                          nccl->recv(out->data, numElements(*out),
                                     getNcclType(out->dtype), peer, group->comm,
                                     getRank().activeStream()))
               ? SBP_OK
               : SBP_ERR_ABORTED;
  }

  void abort(const std::string &reason) override { host->abort(reason); }
  sbp_comm *getHostComm() override { return host; }

  /// Creates the communicators of every ordered list of mesh axes on
  /// meshes of up to 3 axes (at most 15), all ranks in the same order, so
  /// that a send and its receive, which only two ranks of a group reach,
  /// never wait for a communicator the others would have to join. Larger
  /// meshes create them at first use.
  bool createGroups() {
    int64_t axes = meshShape.size();
    if (axes > 3)
      return true;
    for (int64_t mask = 1; mask < (int64_t(1) << axes); ++mask) {
      std::vector<int64_t> list;
      for (int64_t a = 0; a < axes; ++a)
        if (mask & (int64_t(1) << a))
          list.push_back(a);
      do {
        if (!getGroup(list.data(), list.size()))
          return false;
      } while (std::next_permutation(list.begin(), list.end()));
    }
    return true;
  }

private:
  struct Group {
    ncclComm_t comm = nullptr;
    int64_t size = 1, index = 0;
  };

  /// The NCCL communicator of the group over `axes`, created on first use.
  Group *getGroup(const int64_t *axes, int64_t n) {
    std::vector<int64_t> key(axes, axes + n);
    auto found = groups.find(key);
    if (found != groups.end())
      return &found->second;
    Group group;
    for (int64_t i = 0; i < n; ++i) {
      group.size *= meshShape[axes[i]];
      group.index = group.index * meshShape[axes[i]] + coords[axes[i]];
    }
    ncclUniqueId id = {};
    if (group.index == 0 && !check("ncclGetUniqueId", nccl->getUniqueId(&id)))
      return nullptr;
    int64_t idBytes = sizeof(id);
    ncclUniqueId received = {};
    sbp_tensor in{&id, 1, &idBytes, SBP_I8},
        out{&received, 1, &idBytes, SBP_I8};
    if (host->broadcast(axes, n, &in, &out, 0) != SBP_OK)
      return nullptr;
    if (!check("ncclCommInitRank", nccl->commInitRank(&group.comm, group.size,
                                                      received, group.index)))
      return nullptr;
    return &(groups[key] = group);
  }

  /// Lays the balanced pieces of `t` along its split dimension out one
  /// after the other in `packed`.
  bool pack(const sbp_tensor &t, const Split3 &whole, int64_t p,
            const Scratch &packed) {
    for (int64_t q = 0; q < p; ++q) {
      int64_t start = pieceOffset(whole.extent, p, q);
      int64_t row = pieceSize(whole.extent, p, q) * whole.inner * whole.bytes;
      if (!copy2D(packed.at(whole.outer * start * whole.inner * whole.bytes),
                  row,
                  static_cast<const char *>(t.data) +
                      start * whole.inner * whole.bytes,
                  whole.extent * whole.inner * whole.bytes, row, whole.outer))
        return false;
    }
    return true;
  }

  /// The inverse of pack: the pieces, one after the other in `packed`,
  /// move to their places along `t`'s split dimension.
  bool unpack(const Scratch &packed, const Split3 &whole, int64_t p,
              sbp_tensor &t) {
    for (int64_t q = 0; q < p; ++q) {
      int64_t start = pieceOffset(whole.extent, p, q);
      int64_t row = pieceSize(whole.extent, p, q) * whole.inner * whole.bytes;
      if (!copy2D(static_cast<char *>(t.data) +
                      start * whole.inner * whole.bytes,
                  whole.extent * whole.inner * whole.bytes,
                  packed.at(whole.outer * start * whole.inner * whole.bytes),
                  row, row, whole.outer))
        return false;
    }
    return true;
  }

  bool check(const char *call, int result) {
    if (result == 0)
      return true;
    getRank().fail(std::string(call) + ": " + nccl->getErrorString(result));
    host->abort(getRank().error);
    return false;
  }

  int fail() {
    host->abort(getRank().error);
    return SBP_ERR_ABORTED;
  }

  sbp_comm *host;
  const Nccl *nccl;
  std::map<std::vector<int64_t>, Group> groups;
};

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

extern "C" {

sbp_comm *sbp_cuda_staging_comm_create(sbp_comm *host) {
  return new StagingComm(host);
}

sbp_comm *sbp_cuda_device_comm_create(sbp_comm *host) {
  return new DeviceCopyComm(host);
}

sbp_comm *sbp_nccl_comm_create(sbp_comm *host, const char **error) {
  static std::string failure;
  const Nccl *nccl = getNccl(&failure);
  if (!nccl) {
    if (error)
      *error = failure.c_str();
    return nullptr;
  }
  auto *comm = new NcclComm(host, nccl);
  if (!comm->createGroups()) {
    thread_local std::string reason;
    reason = getRank().error;
    if (error)
      *error = reason.c_str();
    delete comm;
    return nullptr;
  }
  return comm;
}

void sbp_cuda_comm_destroy(sbp_comm *comm) { delete comm; }

} // extern "C"
