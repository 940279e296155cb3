#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds sbp and runs it on the bundled MLP
# (examples/mlp.mlir): every op's SBP signatures on the 4-rank CPU mesh, then
# the program each of the 4 ranks runs after propagation and partitioning.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh sbp-opt
build=${SBP_BUILD_DIR:-build}
echo "== SBP signatures of examples/mlp.mlir on mesh @cpu4 (4 ranks)"
"$build/bin/sbp-opt" examples/mlp.mlir --sbp-print-signatures=mesh=cpu4 \
  -o /dev/null
echo
echo "== The program each rank runs (sbp-opt --sbp-parallelize)"
"$build/bin/sbp-opt" examples/mlp.mlir --sbp-parallelize
