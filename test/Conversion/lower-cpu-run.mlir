// A program on tensors, lowered for one CPU rank and run by the JIT.
// RUN: sbp-opt %s --sbp-lower-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// tanh(x w) with x = [[1, 2, 3], [4, 5, 6]], w = [[.1, .2], [.3, .4], [.5, .6]]:
// x w = [[2.2, 2.8], [4.9, 6.4]].
// CHECK: sizes = [2, 2]
// CHECK-NEXT: {{\[}}[0.975743, 0.992631],
// CHECK-NEXT: [0.999889, 0.999994]]
sbp.mesh @m shape = [2]
func.func @layer(%x: tensor<2x3xf32> {sbp.sharding = #sbp.nd<@m, [B]>},
                 %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x2xf32>)
                     outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %t = math.tanh %y : tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w = arith.constant dense<[[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]> : tensor<3x2xf32>
  %y = func.call @layer(%x, %w) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %u = tensor.cast %y : tensor<2x2xf32> to tensor<*xf32>
  func.call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
