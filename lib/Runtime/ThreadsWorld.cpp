//===- ThreadsWorld.cpp - Ranks as threads of one process -----------------===//
//
// Every collective is a rendezvous of its group: each rank posts its input,
// waits for the others, reads what it needs straight from their memory into
// its own output, and waits again so that nobody changes an input that a
// peer may still read. Waits are bounded by the world's timeout; the first
// failure stops every rank of the world.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Tensors.h"
#include "sbp/Runtime/Shards.h"
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

using namespace sbp::runtime;

namespace {

/// The ranks of one collective group and their rendezvous state.
struct Group {
  std::vector<int64_t> members;
  std::vector<const sbp_tensor *> posted;
  /// Outputs, for collectives that write into their peers' results.
  std::vector<sbp_tensor *> outputs;
  std::vector<bool> arrived;
  int64_t numArrived = 0;
  uint64_t generation = 0;
};

/// A message in flight between two ranks.
struct Message {
  std::vector<int64_t> shape;
  std::vector<char> data;
};

std::string describeAxes(const int64_t *axes, int64_t numAxes) {
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < numAxes; ++i)
    os << (i ? ", " : "") << axes[i];
  os << "]";
  return os.str();
}

} // namespace

struct ThreadsWorld;

/// A rank of a threads world.
struct ThreadsComm : sbp_comm {
  ThreadsWorld *world = nullptr;

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
};

/// Ranks as threads of this process, sharing memory.
struct ThreadsWorld : sbp_world {
  std::chrono::duration<double> timeout;
  std::vector<std::unique_ptr<ThreadsComm>> comms;

