// REQUIRES: cuda-toolkit
// RUN: sbp-opt %s -split-input-file --sbp-lower-gpu=format=isa | FileCheck %s

// An element-wise chain is one kernel that reads each input once, calls no
// function (libdevice is linked in: exp is ex2.approx) and writes once.
// CHECK-LABEL: llvm.func @chain
// CHECK:       llvm.call @mgpuMemAlloc
// CHECK:       gpu.launch_func @chain_kernel::@chain_kernel
// CHECK-NOT:   gpu.launch_func
// CHECK:       gpu.binary @chain_kernel
// CHECK-SAME:  .target sm_90
// CHECK-SAME:  .visible .entry chain_kernel(
// CHECK-SAME:  ld.global.b32
// CHECK-SAME:  ld.global.b32
// CHECK-SAME:  ex2.approx
// CHECK-SAME:  st.global.b32
// CHECK-NOT:   .entry
// CHECK-NOT:   .extern
func.func @chain(%x: tensor<1024x256xf32>, %y: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %s = arith.addf %x, %y : tensor<1024x256xf32>
  %e = math.exp %s : tensor<1024x256xf32>
  %m = arith.mulf %e, %x : tensor<1024x256xf32>
  return %m : tensor<1024x256xf32>
}

// -----

// Softmax: four kernels (the fills of the reductions' initial values fold
// into them), the row reductions loop inside their kernels, and nothing
// touches device memory on the host.
// CHECK-LABEL: llvm.func @softmax
// CHECK-COUNT-4: gpu.launch_func
// CHECK-NOT:   gpu.launch_func
// CHECK-NOT:   llvm.load
// CHECK:       gpu.binary @softmax_kernel
// CHECK-SAME:  max.NaN.f32
func.func @softmax(%x: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %lowest = arith.constant -3.40282347e+38 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %m0 = linalg.fill ins(%lowest : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.reduce ins(%x : tensor<64x100xf32>) outs(%m0 : tensor<64xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %r = arith.maximumf %a, %b : f32
      linalg.yield %r : f32
    }
  %e2 = tensor.empty() : tensor<64x100xf32>
  %shifted = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<64x100xf32>, tensor<64xf32>) outs(%e2 : tensor<64x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x100xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce ins(%shifted : tensor<64x100xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%shifted, %sum : tensor<64x100xf32>, tensor<64xf32>) outs(%e2 : tensor<64x100xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<64x100xf32>
  return %out : tensor<64x100xf32>
}
