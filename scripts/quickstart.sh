#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds sbp, and runs its main job on the
# bundled examples: a data-parallel MLP (examples/mlp.mlir) and a
# Megatron-style transformer block (examples/block.mlir) are partitioned
# onto 4 CPU ranks, JIT-compiled, run on the 4 ranks and compared with the
# unpartitioned program on one rank (the max_abs_err / max_rel_err lines).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh sbp-opt sbp-run
build=${SBP_BUILD_DIR:-build}
for example in examples/mlp.mlir examples/block.mlir; do
  echo "== $example"
  echo "-- collectives in the program each of the 4 ranks runs:"
  "$build/bin/sbp-opt" "$example" --sbp-parallelize |
    grep -oE 'sbp\.(all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|send|recv) .*' ||
    echo "(none: every rank works on its own rows)"
  echo "-- run on 4 ranks (threads), compared with one rank:"
  "$build/bin/sbp-run" "$example" --ranks 4 --reference --bench 10
  echo
done
