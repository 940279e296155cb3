//===- Comm.h - The communicator interface of the backends ------*- C++ -*-===//
//
// The C ABI's opaque sbp_world and sbp_comm are these abstract classes;
// each backend (threads, MPI) derives its own. Comm.cpp forwards the C
// functions to them.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_COMM_H
#define SBP_RUNTIME_COMM_H

#include "sbp/Runtime/sbp_runtime.h"
#include <string>
#include <vector>

/// One rank's view of the world.
struct sbp_comm {
  virtual ~sbp_comm() = default;

  int64_t rank = 0;
  std::vector<int64_t> meshShape;
  std::vector<int64_t> coords;

  virtual int allReduce(const int64_t *axes, int64_t numAxes,
                        const sbp_tensor *in, sbp_tensor *out,
                        sbp_reduction kind) = 0;
  virtual int allGather(const int64_t *axes, int64_t numAxes,
                        const sbp_tensor *in, sbp_tensor *out, int64_t dim) = 0;
  virtual int reduceScatter(const int64_t *axes, int64_t numAxes,
                            const sbp_tensor *in, sbp_tensor *out, int64_t dim,
                            sbp_reduction kind) = 0;
  virtual int allToAll(const int64_t *axes, int64_t numAxes,
                       const sbp_tensor *in, sbp_tensor *out, int64_t splitDim,
                       int64_t concatDim) = 0;
  virtual int broadcast(const int64_t *axes, int64_t numAxes,
                        const sbp_tensor *in, sbp_tensor *out,
                        int64_t root) = 0;
  virtual int send(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                   int64_t peer) = 0;
  virtual int recv(const int64_t *axes, int64_t numAxes, sbp_tensor *out,
                   int64_t peer) = 0;
  /// Stops the world, naming this rank and `reason`.
  virtual void abort(const std::string &reason) = 0;
  /// The communicator for tensors in host memory: this one, or the host
  /// communicator under one whose tensors live on a device.
  virtual sbp_comm *getHostComm() { return this; }
};

/// The ranks of one mesh.
struct sbp_world {
  virtual ~sbp_world() = default;

  std::vector<int64_t> meshShape;

  /// The communicator of `rank`, or null when that rank is not in this
  /// process.
  virtual sbp_comm *getComm(int64_t rank) = 0;
  /// The first error, or null.
  virtual const char *getError() = 0;
  /// The rank of this process (MPI), or -1 when every rank is local.
  virtual int64_t getProcessRank() const { return -1; }
};

#endif // SBP_RUNTIME_COMM_H
