//===- Comm.cpp - The C ABI over the backends' communicators --------------===//

#include "Comm.h"

extern "C" {

void sbp_world_destroy(sbp_world *world) { delete world; }

int64_t sbp_world_size(const sbp_world *world) {
  int64_t size = 1;
  for (int64_t extent : world->meshShape)
    size *= extent;
  return size;
}

const char *sbp_world_error(const sbp_world *world) {
  return const_cast<sbp_world *>(world)->getError();
}

int64_t sbp_world_process_rank(const sbp_world *world) {
  return world->getProcessRank();
}

sbp_comm *sbp_world_comm(sbp_world *world, int64_t rank) {
  if (rank < 0 || rank >= sbp_world_size(world))
    return nullptr;
  return world->getComm(rank);
}

int64_t sbp_comm_rank(const sbp_comm *comm) { return comm->rank; }

int64_t sbp_comm_axis_index(const sbp_comm *comm, int64_t axis) {
  return comm->coords.at(axis);
}

int64_t sbp_comm_mesh_rank(const sbp_comm *comm) {
  return static_cast<int64_t>(comm->coords.size());
}

int64_t sbp_comm_mesh_size(const sbp_comm *comm, int64_t axis) {
  return comm->meshShape.at(axis);
}

void sbp_comm_abort(sbp_comm *comm, const char *reason) { comm->abort(reason); }

int sbp_all_reduce(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
                   const sbp_tensor *in, sbp_tensor *out, sbp_reduction kind) {
  return comm->allReduce(axes, numAxes, in, out, kind);
}

int sbp_all_gather(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
                   const sbp_tensor *in, sbp_tensor *out, int64_t dim) {
  return comm->allGather(axes, numAxes, in, out, dim);
}

int sbp_reduce_scatter(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
                       const sbp_tensor *in, sbp_tensor *out, int64_t dim,
                       sbp_reduction kind) {
  return comm->reduceScatter(axes, numAxes, in, out, dim, kind);
}

int sbp_all_to_all(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
                   const sbp_tensor *in, sbp_tensor *out, int64_t splitDim,
                   int64_t concatDim) {
  return comm->allToAll(axes, numAxes, in, out, splitDim, concatDim);
}

int sbp_broadcast(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
                  const sbp_tensor *in, sbp_tensor *out, int64_t root) {
  return comm->broadcast(axes, numAxes, in, out, root);
}

int sbp_send(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
             const sbp_tensor *in, int64_t peer) {
  return comm->send(axes, numAxes, in, peer);
}

int sbp_recv(sbp_comm *comm, const int64_t *axes, int64_t numAxes,
             sbp_tensor *out, int64_t peer) {
  return comm->recv(axes, numAxes, out, peer);
}

} // extern "C"
