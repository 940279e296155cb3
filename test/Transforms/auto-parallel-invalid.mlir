// RUN: sbp-opt %s -split-input-file -verify-diagnostics --sbp-auto-parallel="cluster=dgx-a100-8 memory-limit=256KiB"

// 4 MiB of weights split 8 ways still need 512 KiB per device.
// expected-error@below {{sbp-auto-parallel: memory-limit=256KiB cannot be met: the plan needing the least memory that the search found needs 0.88 MiB per device}}
func.func @too_big(%x: tensor<64x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%z : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %e2 = tensor.empty() : tensor<64x1024xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %y2 = linalg.matmul ins(%y, %w : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%z2 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y2 : tensor<64x1024xf32>
}

// -----

// expected-error@below {{sbp-auto-parallel: the mesh has 4 devices but cluster 'dgx-a100-8' has 8}}
sbp.mesh @m shape = [4]
func.func @small_mesh(%x: tensor<8xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
