//===- MpiWorld.cpp - One process per rank over MPI -----------------------===//
//
// Each process runs one rank. A collective over mesh axes runs on an MPI
// communicator split from MPI_COMM_WORLD by the coordinates on the other
// axes (created on first use: every rank reaches a program's collectives in
// the same order). Every operation is non-blocking and polled against the
// world's timeout; a rank that times out or fails prints which rank and
// which collective, and MPI_Abort stops every process with exit code 3.
//
//===----------------------------------------------------------------------===//

#include "../Comm.h"
#include "../Tensors.h"
#include "sbp/Runtime/Float16.h"
#include "sbp/Runtime/Shards.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mpi.h>
#include <sstream>
#include <thread>

using namespace sbp::runtime;

namespace {

MPI_Datatype getMpiType(sbp_dtype dtype) {
  switch (dtype) {
  case SBP_F32:
    return MPI_FLOAT;
  case SBP_F64:
    return MPI_DOUBLE;
  case SBP_I32:
    return MPI_INT32_T;
  case SBP_I64:
    return MPI_INT64_T;
  case SBP_I8:
    return MPI_INT8_T;
  case SBP_F16:
  case SBP_BF16:
    return MPI_UINT16_T;
  }
  return MPI_BYTE;
}

/// `inout[i] = in[i] (kind) inout[i]` on 16-bit floats, computed in float:
/// MPI has no 16-bit float type of its own.
template <typename T, sbp_reduction Kind>
void reduceFloat16(void *in, void *inout, int *length, MPI_Datatype *) {
  const T *a = static_cast<const T *>(in);
  T *b = static_cast<T *>(inout);
  for (int i = 0; i < *length; ++i) {
    float x = a[i], y = b[i];
    b[i] = Kind == SBP_SUM   ? x + y
           : Kind == SBP_MAX ? std::max(x, y)
                             : std::min(x, y);
  }
}

template <typename T> MPI_Op getFloat16Op(sbp_reduction kind) {
  // Created on first use, after MPI_Init; MPI_Finalize frees them.
  static MPI_Op ops[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  static MPI_User_function *functions[3] = {reduceFloat16<T, SBP_SUM>,
                                            reduceFloat16<T, SBP_MAX>,
                                            reduceFloat16<T, SBP_MIN>};
  if (ops[kind] == MPI_OP_NULL)
    MPI_Op_create(functions[kind], /*commute=*/1, &ops[kind]);
  return ops[kind];
}

MPI_Op getMpiOp(sbp_reduction kind, sbp_dtype dtype) {
  if (dtype == SBP_F16)
    return getFloat16Op<Half>(kind);
  if (dtype == SBP_BF16)
    return getFloat16Op<BFloat16>(kind);
  return kind == SBP_MAX ? MPI_MAX : kind == SBP_MIN ? MPI_MIN : MPI_SUM;
}

int64_t getBytes(const sbp_tensor &t) {
  return numElements(t) * sbp_dtype_size(t.dtype);
}

/// A tensor with its own storage.
struct OwnedTensor {
  OwnedTensor(std::vector<int64_t> shape, sbp_dtype dtype)
      : shape(std::move(shape)) {
    tensor = {nullptr, static_cast<int64_t>(this->shape.size()),
              this->shape.data(), dtype};
    data.resize(getBytes(tensor));
    tensor.data = data.data();
  }
  std::vector<int64_t> shape;
  std::vector<char> data;
  sbp_tensor tensor;
};

struct MpiWorld;

struct MpiComm : sbp_comm {
  double timeoutSeconds = 300;
  std::map<std::vector<int64_t>, MPI_Comm> groups;
  /// Sends in flight with the copies they send from.
  std::list<std::pair<MPI_Request, std::vector<char>>> sends;

  ~MpiComm() override;

  int allReduce(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, sbp_reduction kind) override;
  int allGather(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, int64_t dim) override;
  int reduceScatter(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                    sbp_tensor *out, int64_t dim, sbp_reduction kind) override;
  int allToAll(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
               sbp_tensor *out, int64_t splitDim, int64_t concatDim) override;
  int broadcast(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                sbp_tensor *out, int64_t root) override;
  int send(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
           int64_t peer) override;
  int recv(const int64_t *axes, int64_t numAxes, sbp_tensor *out,
           int64_t peer) override;
  void abort(const std::string &reason) override;

  /// Stops every process: prints `op: problem` for this rank and aborts.
  [[noreturn]] void fail(const char *op, const std::string &problem);
  /// The communicator of the group over `axes`, its size and this rank's
  /// index in it.
  MPI_Comm getGroup(const int64_t *axes, int64_t numAxes, int64_t &size,
                    int64_t &index, const char *op);
  /// Waits for `request` until the timeout.
  void wait(MPI_Request &request, const char *op,
            MPI_Status *status = MPI_STATUS_IGNORE);
  /// All-gathers one int64 per rank of the group.
  std::vector<int64_t> gatherSizes(MPI_Comm group, int64_t size, int64_t value,
                                   const char *op);
  /// Completes the sends that are done.
  void progressSends();
};

struct MpiWorld : sbp_world {
  std::unique_ptr<MpiComm> comm;
  bool initializedMpi = false;

  ~MpiWorld() override {
    comm.reset();
    if (initializedMpi)
      MPI_Finalize();
  }
  sbp_comm *getComm(int64_t rank) override {
    return rank == comm->rank ? comm.get() : nullptr;
  }
  const char *getError() override { return nullptr; }
  int64_t getProcessRank() const override { return comm->rank; }
};

MpiComm::~MpiComm() {
  for (auto &[request, data] : sends)
    wait(request, "send");
  for (auto &[axes, group] : groups)
    MPI_Comm_free(&group);
}

void MpiComm::fail(const char *op, const std::string &problem) {
  std::fprintf(stderr, "sbp: rank %lld: %s: %s\n", static_cast<long long>(rank),
               op, problem.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

void MpiComm::abort(const std::string &reason) {
  std::fprintf(stderr, "sbp: rank %lld: %s\n", static_cast<long long>(rank),
               reason.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

MPI_Comm MpiComm::getGroup(const int64_t *axes, int64_t numAxes, int64_t &size,
                           int64_t &index, const char *op) {
  std::vector<int64_t> key(axes, axes + numAxes);
  std::vector<bool> inGroup(meshShape.size(), false);
  size = 1;
  index = 0;
  for (int64_t axis : key) {
    if (axis < 0 || axis >= static_cast<int64_t>(meshShape.size()) ||
        inGroup[axis])
      fail(op, "invalid mesh axes");
    inGroup[axis] = true;
    size *= meshShape[axis];
    index = index * meshShape[axis] + coords[axis];
  }
  auto it = groups.find(key);
  if (it != groups.end())
    return it->second;
  // The group's ranks in the order of their index along `axes`. Only they
  // take part in making its communicator: in a pipeline, the other stages'
  // ranks are not at this collective (MPI_Comm_split would wait for them).
  std::vector<int> members;
  std::vector<int64_t> at = coords;
  for (int64_t k = 0; k < size; ++k) {
    for (int64_t i = static_cast<int64_t>(key.size()) - 1, rest = k; i >= 0;
         --i) {
      at[key[i]] = rest % meshShape[key[i]];
      rest /= meshShape[key[i]];
    }
    int64_t member = 0;
    for (size_t a = 0; a < meshShape.size(); ++a)
      member = member * meshShape[a] + at[a];
    members.push_back(static_cast<int>(member));
  }
  MPI_Group world, subset;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(members.size()), members.data(),
                 &subset);
  // Groups of other axes with a rank in common are made one after the other
  // by that rank; the tag (the axes as bits) keeps them apart anyway.
  int tag = 0;
  for (int64_t axis : key)
    tag |= 1 << axis;
  MPI_Comm group;
  MPI_Comm_create_group(MPI_COMM_WORLD, subset, tag, &group);
  MPI_Group_free(&subset);
  MPI_Group_free(&world);
  groups.emplace(key, group);
  return group;
}

void MpiComm::wait(MPI_Request &request, const char *op, MPI_Status *status) {
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(timeoutSeconds);
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_Test(&request, &done, status);
    if (done)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      std::ostringstream os;
      os << "timed out after " << timeoutSeconds << " s";
      fail(op, os.str());
    }
    // Spin briefly for latency, then stop burning the core.
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

std::vector<int64_t> MpiComm::gatherSizes(MPI_Comm group, int64_t size,
                                          int64_t value, const char *op) {
  std::vector<int64_t> values(size);
  MPI_Request request;
  MPI_Iallgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, group,
                 &request);
  wait(request, op);
  return values;
}

void MpiComm::progressSends() {
  for (auto it = sends.begin(); it != sends.end();) {
    int done = 0;
    MPI_Test(&it->first, &done, MPI_STATUS_IGNORE);
    it = done ? sends.erase(it) : std::next(it);
  }
}

int MpiComm::allReduce(const int64_t *axes, int64_t numAxes,
                       const sbp_tensor *in, sbp_tensor *out,
                       sbp_reduction kind) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "all_reduce");
  MPI_Request request;
  MPI_Iallreduce(in->data, out->data, static_cast<int>(numElements(*in)),
                 getMpiType(in->dtype), getMpiOp(kind, in->dtype), group,
                 &request);
  wait(request, "all_reduce");
  return SBP_OK;
}

int MpiComm::allGather(const int64_t *axes, int64_t numAxes,
                       const sbp_tensor *in, sbp_tensor *out, int64_t dim) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "all_gather");
  if (dim < 0 || dim >= in->rank || in->rank != out->rank)
    fail("all_gather", "gather dimension out of range");
  std::vector<int64_t> pieces =
      gatherSizes(group, size, in->shape[dim], "all_gather");
  int64_t total = 0;
  for (int64_t piece : pieces)
    total += piece;
  if (total != out->shape[dim])
    fail("all_gather", "pieces do not fill the output shape");
  // Gather every rank's whole piece, then place each along `dim`.
  // From the shape, not the bytes: this rank's piece may be empty.
  int64_t sliceBytes = sbp_dtype_size(in->dtype);
  for (int64_t d = 0; d < in->rank; ++d)
    if (d != dim)
      sliceBytes *= in->shape[d];
  std::vector<int> counts(size), displacements(size);
  for (int64_t j = 0, at = 0; j < size; ++j) {
    counts[j] = static_cast<int>(pieces[j] * sliceBytes);
    displacements[j] = static_cast<int>(at);
    at += counts[j];
  }
  std::vector<char> gathered(total * sliceBytes);
  MPI_Request request;
  MPI_Iallgatherv(in->data, static_cast<int>(getBytes(*in)), MPI_BYTE,
                  gathered.data(), counts.data(), displacements.data(),
                  MPI_BYTE, group, &request);
  wait(request, "all_gather");
  std::vector<int64_t> to(out->rank, 0), zero(out->rank, 0);
  for (int64_t j = 0; j < size; ++j) {
    std::vector<int64_t> shape(in->shape, in->shape + in->rank);
    shape[dim] = pieces[j];
    sbp_tensor peer{gathered.data() + displacements[j], in->rank, shape.data(),
                    in->dtype};
    copyBox(peer, zero, *out, to, shape);
    to[dim] += pieces[j];
  }
  return SBP_OK;
}

