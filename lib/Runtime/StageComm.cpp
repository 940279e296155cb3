//===- StageComm.cpp - The communicator of one pipeline stage -------------===//
//
// A stage runs a program partitioned for its sub-mesh: the trailing axes of
// the whole mesh, whose leading axes number the stages. Its collectives
// name sub-mesh axes; shifted past the leading ones they name the same
// group on the whole mesh, so the base communicator runs them unchanged. A
// stage of one device gets a mesh of shape [1], whose groups hold only
// that device.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Tensors.h"
#include <cstring>

namespace {

class StageComm : public sbp_comm {
public:
  StageComm(sbp_comm *base, int64_t stageAxes)
      : base(base), stageAxes(stageAxes) {
    meshShape.assign(base->meshShape.begin() + stageAxes,
                     base->meshShape.end());
    coords.assign(base->coords.begin() + stageAxes, base->coords.end());
    single = meshShape.empty();
    if (single) {
      meshShape = {1};
      coords = {0};
    }
    for (size_t a = 0; a < meshShape.size(); ++a)
      rank = rank * meshShape[a] + coords[a];
  }

  int allReduce(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, sbp_reduction kind) override {
    if (single)
      return copy(in, out);
    Axes shifted = shift(axes, numAxes);
    return base->allReduce(shifted.data(), numAxes, in, out, kind);
  }
  int allGather(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, int64_t dim) override {
    if (single)
      return copy(in, out);
    Axes shifted = shift(axes, numAxes);
    return base->allGather(shifted.data(), numAxes, in, out, dim);
  }
  int reduceScatter(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                    sbp_tensor *out, int64_t dim, sbp_reduction kind) override {
    if (single)
      return copy(in, out);
    Axes shifted = shift(axes, numAxes);
    return base->reduceScatter(shifted.data(), numAxes, in, out, dim, kind);
  }
  int allToAll(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
               sbp_tensor *out, int64_t splitDim, int64_t concatDim) override {
    if (single)
      return copy(in, out);
    Axes shifted = shift(axes, numAxes);
    return base->allToAll(shifted.data(), numAxes, in, out, splitDim,
                          concatDim);
  }
  int broadcast(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, int64_t root) override {
    if (single)
      return copy(in, out);
    Axes shifted = shift(axes, numAxes);
    return base->broadcast(shifted.data(), numAxes, in, out, root);
  }
  int send(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
           int64_t peer) override {
    if (single) {
      base->abort("send: a stage of one device has no peer");
      return SBP_ERR_INVALID;
    }
    Axes shifted = shift(axes, numAxes);
    return base->send(shifted.data(), numAxes, in, peer);
  }
  int recv(const int64_t *axes, int64_t numAxes, sbp_tensor *out,
           int64_t peer) override {
    if (single) {
      base->abort("recv: a stage of one device has no peer");
      return SBP_ERR_INVALID;
    }
    Axes shifted = shift(axes, numAxes);
    return base->recv(shifted.data(), numAxes, out, peer);
  }
  void abort(const std::string &reason) override { base->abort(reason); }

private:
  using Axes = std::vector<int64_t>;
  Axes shift(const int64_t *axes, int64_t numAxes) const {
    Axes shifted(axes, axes + numAxes);
    for (int64_t &axis : shifted)
      axis += stageAxes;
    return shifted;
  }
  /// The collectives of a group of one: the output is the input.
  int copy(const sbp_tensor *in, sbp_tensor *out) {
    int64_t bytes = sbp::runtime::numElements(*in) * sbp_dtype_size(in->dtype);
    if (bytes != sbp::runtime::numElements(*out) * sbp_dtype_size(out->dtype)) {
      base->abort("a collective of a group of one device changes the size");
      return SBP_ERR_INVALID;
    }
    if (in->data != out->data && bytes)
      std::memmove(out->data, in->data, bytes);
    return SBP_OK;
  }

  sbp_comm *base;
  int64_t stageAxes;
  bool single = false;
};

} // namespace

extern "C" {

sbp_comm *sbp_stage_comm_create(sbp_comm *comm, int64_t stage_axes) {
  if (!comm || stage_axes < 0 ||
      stage_axes > static_cast<int64_t>(comm->meshShape.size()))
    return nullptr;
  return new StageComm(comm, stage_axes);
}

void sbp_stage_comm_destroy(sbp_comm *comm) { delete comm; }

} // extern "C"
