// A gain per feature (LayerNorm's, without the statistics) before a
// column-parallel product.
func.func @gain(%x: tensor<4096x256xf32>, %g: tensor<256xf32>,
                %w: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x256xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : tensor<4096x256xf32>, tensor<256xf32>) outs(%e : tensor<4096x256xf32>) {
  ^bb0(%in: f32, %gi: f32, %o: f32):
    %v = arith.mulf %in, %gi : f32
    linalg.yield %v : f32
  } -> tensor<4096x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  %y = linalg.matmul ins(%scaled, %w : tensor<4096x256xf32>, tensor<256x256xf32>) outs(%z : tensor<4096x256xf32>) -> tensor<4096x256xf32>
  return %y : tensor<4096x256xf32>
}
