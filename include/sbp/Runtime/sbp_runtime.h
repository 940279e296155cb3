/*===- sbp_runtime.h - The sbp collective runtime (C ABI) ---------*- C -*-===*
 *
 * Partitioned programs call these functions for their collectives. The
 * library has no MLIR dependency. A *world* holds the ranks of one mesh;
 * each rank talks through its own communicator. Collectives work within the
 * group of ranks that share every mesh coordinate except those of `axes`,
 * ranked in row-major order of their coordinates along `axes`, in the order
 * listed.
 *
 * Tensors are dense and row-major. Pieces of split dimensions may differ in
 * size between ranks (balanced splits): gathers read each peer's own shape.
 *
 * Every call returns SBP_OK or an error status. After an error (a peer that
 * failed, or did not arrive within the world's timeout) every later call on
 * any rank of the world fails too, and sbp_world_error() says which rank and
 * which collective caused it, so that all ranks stop and none hangs.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SBP_RUNTIME_SBP_RUNTIME_H
#define SBP_RUNTIME_SBP_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sbp_world sbp_world;
typedef struct sbp_comm sbp_comm;

typedef enum {
  SBP_OK = 0,
  SBP_ERR_TIMEOUT = 1, /* a peer did not arrive in time */
  SBP_ERR_ABORTED = 2, /* a peer failed; see sbp_world_error */
  SBP_ERR_INVALID = 3, /* bad arguments: axes, shapes, ranks */
} sbp_status;

typedef enum { SBP_SUM = 0, SBP_MAX = 1, SBP_MIN = 2 } sbp_reduction;

typedef enum {
  SBP_F32 = 0,
  SBP_F64 = 1,
  SBP_I32 = 2,
  SBP_I64 = 3,
  SBP_I8 = 4,
  SBP_F16 = 5,  /* IEEE binary16 */
  SBP_BF16 = 6, /* bfloat16 */
} sbp_dtype;

/* A dense row-major tensor. */
typedef struct {
  void *data;
  int64_t rank;
  const int64_t *shape;
  sbp_dtype dtype;
} sbp_tensor;

/* Bytes per element of `dtype`. */
int64_t sbp_dtype_size(sbp_dtype dtype);

/* A world of ranks, one per device of a mesh of `mesh_rank` axes, whose
 * threads share memory. `timeout_s` bounds every wait. */
sbp_world *sbp_threads_world_create(const int64_t *mesh_shape,
                                    int64_t mesh_rank, double timeout_s);
/* A world of one process per rank under mpirun (MPI_COMM_WORLD must have
 * one process per device of the mesh); this process runs the rank
 * MPI_Comm_rank gives. Initializes MPI when needed (and finalizes it on
 * destruction). Returns NULL and sets `*error` when the sizes differ or the
 * library was built without MPI. A failure or timeout on any rank prints
 * "sbp: rank R: OP: ..." and stops every process with exit code 3. */
sbp_world *sbp_mpi_world_create(const int64_t *mesh_shape, int64_t mesh_rank,
                                double timeout_s, const char **error);
void sbp_world_destroy(sbp_world *world);
int64_t sbp_world_size(const sbp_world *world);
/* The first error of the world ("rank 2: all_reduce: ..."), or NULL. */
const char *sbp_world_error(const sbp_world *world);
/* The rank that this process runs (MPI), or -1 when it runs every rank
 * (threads). */
int64_t sbp_world_process_rank(const sbp_world *world);

/* The communicator of rank `rank` (row-major device index), owned by the
 * world; NULL when that rank runs in another process. */
sbp_comm *sbp_world_comm(sbp_world *world, int64_t rank);
int64_t sbp_comm_rank(const sbp_comm *comm);
/* The rank's coordinate along mesh axis `axis`. */
int64_t sbp_comm_axis_index(const sbp_comm *comm, int64_t axis);
/* The number of mesh axes, and the size of mesh axis `axis`. */
int64_t sbp_comm_mesh_rank(const sbp_comm *comm);
int64_t sbp_comm_mesh_size(const sbp_comm *comm, int64_t axis);
/* Stops the world: every rank's pending and later calls fail, naming this
 * rank and `reason`. */
void sbp_comm_abort(sbp_comm *comm, const char *reason);

/* `out` (same shape as `in`) = element-wise reduction of the group's `in`. */
int sbp_all_reduce(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
                   const sbp_tensor *in, sbp_tensor *out, sbp_reduction kind);
/* `out` = the group's `in` concatenated along `dim`, in group order. */
int sbp_all_gather(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
                   const sbp_tensor *in, sbp_tensor *out, int64_t dim);
/* `out` = this rank's balanced piece along `dim` of the reduction of the
 * group's `in`. */
int sbp_reduce_scatter(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
                       const sbp_tensor *in, sbp_tensor *out, int64_t dim,
                       sbp_reduction kind);
/* Each rank splits `in` along `split_dim` in balanced pieces, piece k going
 * to group rank k, and concatenates what it receives along `concat_dim`. */
int sbp_all_to_all(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
                   const sbp_tensor *in, sbp_tensor *out, int64_t split_dim,
                   int64_t concat_dim);
/* `out` = `in` of group rank `root`. */
int sbp_broadcast(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
                  const sbp_tensor *in, sbp_tensor *out, int64_t root);
/* Sends `in` to group rank `peer`; returns once it is copied. */
int sbp_send(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
             const sbp_tensor *in, int64_t peer);
/* Receives into `out` what group rank `peer` sent, in sending order. */
int sbp_recv(sbp_comm *comm, const int64_t *axes, int64_t num_axes,
             sbp_tensor *out, int64_t peer);

#ifdef __cplusplus
}
#endif

#endif /* SBP_RUNTIME_SBP_RUNTIME_H */