int MpiComm::reduceScatter(const int64_t *axes, int64_t numAxes,
                           const sbp_tensor *in, sbp_tensor *out, int64_t dim,
                           sbp_reduction kind) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "reduce_scatter");
  if (dim < 0 || dim >= in->rank)
    fail("reduce_scatter", "scatter dimension out of range");
  // Reduce everything, keep this rank's piece.
  OwnedTensor reduced(std::vector<int64_t>(in->shape, in->shape + in->rank),
                      in->dtype);
  MPI_Request request;
  MPI_Iallreduce(in->data, reduced.tensor.data,
                 static_cast<int>(numElements(*in)), getMpiType(in->dtype),
                 getMpiOp(kind, in->dtype), group, &request);
  wait(request, "reduce_scatter");
  Box piece = pieceBox(*in, dim, size, index);
  if (piece.size[dim] != out->shape[dim])
    fail("reduce_scatter", "output is not this rank's piece");
  copyBox(reduced.tensor, piece.offset, *out,
          std::vector<int64_t>(out->rank, 0), piece.size);
  return SBP_OK;
}

int MpiComm::allToAll(const int64_t *axes, int64_t numAxes,
                      const sbp_tensor *in, sbp_tensor *out, int64_t splitDim,
                      int64_t concatDim) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "all_to_all");
  if (splitDim < 0 || splitDim >= in->rank || concatDim < 0 ||
      concatDim >= in->rank || in->rank != out->rank)
    fail("all_to_all", "dimensions out of range");
  std::vector<int64_t> concatSizes =
      gatherSizes(group, size, in->shape[concatDim], "all_to_all");
  // Pack piece j of the split for rank j; work out what each rank sends us.
  std::vector<int> sendCounts(size), sendOffsets(size), recvCounts(size),
      recvOffsets(size);
  std::vector<char> packed(getBytes(*in));
  std::vector<std::vector<int64_t>> recvShapes(size);
  int64_t sendAt = 0, recvAt = 0;
  for (int64_t j = 0; j < size; ++j) {
    Box piece = pieceBox(*in, splitDim, size, j);
    OwnedTensor part(piece.size, in->dtype);
    copyBox(*in, piece.offset, part.tensor, std::vector<int64_t>(in->rank, 0),
            piece.size);
    std::memcpy(packed.data() + sendAt, part.data.data(), part.data.size());
    sendCounts[j] = static_cast<int>(part.data.size());
    sendOffsets[j] = static_cast<int>(sendAt);
    sendAt += part.data.size();
    std::vector<int64_t> shape(in->shape, in->shape + in->rank);
    shape[concatDim] = concatSizes[j];
    shape[splitDim] = pieceSize(shape[splitDim], size, index);
    sbp_tensor view{nullptr, in->rank, shape.data(), in->dtype};
    recvCounts[j] = static_cast<int>(getBytes(view));
    recvOffsets[j] = static_cast<int>(recvAt);
    recvAt += recvCounts[j];
    recvShapes[j] = std::move(shape);
  }
  std::vector<char> received(recvAt);
  MPI_Request request;
  MPI_Ialltoallv(packed.data(), sendCounts.data(), sendOffsets.data(), MPI_BYTE,
                 received.data(), recvCounts.data(), recvOffsets.data(),
                 MPI_BYTE, group, &request);
  wait(request, "all_to_all");
  std::vector<int64_t> to(out->rank, 0), zero(out->rank, 0);
  for (int64_t j = 0; j < size; ++j) {
    for (int64_t d = 0; d < out->rank; ++d)
      if (to[d] + recvShapes[j][d] > out->shape[d])
        fail("all_to_all", "pieces do not fit the output shape");
    sbp_tensor piece{received.data() + recvOffsets[j], in->rank,
                     recvShapes[j].data(), in->dtype};
    copyBox(piece, zero, *out, to, recvShapes[j]);
    to[concatDim] += recvShapes[j][concatDim];
  }
  return SBP_OK;
}

