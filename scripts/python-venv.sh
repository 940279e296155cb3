#!/usr/bin/env bash
# Creates the Python environment of the model tests and benchmarks under the
# build folder: PyTorch (the CPU build, pinned), the ONNX exporter's
# packages and onnxruntime, from PyPI. Reruns with the same package list
# return at once. Prints the environment's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${SBP_BUILD_DIR:-build}/venv
packages="torch==2.13.0 onnx onnxscript onnxruntime numpy"
if [[ -x $venv/bin/python && "$(cat "$venv/.sbp-packages" 2>/dev/null)" == "$packages" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
python3 -m venv "$venv" >&2
# shellcheck disable=SC2086
"$venv/bin/pip" install -q $packages >&2
echo "$packages" >"$venv/.sbp-packages"
echo "$venv/bin/python"
