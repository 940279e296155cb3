#!/usr/bin/env bash
# The GPU checks, run on a machine with an NVIDIA GPU from what
# scripts/gpu-prepare.sh put in .gpu/ (sbp-exec and the runtime; no MLIR or
# LLVM needed there): every saved program on the cuda backend against its
# CPU reference (the harness on 1 rank and a 4-rank virtual mesh, the
# examples, the ONNX GPT), one program through NCCL, and the benchmarks
# (GEMM against cuBLAS called directly, a fused chain against HBM
# bandwidth). Logs go to $OUT (or /tmp/sbp-gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
gpu=.gpu
out=${OUT:-/tmp/sbp-gpu}
mkdir -p "$out"
libs=/tmp/sbp-gpu-libs
mkdir -p "$libs"
for deb in "$gpu"/debs/*.deb; do dpkg -x "$deb" "$libs"; done
# cuBLAS and NCCL come with the machine's Python packages or toolkit.
find_lib() {
  find /usr/local/cuda* /usr/lib /opt $(python3 -c \
    'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
    -name "$1" 2>/dev/null | head -1
}
export SBP_CUBLAS_LIBRARY=${SBP_CUBLAS_LIBRARY:-$(find_lib 'libcublas.so.13*')}
export SBP_NCCL_LIBRARY=${SBP_NCCL_LIBRARY:-$(find_lib 'libnccl.so.2*')}
export LD_LIBRARY_PATH="$PWD/$gpu/lib:$libs/usr/lib/x86_64-linux-gnu:$libs/usr/lib/x86_64-linux-gnu/openblas-pthread:$(dirname "${SBP_CUBLAS_LIBRARY:-/x}"):${LD_LIBRARY_PATH:-}"
{
  nvidia-smi -L
  echo "cuBLAS: $SBP_CUBLAS_LIBRARY"
  echo "NCCL: $SBP_NCCL_LIBRARY"
} | tee "$out/summary.txt"

passed=0 failed=0
for program in "$gpu"/programs/*/; do
  name=$(basename "$program")
  if "$gpu"/bin/sbp-exec "$program" >"$out/$name.log" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: $(tail -2 "$out/$name.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
  fi
done
echo "cuda backend: $passed programs match their reference, $failed do not" | tee -a "$out/summary.txt"
for name in example_mlp onnx_gpt; do
  grep -h "ran @\|max_rel_err" "$out/$name.log" | tee -a "$out/summary.txt"
done
# NCCL needs one GPU per rank: a 1-rank program here.
"$gpu"/bin/sbp-exec "$gpu"/programs/matmul_1 --comm nccl 2>&1 | tail -2 | tee -a "$out/summary.txt"
python3 bench/gpu/gpu_bench.py --saved "$gpu"/bench --exec "$gpu"/bin/sbp-exec \
  --peer "$gpu"/bin/sbp-bench-cublas 2>&1 | tee -a "$out/summary.txt"
