// A transformer block written for one device: multi-head self-attention
// (4 heads of 16) and a ReLU MLP, each with a residual connection, on a
// sequence of 16 tokens of width 64.
//
// The mesh names 4 CPU ranks. The annotations shard the weights the way
// Megatron-LM does (Q, K, V and the first MLP layer by columns, the output
// projections by rows); sbp works out the layout of everything else — the
// heads end up split over the ranks — and inserts one all-reduce after
// attention and one after the MLP.
sbp.mesh @cpu4 shape = [4] axes = ["ranks"]

#x2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(h, i, j) -> (h, i)>
#x3 = affine_map<(h, i, j) -> (h, i, j)>

func.func @block(%x: tensor<16x64xf32>,
                 %wq: tensor<64x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(1)]>},
                 %wk: tensor<64x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(1)]>},
                 %wv: tensor<64x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(1)]>},
                 %wo: tensor<64x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(0)]>},
                 %w1: tensor<64x256xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(1)]>},
                 %w2: tensor<256x64xf32> {sbp.sharding = #sbp.nd<@cpu4, [S(0)]>})
    -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347e+38 : f32
  // 1 / sqrt(head size)
  %scale = arith.constant 0.25 : f32

  // Projections, one head per 16 columns.
  %e = tensor.empty() : tensor<16x64xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32>, tensor<64x64xf32>) outs(%zq : tensor<16x64xf32>) -> tensor<16x64xf32>
  %zk = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32>, tensor<64x64xf32>) outs(%zk : tensor<16x64xf32>) -> tensor<16x64xf32>
  %zv = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32>, tensor<64x64xf32>) outs(%zv : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>

  // scores[h, i, j] = q[i, h, :] . k[j, h, :]
  %es = tensor.empty() : tensor<4x16x16xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.generic {
      indexing_maps = [affine_map<(h, i, j, d) -> (i, h, d)>,
                       affine_map<(h, i, j, d) -> (j, h, d)>,
                       affine_map<(h, i, j, d) -> (h, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q3, %k3 : tensor<16x4x16xf32>, tensor<16x4x16xf32>) outs(%zs : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>

  // Softmax over j of scale * scores.
  %er = tensor.empty() : tensor<4x16xf32>
  %lo = linalg.fill ins(%lowest : f32) outs(%er : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mx = linalg.reduce ins(%s : tensor<4x16x16xf32>) outs(%lo : tensor<4x16xf32>) dimensions = [2]
    (%a: f32, %b: f32) {
      %r = arith.maximumf %a, %b : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [#x3, #row, #x3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<4x16x16xf32>, tensor<4x16xf32>) outs(%es : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %t = arith.mulf %d, %scale : f32
    %r = math.exp %t : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = linalg.reduce ins(%p : tensor<4x16x16xf32>) outs(%zr : tensor<4x16xf32>) dimensions = [2]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  %pn = linalg.generic {indexing_maps = [#x3, #row, #x3],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %sum : tensor<4x16x16xf32>, tensor<4x16xf32>) outs(%es : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %r = arith.divf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>

  // out[i, h, :] = sum_j pn[h, i, j] v[j, h, :], heads joined again.
  %eo = tensor.empty() : tensor<16x4x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x4x16xf32>) -> tensor<16x4x16xf32>
  %o3 = linalg.generic {
      indexing_maps = [affine_map<(i, h, d, j) -> (h, i, j)>,
                       affine_map<(i, h, d, j) -> (j, h, d)>,
                       affine_map<(i, h, d, j) -> (i, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%pn, %v3 : tensor<4x16x16xf32>, tensor<16x4x16xf32>) outs(%zo : tensor<16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x4x16xf32>
  %heads = tensor.collapse_shape %o3 [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %attn = linalg.matmul ins(%heads, %wo : tensor<16x64xf32>, tensor<64x64xf32>) outs(%za : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = arith.addf %x, %attn : tensor<16x64xf32>

  // MLP: relu(h W1) W2, with the residual.
  %ef = tensor.empty() : tensor<16x256xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%ef : tensor<16x256xf32>) -> tensor<16x256xf32>
  %u = linalg.matmul ins(%h, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%zf : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g = linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<16x256xf32>) outs(%ef : tensor<16x256xf32>) {
  ^bb0(%a: f32, %unused: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x256xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %d = linalg.matmul ins(%g, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%zd : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = arith.addf %h, %d : tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
