#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds sbp and runs every test: the lit
# regression tests, the gtest unit tests (run through lit) and the check that
# the generated docs are current. Ends with a line "N passed, N failed, N
# unsupported".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# The ONNX model tests need PyTorch and onnxruntime; without them (no PyPI)
# those tests report UNSUPPORTED.
bash scripts/python-venv.sh >/dev/null ||
  echo "test: no Python environment for the ONNX model tests" >&2

build=${SBP_BUILD_DIR:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ninja -C "$build" check-sbp 2>&1 | tee "$log" || status=$?

count() {
  local n
  # lit pads the names to one width when several kinds are listed.
  n=$(sed -n "s/^ *$1 *: *\([0-9]\+\).*/\1/p" "$log" | tail -n 1)
  echo "${n:-0}"
}
passed=$(count Passed)
failed=$(($(count Failed) + $(count 'Unresolved') + $(count 'Timed Out')))
if ((status != 0 && failed == 0)); then
  failed=1
fi
unsupported=$(count Unsupported)
echo "check-sbp: $passed passed, $failed failed, $unsupported unsupported" \
  "(tests that need a GPU driver, MPI or PyPI where there is none)"
exit "$status"
