// RUN: sbp-opt %s --pass-pipeline="builtin.module(func.func(sbp-unfold-convolutions))" -split-input-file | FileCheck %s
// RUN: sbp-opt %s --pass-pipeline="builtin.module(func.func(sbp-unfold-convolutions,sbp-specialize-contractions))" -split-input-file | FileCheck %s --check-prefix=PRODUCT

// A 3x3 convolution as the StableHLO importer writes it (batch, group,
// output channel, output position, input channel, window): the unit group
// loop is dropped, the image gathered over (n, oh, ow, kh, kw, ci), the
// output's loops first, then the kernel's, and the product is a plain
// matmul without transposes.
// CHECK-DAG: #[[GATHER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>
// CHECK-DAG: #[[UNFOLDED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d4, d5, d6)>
// CHECK-DAG: #[[KERNEL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv3x3
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x10x4xf32>, %[[K:.*]]: tensor<3x3x4x8xf32>, %[[INIT:.*]]: tensor<2x8x8x1x8xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0], [1], [2, 3], [4]]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8x8x3x3x4xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[GATHER]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x10x10x4xf32>) outs(%[[E]] :
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[UNFOLDED]], #[[KERNEL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[G]], %[[K]] : tensor<2x8x8x3x3x4xf32>, tensor<3x3x4x8xf32>) outs(%[[C]] : tensor<2x8x8x8xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 8, 8, 1, 8]
// PRODUCT-LABEL: func.func @conv3x3
// PRODUCT-NOT: linalg.transpose
// PRODUCT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<128x36xf32>, tensor<36x8xf32>) outs(%{{.*}} : tensor<128x8xf32>)
// PRODUCT-NOT: linalg.transpose
#img = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh + kh, ow + kw, ci)>
#ker = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (kh, kw, ci, co)>
#out = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh, ow, g, co)>
func.func @conv3x3(%x: tensor<2x10x10x4xf32>, %k: tensor<3x3x4x8xf32>, %init: tensor<2x8x8x1x8xf32>) -> tensor<2x8x8x1x8xf32> {
  %r = linalg.generic {indexing_maps = [#img, #ker, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %k : tensor<2x10x10x4xf32>, tensor<3x3x4x8xf32>) outs(%init : tensor<2x8x8x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x1x8xf32>
  return %r : tensor<2x8x8x1x8xf32>
}

// -----

// A 1x1 convolution of stride 1 on a batch of one: once its unit loops are
// dropped it reads the image directly, and nothing is gathered.
// CHECK-LABEL: func.func @conv1x1
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x8x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<8x8x8xf32>)
// PRODUCT-LABEL: func.func @conv1x1
// PRODUCT-NOT: linalg.transpose
// PRODUCT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<64x8xf32>)
#img = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh + kh, ow + kw, ci)>
#ker = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (kh, kw, ci, co)>
#out = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh, ow, g, co)>
func.func @conv1x1(%x: tensor<1x8x8x4xf32>, %k: tensor<1x1x4x8xf32>, %init: tensor<1x8x8x1x8xf32>) -> tensor<1x8x8x1x8xf32> {
  %r = linalg.generic {indexing_maps = [#img, #ker, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %k : tensor<1x8x8x4xf32>, tensor<1x1x4x8xf32>) outs(%init : tensor<1x8x8x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x1x8xf32>
  return %r : tensor<1x8x8x1x8xf32>
}

// -----

// A 1x1 convolution of stride 2 gathers every other position.
// CHECK-DAG: #[[STRIDED:.*]] = affine_map<(d0, d1, d2) -> (d0 * 2, d1 * 2, d2)>
// CHECK-LABEL: func.func @strided
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[STRIDED]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<4x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[G]], %{{.*}} : tensor<4x4x4xf32>, tensor<4x8xf32>)
// PRODUCT-LABEL: func.func @strided
// PRODUCT-NOT: linalg.transpose
// PRODUCT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
#img = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh * 2 + kh, ow * 2 + kw, ci)>
#ker = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (kh, kw, ci, co)>
#out = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh, ow, g, co)>
func.func @strided(%x: tensor<1x8x8x4xf32>, %k: tensor<1x1x4x8xf32>, %init: tensor<1x4x4x1x8xf32>) -> tensor<1x4x4x1x8xf32> {
  %r = linalg.generic {indexing_maps = [#img, #ker, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %k : tensor<1x8x8x4xf32>, tensor<1x1x4x8xf32>) outs(%init : tensor<1x4x4x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x1x8xf32>
  return %r : tensor<1x4x4x1x8xf32>
}

// -----

// The image's gradient, written at h + kh: the products over (n, h, w, kh,
// kw, c) from zero, then added into the output, summed over the window and
// position loops.
// CHECK-DAG: #[[SCATTER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>
// CHECK-LABEL: func.func @image_gradient
// CHECK-SAME: %[[INIT:[^:]*]]: tensor<2x8x8x2xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x6x6x3x3x2xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] :
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} {{.*}} outs(%[[F]] : tensor<2x6x6x3x3x2xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCATTER]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel"]} ins(%[[P]] : tensor<2x6x6x3x3x2xf32>) outs(%[[INIT]] : tensor<2x8x8x2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// PRODUCT-LABEL: func.func @image_gradient
// PRODUCT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<72x3xf32>, tensor<3x18xf32>) outs(%{{.*}} : tensor<72x18xf32>)
#dy = affine_map<(n, h, w, c, kh, kw, co) -> (n, h, w, co)>
#ker = affine_map<(n, h, w, c, kh, kw, co) -> (kh, kw, c, co)>
#dx = affine_map<(n, h, w, c, kh, kw, co) -> (n, h + kh, w + kw, c)>
func.func @image_gradient(%dy: tensor<2x6x6x3xf32>, %k: tensor<3x3x2x3xf32>, %init: tensor<2x8x8x2xf32>) -> tensor<2x8x8x2xf32> {
  %r = linalg.generic {indexing_maps = [#dy, #ker, #dx], iterator_types = ["parallel", "reduction", "reduction", "parallel", "reduction", "reduction", "reduction"]} ins(%dy, %k : tensor<2x6x6x3xf32>, tensor<3x3x2x3xf32>) outs(%init : tensor<2x8x8x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x2xf32>
  return %r : tensor<2x8x8x2xf32>
}

// -----

// The kernel's gradient reads the image at h * 2 + kh: it is gathered over
// (kh, kw, c, n, h, w), the output's loops first.
// CHECK-LABEL: func.func @kernel_gradient
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x3x2x2x4x4xf32>)
// PRODUCT-LABEL: func.func @kernel_gradient
// PRODUCT-NOT: linalg.transpose
// PRODUCT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<18x32xf32>, tensor<32x3xf32>) outs(%{{.*}} : tensor<18x3xf32>)
#img = affine_map<(kh, kw, c, co, n, h, w) -> (n, h * 2 + kh, w * 2 + kw, c)>
#dy = affine_map<(kh, kw, c, co, n, h, w) -> (n, h, w, co)>
#dk = affine_map<(kh, kw, c, co, n, h, w) -> (kh, kw, c, co)>
func.func @kernel_gradient(%x: tensor<2x9x9x2xf32>, %dy: tensor<2x4x4x3xf32>, %init: tensor<3x3x2x3xf32>) -> tensor<3x3x2x3xf32> {
  %r = linalg.generic {indexing_maps = [#img, #dy, #dk], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dy : tensor<2x9x9x2xf32>, tensor<2x4x4x3xf32>) outs(%init : tensor<3x3x2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x3x2x3xf32>
  return %r : tensor<3x3x2x3xf32>
}

// -----

// Two feature groups read the image's channel at g * 3 + ci and the
// kernel's at g * 2 + co: both are gathered, and the group loop becomes a
// batch of products.
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x4x6xf32>) outs(%{{.*}} : tensor<2x2x2x2x2x2x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2x3x4xf32>) outs(%{{.*}} : tensor<2x2x2x2x3xf32>)
// PRODUCT-LABEL: func.func @grouped
// PRODUCT: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x12xf32>, tensor<2x12x2xf32>) outs(%{{.*}} : tensor<2x8x2xf32>)
#img = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh + kh * 2, ow + kw * 2, g * 3 + ci)>
#ker = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (kh, kw, ci, g * 2 + co)>
#out = affine_map<(n, g, co, oh, ow, ci, kh, kw) -> (n, oh, ow, g, co)>
func.func @grouped(%x: tensor<2x4x4x6xf32>, %k: tensor<2x2x3x4xf32>, %init: tensor<2x2x2x2x2xf32>) -> tensor<2x2x2x2x2xf32> {
  %r = linalg.generic {indexing_maps = [#img, #ker, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %k : tensor<2x4x4x6xf32>, tensor<2x2x3x4xf32>) outs(%init : tensor<2x2x2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2x2x2x2xf32>
  return %r : tensor<2x2x2x2x2xf32>
}

// -----

// A maximum over a window (pooling), a product through a map that is no
// window position (floordiv), and dynamic sizes are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.empty
// PRODUCT-LABEL: func.func @left_alone
// PRODUCT-NOT: linalg.matmul
#win = affine_map<(i, j, k) -> (i + k, j)>
#window = affine_map<(i, j, k) -> (k)>
#win_out = affine_map<(i, j, k) -> (i, j)>
#div = affine_map<(i, j, k) -> (i floordiv 2, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#dyn = affine_map<(i, j, k) -> (i + k, k)>
func.func @left_alone(%x: tensor<10x4xf32>, %w: tensor<3x4xf32>, %init: tensor<8x4xf32>, %d: tensor<?x3xf32>, %dinit: tensor<?x4xf32>, %window: tensor<3xf32>, %xd: tensor<4x3xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<?x4xf32>) {
  %max = linalg.generic {indexing_maps = [#win, #window, #win_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %window : tensor<10x4xf32>, tensor<3xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %div = linalg.generic {indexing_maps = [#div, #rhs, #win_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xd, %w : tensor<4x3xf32>, tensor<3x4xf32>) outs(%init : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %dyn = linalg.generic {indexing_maps = [#dyn, #rhs, #win_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%d, %w : tensor<?x3xf32>, tensor<3x4xf32>) outs(%dinit : tensor<?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %max, %div, %dyn : tensor<8x4xf32>, tensor<8x4xf32>, tensor<?x4xf32>
}
