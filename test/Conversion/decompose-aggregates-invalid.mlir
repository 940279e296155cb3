// RUN: sbp-opt %s --pass-pipeline="builtin.module(func.func(sbp-decompose-aggregates))" -split-input-file -verify-diagnostics

func.func @buffers(%x: memref<2x16xf32>, %y: memref<2x16xf32>) {
  // expected-error@+1 {{'linalg.softmax' op cannot be decomposed: sbp decomposes aggregated ops on tensors only}}
  linalg.softmax dimension(1) ins(%x : memref<2x16xf32>) outs(%y : memref<2x16xf32>)
  return
}
