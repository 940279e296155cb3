// The adjoint of max(x w, y) as sbp-make-train-step writes it: a product
// whose consumer selects by a mask. The mask is an i1 a byte in memory, so
// the consumer must not be vectorized with the product (a vector of i1 is
// loaded as packed bits); 64x64 f32 tiles on 256- and 512-bit vectors.
func.func @masked(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %y: tensor<64x64xf32>, %g: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mask = arith.cmpf oge, %xw, %y : tensor<64x64xf32>
  %gm = arith.select %mask, %g, %f : tensor<64x64xi1>, tensor<64x64xf32>
  %gy = arith.select %mask, %f, %g : tensor<64x64xi1>, tensor<64x64xf32>
  %gx = linalg.matmul ins(%gm, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %sum = arith.addf %gy, %gx : tensor<64x64xf32>
  return %sum : tensor<64x64xf32>
}
