//===- NcclComm.cpp - Collectives through NCCL ----------------------------===//
//
// One NCCL communicator per ordered list of mesh axes, made with a
// ncclUniqueId that group rank 0 creates and broadcasts over the host
// communicator. NCCL concatenates along the flat buffer; gathers, scatters
// and all-to-alls along another dimension move their pieces with 2-d
// copies (cuMemcpy2DAsync) around grouped sends and receives, which also
// serve the uneven pieces of balanced splits.
//
//===----------------------------------------------------------------------===//

#include "DeviceComm.h"
#include <algorithm>
#include <map>

using namespace sbp::cuda;

namespace {

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
  case SBP_F16:
    return ncclFloat16;
  case SBP_BF16:
    return ncclBfloat16;
  default:
    return ncclFloat32;
  }
}

int getNcclOp(sbp_reduction kind) {
  return kind == SBP_MAX ? ncclMax : kind == SBP_MIN ? ncclMin : ncclSum;
}

/// Collectives through NCCL on the rank's streams.
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

} // namespace

extern "C" sbp_comm *sbp_nccl_comm_create(sbp_comm *host, const char **error) {
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
