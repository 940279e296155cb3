module @jit_f attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4x6xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
}
