//===- StagingComm.cpp - Device collectives staged through the host -------===//

#include "DeviceComm.h"

using namespace sbp::cuda;

extern "C" {

sbp_comm *sbp_cuda_staging_comm_create(sbp_comm *host) {
  return new StagingComm(host);
}

void sbp_cuda_comm_destroy(sbp_comm *comm) { delete comm; }

} // extern "C"
