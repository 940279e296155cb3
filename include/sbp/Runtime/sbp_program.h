/*===- sbp_program.h - What compiled programs call (C ABI) --------*- C -*-===*
 *
 * `--sbp-lower-cpu` turns every sbp collective into a call of one of these
 * functions. Tensors arrive as MLIR passes unranked memrefs: a rank and a
 * pointer to the descriptor {allocated, aligned, offset, sizes[rank],
 * strides[rank]}. Mesh axes arrive packed in one integer, axis i in bits
 * [8i, 8i + 8), with their count.
 *
 * The collectives run on the calling thread's current communicator, which
 * the host (sbp-run) sets with sbp_program_set_comm before it calls the
 * program. A failing collective leaves its output unspecified and the world
 * stopped; the host reads sbp_world_error when the program returns.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SBP_RUNTIME_SBP_PROGRAM_H
#define SBP_RUNTIME_SBP_PROGRAM_H

#include "sbp/Runtime/sbp_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The communicator that this thread's program calls use. */
void sbp_program_set_comm(sbp_comm *comm);
sbp_comm *sbp_program_get_comm(void);

/* Tracing: while enabled, every collective of this thread is recorded as a
 * span of wall-clock time (microseconds since the first event of the
 * process). */
typedef struct {
  const char *name;
  double begin_us;
  double end_us;
} sbp_span;
void sbp_program_trace(int enable);
/* Moves this thread's spans out: returns how many were written to `spans`
 * (at most `capacity`) and forgets them all. */
int64_t sbp_program_take_spans(sbp_span *spans, int64_t capacity);
/* Microseconds on the clock that spans use. */
double sbp_program_now_us(void);

/* The coordinate of this thread's rank along mesh axis `axis`. */
int64_t sbp_rt_axis_index(int64_t axis);
/* The sum of `value` over the group of `axes`. */
int64_t sbp_rt_group_sum(int64_t value, int64_t axes, int64_t num_axes);
/* This rank's piece of a balanced split of `size` over the group. */
int64_t sbp_rt_piece_size(int64_t size, int64_t axes, int64_t num_axes);

/* The collectives, one set per element type: sbp_rt_<op>_<type> with
 * <type> one of f32, f64, i32, i64, i8 and i1 (moved as bytes), e.g.
 *   void sbp_rt_all_reduce_f32(int64_t in_rank, void *in, int64_t out_rank,
 *                              void *out, int64_t axes, int64_t num_axes,
 *                              int64_t kind);
 * Each forwards to the sbp_<op> of sbp_runtime.h with the same attributes:
 *   all_reduce:     (in, out, axes, num_axes, kind)
 *   all_gather:     (in, out, axes, num_axes, dim)
 *   reduce_scatter: (in, out, axes, num_axes, dim, kind)
 *   all_to_all:     (in, out, axes, num_axes, split_dim, concat_dim)
 *   broadcast:      (in, out, axes, num_axes, root)
 *   send:           (in, axes, num_axes, peer)
 *   recv:           (out, axes, num_axes, peer)
 * where each tensor is an unranked memref (a rank and a descriptor). */

/* `out` = `c` + `a` * `b` for row-major matrices (`a` * `b` when
 * `accumulate` is 0, without reading `c`), through OpenBLAS
 * (single-threaded). */
void sbp_rt_matmul_f32(int64_t a_rank, void *a, int64_t b_rank, void *b,
                       int64_t c_rank, void *c, int64_t out_rank, void *out,
                       int64_t accumulate);
void sbp_rt_matmul_f64(int64_t a_rank, void *a, int64_t b_rank, void *b,
                       int64_t c_rank, void *c, int64_t out_rank, void *out,
                       int64_t accumulate);

#ifdef __cplusplus
}
#endif

#endif /* SBP_RUNTIME_SBP_PROGRAM_H */
