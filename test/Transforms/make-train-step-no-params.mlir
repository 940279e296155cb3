// RUN: sbp-opt %s --sbp-make-train-step -verify-diagnostics

// Both arguments are read along rows of the same size: batches, so there
// is nothing to train.
#id = affine_map<(i, j) -> (i, j)>
// expected-error@+1 {{sbp-make-train-step: @batches has no parameters: every float argument is a batch (dimension 0 a parallel loop of every op that reads it); name them with params= (sbp-run --params)}}
func.func @batches(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}
