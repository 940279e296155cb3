#!/usr/bin/env bash
# Regenerates docs/generated/ from the TableGen descriptions with mlir-tblgen.
# The test Docs/generated-docs.test fails while they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SBP_BUILD_DIR:-build}
ninja -C "$build" mlir-doc
cp "$build"/docs/Sbp/*.md docs/generated/
echo "docs/generated/ updated from $build/docs/Sbp"
