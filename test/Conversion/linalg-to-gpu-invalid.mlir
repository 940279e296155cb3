// RUN: sbp-opt %s -split-input-file --sbp-linalg-to-gpu -verify-diagnostics
// RUN: %expect-exit 1 sbp-opt %s --sbp-linalg-to-gpu=block-size=2048 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: sbp-linalg-to-gpu: block-size must be in [1, 1024], not 2048

// Buffers live in device memory: reading one into host control flow is
// an error, not a crash at run time.
func.func @host_read(%flag: memref<i1>, %x: memref<4xf32>) {
  // expected-error @+1 {{'memref.load' op accesses a buffer on the host; the GPU lowering keeps every tensor in device memory}}
  %b = memref.load %flag[] : memref<i1>
  scf.if %b {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%x : memref<4xf32>)
  }
  return
}
