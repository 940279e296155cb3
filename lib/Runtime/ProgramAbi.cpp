//===- ProgramAbi.cpp - The calls compiled programs make ------------------===//
//
// Unpacks MLIR memref descriptors into sbp_tensors and forwards to the
// communicator that the host set for this thread.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Tensors.h"
#include "sbp/Runtime/Memref.h"
#include "sbp/Runtime/sbp_program.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

using namespace sbp::runtime;

namespace {

thread_local sbp_comm *currentComm = nullptr;
thread_local bool tracing = false;
thread_local std::vector<sbp_span> spans;

/// Unpacks the mesh axes of a call.
std::vector<int64_t> unpackAxes(int64_t axes, int64_t numAxes) {
  std::vector<int64_t> result;
  for (int64_t i = 0; i < numAxes; ++i)
    result.push_back((axes >> (8 * i)) & 0xff);
  return result;
}

/// The size of the group over `axes` and this rank's index in it.
void getGroup(const std::vector<int64_t> &axes, int64_t &size, int64_t &index) {
  size = 1;
  index = 0;
  for (int64_t axis : axes) {
    int64_t extent = sbp_comm_mesh_size(currentComm, axis);
    size *= extent;
    index = index * extent + sbp_comm_axis_index(currentComm, axis);
  }
}

/// Records a span for the collective that lives as long as it does.
class Span {
public:
  explicit Span(const char *name)
      : name(name), begin(tracing ? sbp_program_now_us() : 0) {}
  ~Span() {
    if (tracing)
      spans.push_back({name, begin, sbp_program_now_us()});
  }

private:
  const char *name;
  double begin;
};

/// Whether a collective can run; reports programs run without a host.
bool haveComm(const char *op) {
  if (currentComm)
    return true;
  std::fprintf(stderr, "sbp runtime: %s called without a communicator\n", op);
  return false;
}

/// Runs collective `op` of a compiled program on this thread's
/// communicator: `collective(axes, input, output)`, either tensor null when
/// the op has none.
template <typename Fn>
void forward(const char *op, int64_t inRank, void *in, int64_t outRank,
             void *out, sbp_dtype dtype, int64_t axes, int64_t numAxes,
             Fn collective) {
  if (!haveComm(op))
    return;
  Span span(op);
  std::optional<MemrefView> input, output;
  if (in)
    input.emplace(inRank, in, dtype);
  if (out)
    output.emplace(outRank, out, dtype);
  std::vector<int64_t> list = unpackAxes(axes, numAxes);
  collective(list.data(), input ? &input->tensor : nullptr,
             output ? &output->tensor : nullptr);
}

} // namespace

