// StableHLO scatters that add, take the max and set (JAX's x.at[i].add(g),
// x.at[i].max(h), x.at[i].set(g)), which import as reductions over the
// updates: combine(out, select(match, update, identity)), and for the set
// select(match, update, out), the last update to an element kept.
module {
  func.func @main(%x: tensor<6x3xf64>, %i: tensor<5x1xi32>, %g: tensor<5x3xf64>, %h: tensor<5x3xf64>) -> tensor<6x3xf64> {
    %a = "stablehlo.scatter"(%x, %i, %g) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%p: tensor<f64>, %q: tensor<f64>):
      %s = stablehlo.add %p, %q : tensor<f64>
      stablehlo.return %s : tensor<f64>
    }) : (tensor<6x3xf64>, tensor<5x1xi32>, tensor<5x3xf64>) -> tensor<6x3xf64>
    %b = "stablehlo.scatter"(%x, %i, %h) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%p: tensor<f64>, %q: tensor<f64>):
      %m = stablehlo.maximum %p, %q : tensor<f64>
      stablehlo.return %m : tensor<f64>
    }) : (tensor<6x3xf64>, tensor<5x1xi32>, tensor<5x3xf64>) -> tensor<6x3xf64>
    %c = "stablehlo.scatter"(%x, %i, %g) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%p: tensor<f64>, %q: tensor<f64>):
      stablehlo.return %q : tensor<f64>
    }) : (tensor<6x3xf64>, tensor<5x1xi32>, tensor<5x3xf64>) -> tensor<6x3xf64>
    %t = stablehlo.tanh %a : tensor<6x3xf64>
    %y = stablehlo.multiply %t, %b : tensor<6x3xf64>
    %s = stablehlo.sine %c : tensor<6x3xf64>
    %z = stablehlo.add %y, %s : tensor<6x3xf64>
    return %z : tensor<6x3xf64>
  }
}
