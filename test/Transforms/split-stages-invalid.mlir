// RUN: sbp-opt %s -split-input-file --sbp-split-stages="micro-batches=4 batch-args=0" -verify-diagnostics

// expected-error @+1 {{sbp-split-stages: no stages for @nostages: give stages=K or sbp.stage on its ops}}
func.func @nostages(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}

// -----

sbp.mesh @m shape = [2]
// expected-error @+1 {{cannot pipeline @annotated: it has layout annotations (sbp.sharding, sbp.annotate), but a pipeline chooses the layouts of each stage on its own mesh}}
func.func @annotated(%x: tensor<8x4xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %h = linalg.matmul {sbp.stage = 0} ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %h : tensor<8x4xf32>
}

// -----

// expected-error @+1 {{cannot cut argument #0 of @uneven ('tensor<6x4xf32>') into 4 micro-batches: its dimension 0 is not a multiple of 4}}
func.func @uneven(%x: tensor<6x4xf32>, %w: tensor<4x4xf32>) -> tensor<6x4xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %h = linalg.matmul {sbp.stage = 0} ins(%x, %w : tensor<6x4xf32>, tensor<4x4xf32>) outs(%e : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %h : tensor<6x4xf32>
}

// -----

// The batch mean is needed whole by every row: a normalization over the
// batch cannot run one micro-batch at a time.
func.func @batchnorm(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {sbp.stage = 0, indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @+1 {{cannot cut @batchnorm into 4 micro-batches: operand #1 is needed whole over the batch ((B)) but each micro-batch has (P)}}
  %c = linalg.generic {sbp.stage = 1, indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
  } -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

func.func @backwards(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %h = linalg.matmul {sbp.stage = 1} ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-error @+1 {{stage 0 uses a value computed in stage 1; stages must follow the data flow}}
  %g = linalg.matmul {sbp.stage = 0} ins(%h, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}
