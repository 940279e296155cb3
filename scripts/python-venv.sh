#!/usr/bin/env bash
# Creates the Python environment of the model tests and benchmarks under the
# build folder: PyTorch (the CPU build, pinned), JAX (CPU: StableHLO exports
# and the GSPMD peer), the ONNX exporter's packages and onnxruntime, and
# Hugging Face transformers and Flax for the model zoo, from PyPI. Reruns with the same package list return at once. Prints the
# environment's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${SBP_BUILD_DIR:-build}/venv
packages="torch==2.13.0 jax==0.10.2 onnx onnxscript onnxruntime numpy transformers==5.25.0 flax==0.12.8"
if [[ -x $venv/bin/python && "$(cat "$venv/.sbp-packages" 2>/dev/null)" == "$packages" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
python3 -m venv "$venv" >&2
# pip warns about every local index folder this machine lacks; its errors
# still come through.
# shellcheck disable=SC2086
if ! "$venv/bin/python" -m pip install -q $packages 2> >(grep -v "^WARNING: Location" >&2); then
  echo "python-venv: pip install $packages failed" >&2
  exit 1
fi
echo "$packages" >"$venv/.sbp-packages"
echo "$venv/bin/python"
