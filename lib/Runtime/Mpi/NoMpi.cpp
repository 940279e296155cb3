//===- NoMpi.cpp - The MPI backend of a runtime built without MPI ---------===//

#include "sbp/Runtime/sbp_runtime.h"

extern "C" sbp_world *sbp_mpi_world_create(const int64_t *, int64_t, double,
                                           const char **error) {
  if (error)
    *error = "this runtime was built without MPI (install libmpich-dev)";
  return nullptr;
}
