#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing sbp need. Reruns
# only query dpkg, so they take well under a second.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev
  libgtest-dev libopenblas-dev libmpich-dev mpich
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  nlohmann-json3-dev coinor-libcbc-dev
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=()
if [[ $(id -u) != 0 ]]; then
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
  --no-install-recommends "${missing[@]}"
