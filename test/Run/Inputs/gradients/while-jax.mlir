// As JAX exports it (x64), from
//   h = lax.fori_loop(0, n, lambda i, h: jnp.tanh(h @ w[i % 2]) + 0.5 * h, x)
//   h, _ = lax.while_loop(lambda s: jnp.sum(s[0] * s[0]) > 1.0,
//                         lambda s: (s[0] * 0.5, s[1] + 1), (h, 0))
//   return jnp.sum(jnp.sin(h))
// with w = %arg0, x = %arg1, n = %arg2: two loops whose trip counts are
// known only at run time, one to a traced bound, one on data.
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf64>, %arg1: tensor<3x4xf64>, %arg2: tensor<i32>) -> (tensor<f64> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c, %iterArg_2 = %arg2, %iterArg_3 = %arg1) : tensor<2x4x4xf64>, tensor<i32>, tensor<i32>, tensor<3x4xf64>
    cond {
      %4 = stablehlo.compare LT, %iterArg_1, %iterArg_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg_1, %c_4 : tensor<i32>
      %c_5 = stablehlo.constant dense<2> : tensor<i64>
      %5 = func.call @remainder(%iterArg_1, %c_5) : (tensor<i32>, tensor<i64>) -> tensor<i32>
      %c_6 = stablehlo.constant dense<0> : tensor<i32>
      %6 = stablehlo.compare LT, %5, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_7 = stablehlo.constant dense<2> : tensor<i32>
      %7 = stablehlo.add %5, %c_7 : tensor<i32>
      %8 = stablehlo.select %6, %7, %5 : tensor<i1>, tensor<i32>
      %c_8 = stablehlo.constant dense<0> : tensor<i32>
      %c_9 = stablehlo.constant dense<0> : tensor<i32>
      %9 = stablehlo.compare LT, %c_8, %c_9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_10 = stablehlo.constant dense<0> : tensor<i32>
      %c_11 = stablehlo.constant dense<4> : tensor<i32>
      %10 = stablehlo.add %c_10, %c_11 : tensor<i32>
      %c_12 = stablehlo.constant dense<0> : tensor<i32>
      %11 = stablehlo.select %9, %10, %c_12 : tensor<i1>, tensor<i32>
      %c_13 = stablehlo.constant dense<0> : tensor<i32>
      %c_14 = stablehlo.constant dense<0> : tensor<i32>
      %12 = stablehlo.compare LT, %c_13, %c_14, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_15 = stablehlo.constant dense<0> : tensor<i32>
      %c_16 = stablehlo.constant dense<4> : tensor<i32>
      %13 = stablehlo.add %c_15, %c_16 : tensor<i32>
      %c_17 = stablehlo.constant dense<0> : tensor<i32>
      %14 = stablehlo.select %12, %13, %c_17 : tensor<i1>, tensor<i32>
      %15 = stablehlo.dynamic_slice %iterArg, %8, %11, %14, sizes = [1, 4, 4] : (tensor<2x4x4xf64>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x4xf64>
      %16 = stablehlo.reshape %15 : (tensor<1x4x4xf64>) -> tensor<4x4xf64>
      %17 = stablehlo.dot_general %iterArg_3, %16, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x4xf64>, tensor<4x4xf64>) -> tensor<3x4xf64>
      %18 = stablehlo.tanh %17 : tensor<3x4xf64>
      %cst_18 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
      %19 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f64>) -> tensor<3x4xf64>
      %20 = stablehlo.multiply %19, %iterArg_3 : tensor<3x4xf64>
      %21 = stablehlo.add %18, %20 : tensor<3x4xf64>
      stablehlo.return %iterArg, %4, %iterArg_2, %21 : tensor<2x4x4xf64>, tensor<i32>, tensor<i32>, tensor<3x4xf64>
    }
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%iterArg = %0#3, %iterArg_1 = %c_0) : tensor<3x4xf64>, tensor<i32>
    cond {
      %4 = stablehlo.multiply %iterArg, %iterArg : tensor<3x4xf64>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %5 = stablehlo.reduce(%4 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x4xf64>, tensor<f64>) -> tensor<f64>
      %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
      %6 = stablehlo.compare GT, %5, %cst_3, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
      %4 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f64>) -> tensor<3x4xf64>
      %5 = stablehlo.multiply %iterArg, %4 : tensor<3x4xf64>
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_1, %c_3 : tensor<i32>
      stablehlo.return %5, %6 : tensor<3x4xf64>, tensor<i32>
    }
    %2 = stablehlo.sine %1#0 : tensor<3x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x4xf64>, tensor<f64>) -> tensor<f64>
    return %3 : tensor<f64>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i64>) -> tensor<i32> {
    %0 = stablehlo.convert %arg1 : (tensor<i64>) -> tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.remainder %arg0, %2 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare NE, %3, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %3, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.compare NE, %5, %6, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %8 = stablehlo.and %7, %4 : tensor<i1>
    %9 = stablehlo.add %3, %2 : tensor<i32>
    %10 = stablehlo.select %8, %9, %3 : tensor<i1>, tensor<i32>
    return %10 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}

