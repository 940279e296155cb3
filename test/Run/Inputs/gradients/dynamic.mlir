// As JAX exports it (x64): a scan over stacked weights that stacks a row sum
// per layer (a while writing with dynamic_update_slice), a slice and an
// update at the run-time index %arg2 (clamped), a sort, and top_k.
module {
  func.func public @main(%arg0: tensor<3x4x4xf64>, %arg1: tensor<4x4xf64>, %arg2: tensor<i32>) -> (tensor<f64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<3x4xf64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1:4 = stablehlo.while(%iterArg = %arg0, %iterArg_19 = %c, %iterArg_20 = %arg1, %iterArg_21 = %0) : tensor<3x4x4xf64>, tensor<i64>, tensor<4x4xf64>, tensor<3x4xf64>
    cond {
      %c_22 = stablehlo.constant dense<3> : tensor<i64>
      %30 = stablehlo.compare LT, %iterArg_19, %c_22, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %30 : tensor<i1>
    } do {
      %30 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_19) : (tensor<3x4x4xf64>, tensor<i64>) -> tensor<4x4xf64>
      %31:2 = func.call @closed_call(%iterArg_20, %30) : (tensor<4x4xf64>, tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>)
      %32 = func.call @dynamic_update_index_in_dim(%iterArg_21, %31#1, %iterArg_19) : (tensor<3x4xf64>, tensor<4xf64>, tensor<i64>) -> tensor<3x4xf64>
      %c_22 = stablehlo.constant dense<1> : tensor<i64>
      %33 = stablehlo.add %iterArg_19, %c_22 : tensor<i64>
      stablehlo.return %iterArg, %33, %31#0, %32 : tensor<3x4x4xf64>, tensor<i64>, tensor<4x4xf64>, tensor<3x4xf64>
    }
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.compare LT, %arg2, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %3 = stablehlo.add %arg2, %c_1 : tensor<i32>
    %4 = stablehlo.select %2, %3, %arg2 : tensor<i1>, tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %c_2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %c_5 = stablehlo.constant dense<4> : tensor<i32>
    %6 = stablehlo.add %c_4, %c_5 : tensor<i32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.select %5, %6, %c_6 : tensor<i1>, tensor<i32>
    %8 = stablehlo.dynamic_slice %1#2, %4, %7, sizes = [1, 4] : (tensor<4x4xf64>, tensor<i32>, tensor<i32>) -> tensor<1x4xf64>
    %cst_7 = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %9 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f64>) -> tensor<1x4xf64>
    %10 = stablehlo.multiply %8, %9 : tensor<1x4xf64>
    %c_8 = stablehlo.constant dense<1> : tensor<i32>
    %11 = stablehlo.subtract %arg2, %c_8 : tensor<i32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %12 = stablehlo.compare LT, %11, %c_9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_10 = stablehlo.constant dense<4> : tensor<i32>
    %13 = stablehlo.add %11, %c_10 : tensor<i32>
    %14 = stablehlo.select %12, %13, %11 : tensor<i1>, tensor<i32>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %c_12 = stablehlo.constant dense<0> : tensor<i32>
    %15 = stablehlo.compare LT, %c_11, %c_12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %c_14 = stablehlo.constant dense<4> : tensor<i32>
    %16 = stablehlo.add %c_13, %c_14 : tensor<i32>
    %c_15 = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.select %15, %16, %c_15 : tensor<i1>, tensor<i32>
    %18 = stablehlo.dynamic_update_slice %1#2, %10, %14, %17 : (tensor<4x4xf64>, tensor<1x4xf64>, tensor<i32>, tensor<i32>) -> tensor<4x4xf64>
    %19 = call @sort(%18) : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %values, %indices = chlo.top_k(%1#3, k = 2) : tensor<3x4xf64> -> (tensor<3x2xf64>, tensor<3x2xi32>)
    %20 = stablehlo.iota dim = 0 : tensor<4xf64>
    %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %21 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %22 = stablehlo.add %21, %20 : tensor<4xf64>
    %23 = stablehlo.broadcast_in_dim %22, dims = [1] : (tensor<4xf64>) -> tensor<1x4xf64>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<1x4xf64>) -> tensor<4x4xf64>
    %25 = stablehlo.multiply %19, %24 : tensor<4x4xf64>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %26 = stablehlo.reduce(%25 init: %cst_17) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<f64>
    %27 = stablehlo.multiply %values, %values : tensor<3x2xf64>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %28 = stablehlo.reduce(%27 init: %cst_18) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x2xf64>, tensor<f64>) -> tensor<f64>
    %29 = stablehlo.add %26, %28 : tensor<f64>
    return %29 : tensor<f64>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<3x4x4xf64>, %arg1: tensor<i64>) -> tensor<4x4xf64> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 4, 4] : (tensor<3x4x4xf64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x4x4xf64>
    %1 = stablehlo.reshape %0 : (tensor<1x4x4xf64>) -> tensor<4x4xf64>
    return %1 : tensor<4x4xf64>
  }
  func.func private @closed_call(%arg0: tensor<4x4xf64>, %arg1: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %1 = stablehlo.tanh %0 : tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
    return %1, %2 : tensor<4x4xf64>, tensor<4xf64>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<3x4xf64>, %arg1: tensor<4xf64>, %arg2: tensor<i64>) -> tensor<3x4xf64> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf64>) -> tensor<1x4xf64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<3x4xf64>, tensor<1x4xf64>, tensor<i64>, tensor<i64>) -> tensor<3x4xf64>
    return %1 : tensor<3x4xf64>
  }
  func.func private @sort(%arg0: tensor<4x4xf64>) -> tensor<4x4xf64> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f64>, %arg2: tensor<f64>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f64>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f64>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f64>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f64>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f64>, tensor<f64>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<4x4xf64>) -> tensor<4x4xf64>
    return %0 : tensor<4x4xf64>
  }
}

