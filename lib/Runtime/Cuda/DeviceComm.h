//===- DeviceComm.h - Communicators on device buffers -----------*- C++ -*-===//
//
// What the CUDA backend's communicators share: the sbp_comm of a rank
// whose tensors live in its device memory, over a host communicator (the
// threads or MPI backend) that it may stage through. Three kinds:
//
// - StagingComm (here) runs the host communicator's collective on host
//   copies: MPI between processes, and the fallback of the others;
// - DeviceCopyComm (DeviceCopyComm.cpp) copies between the device buffers
//   of ranks that are threads of one process: the virtual mesh;
// - NcclComm (NcclComm.cpp) calls NCCL on the rank's streams.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_CUDA_DEVICECOMM_H
#define SBP_RUNTIME_CUDA_DEVICECOMM_H

#include "../Comm.h"
#include "../Tensors.h"
#include "CudaLibraries.h"
#include "sbp/Runtime/sbp_cuda.h"
#include <memory>
#include <vector>

namespace sbp::cuda {

using runtime::numElements;
using runtime::pieceOffset;
using runtime::pieceSize;

/// Copies the rank and mesh of `host` into `comm`.
inline void copyIdentity(sbp_comm &comm, const sbp_comm &host) {
  comm.rank = host.rank;
  comm.meshShape = host.meshShape;
  comm.coords = host.coords;
}

inline int64_t getBytes(const sbp_tensor *t) {
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

/// Collectives of the host communicator on host copies of device
/// buffers.
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

} // namespace sbp::cuda

#endif // SBP_RUNTIME_CUDA_DEVICECOMM_H
