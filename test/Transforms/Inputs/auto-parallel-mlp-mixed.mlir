#id = affine_map<(i, j) -> (i, j)>
func.func @mlp(%x: tensor<4096x256xbf16>, %w1: tensor<256x256xf32>, %w2: tensor<256x256xf32>) -> tensor<4096x256xbf16> {
  %zero = arith.constant 0.0 : bf16
  %ew1 = tensor.empty() : tensor<256x256xbf16>
  %c1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w1 : tensor<256x256xf32>) outs(%ew1 : tensor<256x256xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<256x256xbf16>
  %e = tensor.empty() : tensor<4096x256xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4096x256xbf16>) -> tensor<4096x256xbf16>
  %h = linalg.matmul ins(%x, %c1 : tensor<4096x256xbf16>, tensor<256x256xbf16>) outs(%z : tensor<4096x256xbf16>) -> tensor<4096x256xbf16>
  %ew2 = tensor.empty() : tensor<256x256xbf16>
  %c2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w2 : tensor<256x256xf32>) outs(%ew2 : tensor<256x256xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<256x256xbf16>
  %y = linalg.matmul ins(%h, %c2 : tensor<4096x256xbf16>, tensor<256x256xbf16>) outs(%z : tensor<4096x256xbf16>) -> tensor<4096x256xbf16>
  return %y : tensor<4096x256xbf16>
}
