#!/usr/bin/env bash
# Configures (once) and builds sbp with ninja into ${SBP_BUILD_DIR:-build}.
# Extra arguments are ninja targets.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SBP_BUILD_DIR:-build}
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -Wno-dev
fi
ninja -C "$build" "$@"
