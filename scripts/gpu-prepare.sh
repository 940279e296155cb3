#!/usr/bin/env bash
# Prepares .gpu/, everything scripts/gpu-check.sh needs on a GPU machine
# that has neither MLIR nor LLVM (nor sbp's build dependencies): run it
# here, where the compiler is, with no GPU needed.
#
#   .gpu/bin       sbp-exec and sbp-bench-cublas, built without MPI
#   .gpu/lib       libsbp_runtime.so and libsbp_runtime_cuda.so
#   .gpu/debs      OpenBLAS and gfortran (Debian packages, unpacked there)
#   .gpu/programs  the correctness harness (1 rank and a 4-rank virtual
#                  mesh), the examples, the ONNX GPT and training steps,
#                  compiled for the cuda backend with their CPU reference
#                  results
#   .gpu/bench     the GEMM and element-wise benchmarks, without inputs
#
# Then, on the GPU machine: bash scripts/gpu-check.sh (carry .gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=.gpu
rm -rf "$gpu" && mkdir -p "$gpu"/{bin,lib,debs,programs,bench}

bash scripts/build.sh sbp-opt sbp-run
# The runtime that travels links no MPI (the GPU image has none).
device=${SBP_DEVICE_BUILD_DIR:-build-device}
if [[ ! -f $device/build.ninja ]]; then
  cmake -G Ninja -S . -B "$device" -DCMAKE_BUILD_TYPE=Release -Wno-dev \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
fi
ninja -C "$device" sbp-exec sbp-bench-cublas
cp "$device"/bin/sbp-exec "$device"/bin/sbp-bench-cublas "$gpu"/bin/
cp "$device"/lib/libsbp_runtime.so "$device"/lib/libsbp_runtime_cuda.so "$gpu"/lib/
(cd "$gpu"/debs && apt-get download libopenblas0-pthread libgfortran5 \
  libquadmath0 2>/dev/null)

run=build/bin/sbp-run
python3 test/Run/harness.py --opt build/bin/sbp-opt --run "$run" \
  --workdir "$(mktemp -d)" --meshes 1,4 --run-flags="--backend cuda" \
  --save "$gpu"/programs
"$run" examples/mlp.mlir --backend cuda --save-program "$gpu"/programs/example_mlp --reference
"$run" examples/block.mlir --backend cuda --save-program "$gpu"/programs/example_block --reference --seed 3
"$run" ../shared/testdata/onnx/gpt_none_op17_static.onnx --ranks 4 --auto \
  --backend cuda --save-program "$gpu"/programs/onnx_gpt --reference
# Training steps: sbp-exec runs the steps and compares the loss curve and
# the final parameters and state with one CPU rank's.
gpt=$(mktemp --suffix=.mlir)
python3 bench/search/gen_gpt.py --hidden 32 --heads 4 --batch 8 --seq 8 \
  --layers 2 -o "$gpt"
"$run" "$gpt" --train --steps 10 --ranks 4 --auto --backend cuda \
  --save-program "$gpu"/programs/train_gpt --reference
"$run" test/Run/Inputs/gradients/conv.mlir --train --steps 5 --ranks 2 --auto \
  --backend cuda --save-program "$gpu"/programs/train_conv --reference
"$run" test/Run/Inputs/gradients/while.mlir --train --steps 5 --backend cuda \
  --save-program "$gpu"/programs/train_while --reference
"$run" ../shared/testdata/onnx/gpt_none_op17_static.onnx --train --steps 10 \
  --ranks 4 --auto --backend cuda --save-program "$gpu"/programs/train_onnx_gpt \
  --reference
python3 bench/gpu/gpu_bench.py --run "$run" --save "$gpu"/bench
du -sh "$gpu"
