// A two-layer MLP written for one device: y = relu(x W1 + b1) W2.
// The mesh names the 4 CPU ranks it will be spread over; the one
// annotation asks for the batch to be split (data parallelism), and sbp
// works out the layout of everything else.
sbp.mesh @cpu4 shape = [4] axes = ["ranks"]

#map_id = affine_map<(i, j) -> (i, j)>
#map_col = affine_map<(i, j) -> (j)>

func.func @mlp(%x: tensor<32x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(0)]>}, %w1: tensor<64x128xf32>,
               %b1: tensor<128xf32>, %w2: tensor<128x16xf32>)
    -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x128xf32>)
                     outs(%f1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %hb = linalg.generic {indexing_maps = [#map_id, #map_col, #map_id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<32x128xf32>, tensor<128xf32>) outs(%e1 : tensor<32x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32x128xf32>
  %r = linalg.generic {indexing_maps = [#map_id, #map_id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%hb : tensor<32x128xf32>) outs(%e1 : tensor<32x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<32x128xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<32x128xf32>, tensor<128x16xf32>)
                     outs(%f2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
