#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds sbp, and runs its main job on the
# bundled examples: the auto-parallel search plans an MLP
# (examples/mlp.mlir) and a transformer block (examples/block.mlir) for 4
# CPU ranks, the plans are partitioned, JIT-compiled, run on the 4 ranks
# and compared with the unpartitioned program on one rank (the
# max_abs_err / max_rel_err lines). The examples' own annotations are
# dropped first: the search decides alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh sbp-opt sbp-run
build=${SBP_BUILD_DIR:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for example in examples/mlp.mlir examples/block.mlir; do
  echo "== $example"
  plain="$work/$(basename "$example")"
  "$build/bin/sbp-opt" "$example" --sbp-strip -o "$plain"
  echo "-- the search's plan for 4 ranks (predicted by the cpu-local model):"
  "$build/bin/sbp-opt" "$plain" \
    --sbp-auto-parallel="mesh=4 report=$work/report.md" --sbp-parallelize |
    grep -oE 'sbp\.(all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|send|recv) .*' ||
    echo "(no collectives: every rank works on its own rows)"
  sed -n '/| strategy/,/^$/p' "$work/report.md"
  echo "-- run on 4 ranks (threads), compared with one rank:"
  "$build/bin/sbp-run" "$plain" --auto --ranks 4 --reference --bench 10
  echo
done
