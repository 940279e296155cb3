// RUN: sbp-opt %s -split-input-file --sbp-gpu-buffers -verify-diagnostics

func.func @stack() {
  // expected-error @+1 {{'memref.alloca' op allocates on the host stack; the GPU lowering keeps buffers in device memory}}
  %a = memref.alloca() : memref<4xf32>
  return
}

// -----

func.func @static_strides(%src: memref<4x4xf32, strided<[8, 1]>>) -> memref<4x4xf32, strided<[8, 1]>> {
  // expected-error @+1 {{'bufferization.clone' op clones into layout strided<[8, 1]>, which a fresh dense buffer cannot take}}
  %c = bufferization.clone %src : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, strided<[8, 1]>>
  return %c : memref<4x4xf32, strided<[8, 1]>>
}
