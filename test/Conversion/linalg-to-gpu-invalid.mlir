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

// -----

// A scattered output that is not a sum into itself (here a maximum)
// cannot be added atomically.
#window = affine_map<(h, kh) -> (h, kh)>
#image = affine_map<(h, kh) -> (h + kh)>
func.func @scatter_max(%dy: memref<6x3xf32>, %dx: memref<8xf32>) {
  // expected-error @+1 {{'linalg.generic' op writes output #0 from several points of its reduction loops and yields other than a sum into it; the GPU lowering adds such outputs atomically (out + term)}}
  linalg.generic {indexing_maps = [#window, #image], iterator_types = ["reduction", "reduction"]} ins(%dy : memref<6x3xf32>) outs(%dx : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}