int MpiComm::broadcast(const int64_t *axes, int64_t numAxes,
                       const sbp_tensor *in, sbp_tensor *out, int64_t root) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "broadcast");
  if (root < 0 || root >= size)
    fail("broadcast", "root is not a rank of the group");
  if (index == root)
    std::memcpy(out->data, in->data, getBytes(*in));
  MPI_Request request;
  MPI_Ibcast(out->data, static_cast<int>(getBytes(*out)), MPI_BYTE,
             static_cast<int>(root), group, &request);
  wait(request, "broadcast");
  return SBP_OK;
}

int MpiComm::send(const int64_t *axes, int64_t numAxes, const sbp_tensor *in,
                  int64_t peer) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "send");
  if (peer < 0 || peer >= size)
    fail("send", "invalid peer " + std::to_string(peer));
  // Eager, like the threads backend: the message is copied and the send
  // completes in the background.
  const char *data = static_cast<const char *>(in->data);
  sends.emplace_back(MPI_REQUEST_NULL,
                     std::vector<char>(data, data + getBytes(*in)));
  auto &[request, copy] = sends.back();
  MPI_Isend(copy.data(), static_cast<int>(copy.size()), MPI_BYTE,
            static_cast<int>(peer), 0, group, &request);
  return SBP_OK;
}