extern "C" {

void sbp_program_set_comm(sbp_comm *comm) { currentComm = comm; }
sbp_comm *sbp_program_get_comm(void) { return currentComm; }

void sbp_program_trace(int enable) { tracing = enable != 0; }

int64_t sbp_program_take_spans(sbp_span *out, int64_t capacity) {
  int64_t count = std::min<int64_t>(capacity, spans.size());
  std::copy(spans.begin(), spans.begin() + count, out);
  spans.clear();
  return count;
}

double sbp_program_now_us(void) {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

int64_t sbp_rt_axis_index(int64_t axis) {
  return haveComm("axis_index") ? sbp_comm_axis_index(currentComm, axis) : 0;
}

int64_t sbp_rt_group_sum(int64_t value, int64_t axes, int64_t numAxes) {
  if (!haveComm("group_sum"))
    return value;
  std::vector<int64_t> list = unpackAxes(axes, numAxes);
  int64_t one = 1, result = value;
  sbp_tensor in{&value, 1, &one, SBP_I64}, out{&result, 1, &one, SBP_I64};
  // The sizes are host integers, whatever memory the program's tensors
  // live in.
  sbp_all_reduce(currentComm->getHostComm(), list.data(), numAxes, &in, &out,
                 SBP_SUM);
  return result;
}

int64_t sbp_rt_piece_size(int64_t size, int64_t axes, int64_t numAxes) {
  if (!haveComm("piece_size"))
    return size;
  int64_t groupSize, index;
  getGroup(unpackAxes(axes, numAxes), groupSize, index);
  return pieceSize(size, groupSize, index);
}

/* One entry point per collective and element type, named by the type so
 * that one module can declare the calls for several element types. */
#define SBP_PROGRAM_ENTRY_POINTS(SUFFIX, DTYPE)                                \
  void sbp_rt_all_reduce_##SUFFIX(int64_t inRank, void *in, int64_t outRank,   \
                                  void *out, int64_t axes, int64_t numAxes,    \
                                  int64_t kind) {                              \
    forward("all_reduce", inRank, in, outRank, out, DTYPE, axes, numAxes,      \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *o) {           \
              sbp_all_reduce(currentComm, list, numAxes, i, o,                 \
                             static_cast<sbp_reduction>(kind));                \
            });                                                                \
  }                                                                            \
  void sbp_rt_all_gather_##SUFFIX(int64_t inRank, void *in, int64_t outRank,   \
                                  void *out, int64_t axes, int64_t numAxes,    \
                                  int64_t dim) {                               \
    forward("all_gather", inRank, in, outRank, out, DTYPE, axes, numAxes,      \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *o) {           \
              sbp_all_gather(currentComm, list, numAxes, i, o, dim);           \
            });                                                                \
  }                                                                            \
  void sbp_rt_reduce_scatter_##SUFFIX(                                         \
      int64_t inRank, void *in, int64_t outRank, void *out, int64_t axes,      \
      int64_t numAxes, int64_t dim, int64_t kind) {                            \
    forward("reduce_scatter", inRank, in, outRank, out, DTYPE, axes, numAxes,  \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *o) {           \
              sbp_reduce_scatter(currentComm, list, numAxes, i, o, dim,        \
                                 static_cast<sbp_reduction>(kind));            \
            });                                                                \
  }                                                                            \
  void sbp_rt_all_to_all_##SUFFIX(int64_t inRank, void *in, int64_t outRank,   \
                                  void *out, int64_t axes, int64_t numAxes,    \
                                  int64_t splitDim, int64_t concatDim) {       \
    forward("all_to_all", inRank, in, outRank, out, DTYPE, axes, numAxes,      \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *o) {           \
              sbp_all_to_all(currentComm, list, numAxes, i, o, splitDim,       \
                             concatDim);                                       \
            });                                                                \
  }                                                                            \
  void sbp_rt_broadcast_##SUFFIX(int64_t inRank, void *in, int64_t outRank,    \
                                 void *out, int64_t axes, int64_t numAxes,     \
                                 int64_t root) {                               \
    forward("broadcast", inRank, in, outRank, out, DTYPE, axes, numAxes,       \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *o) {           \
              sbp_broadcast(currentComm, list, numAxes, i, o, root);           \
            });                                                                \
  }                                                                            \
  void sbp_rt_send_##SUFFIX(int64_t inRank, void *in, int64_t axes,            \
                            int64_t numAxes, int64_t peer) {                   \
    forward("send", inRank, in, 0, nullptr, DTYPE, axes, numAxes,              \
            [&](const int64_t *list, sbp_tensor *i, sbp_tensor *) {            \
              sbp_send(currentComm, list, numAxes, i, peer);                   \
            });                                                                \
  }                                                                            \
  void sbp_rt_recv_##SUFFIX(int64_t outRank, void *out, int64_t axes,          \
                            int64_t numAxes, int64_t peer) {                   \
    forward("recv", 0, nullptr, outRank, out, DTYPE, axes, numAxes,            \
            [&](const int64_t *list, sbp_tensor *, sbp_tensor *o) {            \
              sbp_recv(currentComm, list, numAxes, o, peer);                   \
            });                                                                \
  }

SBP_PROGRAM_ENTRY_POINTS(f32, SBP_F32)
SBP_PROGRAM_ENTRY_POINTS(f64, SBP_F64)
SBP_PROGRAM_ENTRY_POINTS(i32, SBP_I32)
SBP_PROGRAM_ENTRY_POINTS(i64, SBP_I64)
SBP_PROGRAM_ENTRY_POINTS(i8, SBP_I8)
SBP_PROGRAM_ENTRY_POINTS(i1, SBP_I8)
SBP_PROGRAM_ENTRY_POINTS(f16, SBP_F16)
SBP_PROGRAM_ENTRY_POINTS(bf16, SBP_BF16)

} // extern "C"