  sbp_comm *getComm(int64_t rank) override { return comms[rank].get(); }
  const char *getError() override {
    std::lock_guard<std::mutex> lock(mutex);
    return error.empty() ? nullptr : error.c_str();
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::string error;
  std::map<std::vector<int64_t>, std::unique_ptr<Group>> groups;
  std::map<std::pair<int64_t, int64_t>, std::deque<Message>> mail;

  /// Records the first failure and wakes every waiting rank. Needs `mutex`.
  void fail(const std::string &message) {
    if (error.empty())
      error = message;
    changed.notify_all();
  }

  /// The group of `comm` over `axes`, or null for invalid axes. Needs
  /// `mutex`.
  Group *getGroup(const ThreadsComm &comm, const int64_t *axes, int64_t numAxes,
                  int64_t &index);

  /// The world rank of group rank `peer`, or -1 (recording the error) when
  /// the axes or the peer are invalid. Needs `mutex`.
  int64_t getPeer(const ThreadsComm &comm, const int64_t *axes, int64_t numAxes,
                  int64_t peer, const char *op) {
    int64_t index = 0;
    Group *group = getGroup(comm, axes, numAxes, index);
    if (group && peer >= 0 &&
        peer < static_cast<int64_t>(group->members.size()))
      return group->members[peer];
    fail("rank " + std::to_string(comm.rank) + ": " + op + ": invalid peer " +
         std::to_string(peer) + " over mesh axes " +
         describeAxes(axes, numAxes));
    return -1;
  }

  /// Waits until every member of `group` arrived at this rendezvous. A
  /// non-null `posted` is published to the group first; the closing
  /// rendezvous of a collective posts nothing, since peers may still be
  /// reading.
  int rendezvous(std::unique_lock<std::mutex> &lock, Group &group,
                 int64_t index, const sbp_tensor *posted, sbp_tensor *output,
                 int64_t rank, const char *op);
};

Group *ThreadsWorld::getGroup(const ThreadsComm &comm, const int64_t *axes,
                              int64_t numAxes, int64_t &index) {
  int64_t meshRank = static_cast<int64_t>(meshShape.size());
  std::vector<bool> inGroup(meshRank, false);
  for (int64_t i = 0; i < numAxes; ++i) {
    if (axes[i] < 0 || axes[i] >= meshRank || inGroup[axes[i]])
      return nullptr;
    inGroup[axes[i]] = true;
  }
  // Key: the axes, then this rank's coordinates on the other axes.
  std::vector<int64_t> key(axes, axes + numAxes);
  key.push_back(-1);
  for (int64_t a = 0; a < meshRank; ++a)
    if (!inGroup[a])
      key.push_back(comm.coords[a]);
  index = 0;
  for (int64_t i = 0; i < numAxes; ++i)
    index = index * meshShape[axes[i]] + comm.coords[axes[i]];

  std::unique_ptr<Group> &group = groups[key];
  if (!group) {
    group = std::make_unique<Group>();
    int64_t size = 1;
    for (int64_t i = 0; i < numAxes; ++i)
      size *= meshShape[axes[i]];
    for (int64_t member = 0; member < size; ++member) {
      std::vector<int64_t> coords = comm.coords;
      for (int64_t i = numAxes - 1, rest = member; i >= 0; --i) {
        coords[axes[i]] = rest % meshShape[axes[i]];
        rest /= meshShape[axes[i]];
      }
      int64_t rank = 0;
      for (int64_t a = 0; a < meshRank; ++a)
        rank = rank * meshShape[a] + coords[a];
      group->members.push_back(rank);
    }
    group->posted.assign(size, nullptr);
    group->outputs.assign(size, nullptr);
    group->arrived.assign(size, false);
  }
  return group.get();
}

int ThreadsWorld::rendezvous(std::unique_lock<std::mutex> &lock, Group &group,
                             int64_t index, const sbp_tensor *posted,
                             sbp_tensor *output, int64_t rank, const char *op) {
  if (!error.empty())
    return SBP_ERR_ABORTED;
  if (posted) {
    group.posted[index] = posted;
    group.outputs[index] = output;
  }
  group.arrived[index] = true;
  uint64_t generation = group.generation;
  if (++group.numArrived == static_cast<int64_t>(group.members.size())) {
    group.numArrived = 0;
    group.arrived.assign(group.members.size(), false);
    ++group.generation;
    changed.notify_all();
    return SBP_OK;
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
  while (group.generation == generation) {
    if (!error.empty())
      return SBP_ERR_ABORTED;
    if (changed.wait_until(lock, deadline) == std::cv_status::timeout &&
        group.generation == generation) {
      std::ostringstream os;
      os << "rank " << rank << ": " << op << ": timed out after "
         << timeout.count() << " s waiting for rank";
      const char *sep = " ";
      for (size_t i = 0; i < group.members.size(); ++i)
        if (!group.arrived[i]) {
          os << sep << group.members[i];
          sep = ", ";
        }
      fail(os.str());
      return SBP_ERR_TIMEOUT;
    }
  }
  return SBP_OK;
}

namespace {

/// Runs one collective: rendezvous, `body` reading the peers' posted
/// tensors, rendezvous again.
template <typename Body>
int collective(ThreadsComm *comm, const char *op, const int64_t *axes,
               int64_t numAxes, const sbp_tensor *posted, sbp_tensor *output,
               Body body) {
  ThreadsWorld &world = *comm->world;
  std::unique_lock<std::mutex> lock(world.mutex);
  int64_t index = 0;
  Group *group = world.getGroup(*comm, axes, numAxes, index);
  if (!group) {
    world.fail("rank " + std::to_string(comm->rank) + ": " + op +
               ": invalid mesh axes " + describeAxes(axes, numAxes));
    return SBP_ERR_INVALID;
  }
  if (int status =
          world.rendezvous(lock, *group, index, posted, output, comm->rank, op))
    return status;
  lock.unlock();
  std::string problem = body(*group, index);
  lock.lock();
  if (!problem.empty()) {
    world.fail("rank " + std::to_string(comm->rank) + ": " + op + ": " +
               problem);
    return SBP_ERR_INVALID;
  }
  return world.rendezvous(lock, *group, index, nullptr, nullptr, comm->rank,
                          op);
}

bool sameShapeExcept(const sbp_tensor &a, const sbp_tensor &b, int64_t dim) {
  if (a.rank != b.rank || a.dtype != b.dtype)
    return false;
  for (int64_t i = 0; i < a.rank; ++i)
    if (i != dim && a.shape[i] != b.shape[i])
      return false;
  return true;
}

} // namespace

extern "C" {

sbp_world *sbp_threads_world_create(const int64_t *meshShape, int64_t meshRank,
                                    double timeoutSeconds) {
  auto *world = new ThreadsWorld;
  world->meshShape.assign(meshShape, meshShape + meshRank);
  world->timeout = std::chrono::duration<double>(timeoutSeconds);
  for (int64_t rank = 0, size = sbp_world_size(world); rank < size; ++rank) {
    auto comm = std::make_unique<ThreadsComm>();
    comm->world = world;
    comm->rank = rank;
    comm->meshShape = world->meshShape;
    comm->coords = sbp::runtime::getCoords(world->meshShape, rank);
    world->comms.push_back(std::move(comm));
  }
  return world;
}

} // extern "C"

void ThreadsComm::abort(const std::string &reason) {
  std::lock_guard<std::mutex> lock(world->mutex);
  world->fail("rank " + std::to_string(rank) + ": " + reason);
}

int ThreadsComm::allReduce(const int64_t *axes, int64_t numAxes,
                           const sbp_tensor *in, sbp_tensor *out,
                           sbp_reduction kind) {
  ThreadsComm *comm = this;
  // Each rank reduces its balanced share of the elements once and writes it
  // into every rank's output: every element is read once per input and
  // written once per output, over all ranks together.
  return collective(comm, "all_reduce", axes, numAxes, in, out,
                    [&](Group &group, int64_t index) -> std::string {
                      for (size_t j = 0; j < group.posted.size(); ++j)
                        if (!sameShapeExcept(*group.posted[j], *in, -1) ||
                            !sameShapeExcept(*group.outputs[j], *in, -1))
                          return "rank " + std::to_string(group.members[j]) +
                                 " has a different shape";
                      int64_t n = numElements(*in), parts = group.posted.size();
                      reduceToAll(group.posted, group.outputs,
                                  pieceOffset(n, parts, index),
                                  pieceSize(n, parts, index), kind);
                      return "";
                    });
}

int ThreadsComm::allGather(const int64_t *axes, int64_t numAxes,
                           const sbp_tensor *in, sbp_tensor *out, int64_t dim) {
  ThreadsComm *comm = this;
  return collective(comm, "all_gather", axes, numAxes, in, out,
                    [&](Group &group, int64_t) -> std::string {
                      if (dim < 0 || dim >= out->rank)
                        return "gather dimension out of range";
                      std::vector<int64_t> to(out->rank, 0);
                      for (size_t j = 0; j < group.posted.size(); ++j) {
                        const sbp_tensor &peer = *group.posted[j];
                        if (!sameShapeExcept(peer, *out, dim) ||
                            to[dim] + peer.shape[dim] > out->shape[dim])
                          return "pieces do not fit the output shape";
                        Box box = wholeBox(peer);
                        copyBox(peer, box.offset, *out, to, box.size);
                        to[dim] += peer.shape[dim];
                      }
                      if (to[dim] != out->shape[dim])
                        return "pieces do not fill the output shape";
                      return "";
                    });
}

int ThreadsComm::reduceScatter(const int64_t *axes, int64_t numAxes,
                               const sbp_tensor *in, sbp_tensor *out,
                               int64_t dim, sbp_reduction kind) {
  ThreadsComm *comm = this;
  return collective(
      comm, "reduce_scatter", axes, numAxes, in, out,
      [&](Group &group, int64_t index) -> std::string {
        if (dim < 0 || dim >= in->rank || !sameShapeExcept(*in, *out, dim))
          return "output shape does not match the input";
        int64_t parts = static_cast<int64_t>(group.posted.size());
        Box piece = pieceBox(*in, dim, parts, index);
        if (piece.size[dim] != out->shape[dim])
          return "output is not this rank's piece";
        for (size_t j = 0; j < group.posted.size(); ++j)
          if (!sameShapeExcept(*group.posted[j], *in, -1))
            return "rank " + std::to_string(group.members[j]) +
                   " has a different shape";
        reduceBoxes(group.posted, piece.offset, *out,
                    std::vector<int64_t>(out->rank, 0), piece.size, kind);
        return "";
      });
}

int ThreadsComm::allToAll(const int64_t *axes, int64_t numAxes,
                          const sbp_tensor *in, sbp_tensor *out,
                          int64_t splitDim, int64_t concatDim) {
  ThreadsComm *comm = this;
  return collective(comm, "all_to_all", axes, numAxes, in, out,
                    [&](Group &group, int64_t index) -> std::string {
                      if (splitDim < 0 || splitDim >= in->rank ||
                          concatDim < 0 || concatDim >= in->rank ||
                          in->rank != out->rank)
                        return "dimensions out of range";
                      int64_t parts = static_cast<int64_t>(group.posted.size());
                      std::vector<int64_t> to(out->rank, 0);
                      for (size_t j = 0; j < group.posted.size(); ++j) {
                        const sbp_tensor &peer = *group.posted[j];
                        Box piece = pieceBox(peer, splitDim, parts, index);
                        for (int64_t d = 0; d < out->rank; ++d)
                          if (to[d] + piece.size[d] > out->shape[d])
                            return "pieces do not fit the output shape";
                        copyBox(peer, piece.offset, *out, to, piece.size);
                        to[concatDim] += piece.size[concatDim];
                      }
                      return "";
                    });
}

int ThreadsComm::broadcast(const int64_t *axes, int64_t numAxes,
                           const sbp_tensor *in, sbp_tensor *out,
                           int64_t root) {
  ThreadsComm *comm = this;
  return collective(comm, "broadcast", axes, numAxes, in, out,
                    [&](Group &group, int64_t) -> std::string {
                      if (root < 0 ||
                          root >= static_cast<int64_t>(group.posted.size()))
                        return "root is not a rank of the group";
                      const sbp_tensor &source = *group.posted[root];
                      if (!sameShapeExcept(source, *out, -1))
                        return "output shape differs from the root's";
                      Box box = wholeBox(*out);
                      copyBox(source, box.offset, *out, box.offset, box.size);
                      return "";
                    });
}

int ThreadsComm::send(const int64_t *axes, int64_t numAxes,
                      const sbp_tensor *in, int64_t peer) {
  ThreadsComm *comm = this;
  ThreadsWorld &world = *comm->world;
  std::lock_guard<std::mutex> lock(world.mutex);
  if (!world.error.empty())
    return SBP_ERR_ABORTED;
  int64_t to = world.getPeer(*comm, axes, numAxes, peer, "send");
  if (to < 0)
    return SBP_ERR_INVALID;
  Message message;
  message.shape.assign(in->shape, in->shape + in->rank);
  const char *data = static_cast<const char *>(in->data);
  message.data.assign(data,
                      data + numElements(*in) * sbp_dtype_size(in->dtype));
  world.mail[{comm->rank, to}].push_back(std::move(message));
  world.changed.notify_all();
  return SBP_OK;
}

int ThreadsComm::recv(const int64_t *axes, int64_t numAxes, sbp_tensor *out,
                      int64_t peer) {
  ThreadsComm *comm = this;
  ThreadsWorld &world = *comm->world;
  std::unique_lock<std::mutex> lock(world.mutex);
  int64_t from = world.getPeer(*comm, axes, numAxes, peer, "recv");
  if (from < 0)
    return SBP_ERR_INVALID;
  std::deque<Message> &queue = world.mail[{from, comm->rank}];
  auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(world.timeout);
  while (queue.empty()) {
    if (!world.error.empty())
      return SBP_ERR_ABORTED;
    if (world.changed.wait_until(lock, deadline) == std::cv_status::timeout &&
        queue.empty()) {
      std::ostringstream os;
      os << "rank " << comm->rank << ": recv: timed out after "
         << world.timeout.count() << " s waiting for rank " << from;
      world.fail(os.str());
      return SBP_ERR_TIMEOUT;
    }
  }
  Message message = std::move(queue.front());
  queue.pop_front();
  if (message.shape !=
      std::vector<int64_t>(out->shape, out->shape + out->rank)) {
    world.fail("rank " + std::to_string(comm->rank) +
               ": recv: the message from rank " + std::to_string(from) +
               " has another shape");
    return SBP_ERR_INVALID;
  }
  std::copy(message.data.begin(), message.data.end(),
            static_cast<char *>(out->data));
  return SBP_OK;
}