int MpiComm::recv(const int64_t *axes, int64_t numAxes, sbp_tensor *out,
                  int64_t peer) {
  progressSends();
  int64_t size, index;
  MPI_Comm group = getGroup(axes, numAxes, size, index, "recv");
  if (peer < 0 || peer >= size)
    fail("recv", "invalid peer " + std::to_string(peer));
  MPI_Request request;
  MPI_Irecv(out->data, static_cast<int>(getBytes(*out)), MPI_BYTE,
            static_cast<int>(peer), 0, group, &request);
  MPI_Status status;
  wait(request, "recv", &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (count != getBytes(*out))
    fail("recv", "the message from rank " + std::to_string(peer) +
                     " has another shape");
  return SBP_OK;
}

} // namespace

extern "C" sbp_world *sbp_mpi_world_create(const int64_t *meshShape,
                                           int64_t meshRank,
                                           double timeoutSeconds,
                                           const char **error) {
  static thread_local std::string message;
  auto world = std::make_unique<MpiWorld>();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    world->initializedMpi = true;
  }
  int rank = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  world->meshShape.assign(meshShape, meshShape + meshRank);
  int64_t size = sbp_world_size(world.get());
  if (size != processes) {
    message = "the mesh has " + std::to_string(size) + " ranks but MPI runs " +
              std::to_string(processes) + " processes (mpirun -np " +
              std::to_string(size) + ")";
    if (error)
      *error = message.c_str();
    return nullptr;
  }
  world->comm = std::make_unique<MpiComm>();
  world->comm->rank = rank;
  world->comm->meshShape = world->meshShape;
  world->comm->coords = sbp::runtime::getCoords(world->meshShape, rank);
  world->comm->timeoutSeconds = timeoutSeconds;
  return world.release();
}
