// Every error of the StableHLO importer, at the op it concerns.
// RUN: sbp-opt --split-input-file --verify-diagnostics --sbp-import-stablehlo %s

func.func @custom_call(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom call @my_kernel is not supported}}
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{expected a tensor of static shape, got 'tensor<?xf32>'}}
  %0 = stablehlo.add %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @shape_mismatch(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand of shape 'tensor<3xf32>' does not match the result 'tensor<4xf32>'}}
  %0 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dynamic_slice_size(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<5xf32> {
  // expected-error @+1 {{expected 1 start indices and sizes within the operand's}}
  %0 = stablehlo.dynamic_slice %a, %i, sizes = [5] : (tensor<4xf32>, tensor<i32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @dynamic_update_slice_size(%a: tensor<4xf32>, %u: tensor<2x2xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 1 start indices and sizes within the operand's}}
  %0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<2x2xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @case_index(%a: tensor<4xf32>, %i: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{a case on a run-time index needs a scalar integer index and tensor results}}
  %0 = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<4xf32>
  }) : (tensor<2xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @mixed_precision(%a: tensor<2x4xbf16>, %b: tensor<4x3xbf16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{mixed element types are not supported: 'bf16' x 'bf16' -> 'f32'}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @conv_output_size(%x: tensor<2x4x8xf32>, %w: tensor<3x4x2xf32>) -> tensor<2x2x7xf32> {
  // expected-error @+1 {{output spatial dimension 0 has size 7; the padded input and window give 6}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[0, i, o]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x8xf32>, tensor<3x4x2xf32>) -> tensor<2x2x7xf32>
  return %0 : tensor<2x2x7xf32>
}

// -----

func.func @batch_groups(%x: tensor<2x4x8xf32>, %w: tensor<3x4x2xf32>) -> tensor<1x2x6xf32> {
  // expected-error @+1 {{convolutions with batch groups are not supported}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[0, i, o]->[b, f, 0], window = {} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<2x4x8xf32>, tensor<3x4x2xf32>) -> tensor<1x2x6xf32>
  return %0 : tensor<1x2x6xf32>
}

// -----

func.func @bad_scatter(%t: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x2xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{unsupported scatter: update windows must span the operand's non-inserted dimensions whole}}
  %0 = "stablehlo.scatter"(%t, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x2xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @combiner(%a: tensor<4xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%x: tensor<f32>, %y: tensor<f32>) {
    // expected-error @+1 {{'stablehlo.custom_call' is not supported in a combiner region}}
    %s = stablehlo.custom_call @f(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// expected-warning @+2 {{2 constants of @weights have no value in the file (dense_resource); they become its arguments #1 to #2}}
func.func @weights(%a: tensor<4xf32>) -> tensor<4xf32> {
  %w = stablehlo.constant dense_resource<__elided__> : tensor<4xf32>
  %b = stablehlo.constant dense_resource<__elided__> : tensor<4xf32>
  %0 = stablehlo.multiply %a, %w : tensor<4xf32>
  %1 = stablehlo.add %0, %b : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @manual(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{manual shardings (shard_map) are not supported}}
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2]<=[2] last_tile_dims={manual}}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @device_counts(%a: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
  // expected-error @+1 {{uses 4 devices but an earlier one uses 2}}
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_layout(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @+1 {{a convolution layout needs both 'b' and 'f'}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, 2]x[0, 1, i, o]->[b, 0, 1, f] {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// -----

func.func @bad_precision(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{unknown precision 'FAST'}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [FAST, DEFAULT] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_gather(%t: tensor<10x6xf32>, %i: tensor<3x1xi32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{unknown field 'offset_dimz'}}
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dimz = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 6>}> : (tensor<10x6xf32>, tensor<3x1xi32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @shardy_order(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{dimension 0 is split over mesh axes out of mesh order}}
  %0 = sdy.sharding_constraint %a <@mesh, [{"y", "x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @shardy_axis(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{mesh @mesh has no axis "z"}}
  %0 = sdy.sharding_constraint %a <@mesh, [{"z"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=4]>
func.func @sub_axis(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{sub-axes of a mesh axis are not supported}}
  %0 = sdy.sharding_constraint %a <@mesh, [{"x":(1)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @sort_dimension(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{a sort of rank 2 needs a dimension in [-2, 2) and a comparator of 2 arguments}}
  %0 = "stablehlo.sort"(%a) <{dimension = 2 : i64}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %lt = stablehlo.compare LT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @top_k(%a: tensor<4x6xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{top_k needs k in [0, 6] of a float or integer row and integer indices}}
  %v, %i = chlo.top_k(%a, k = 7) : tensor<4x6xf32> -> (tensor<4x7xf32>, tensor<4x7xi32>)
  return %v : tensor<4x7xf32>
}

// -----

func.func @gather_index_vector(%a: tensor<4x6xf32>, %i: tensor<3x2xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{unsupported gather: dimension numbers that do not fit the operands}}
  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x6xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @select_and_scatter_windows(%x: tensor<8xf32>, %g: tensor<3xf32>) -> tensor<8xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{select_and_scatter needs one window size, stride and non-negative [low, high] padding per dimension, and a source element per window}}
  %0 = "stablehlo.select_and_scatter"(%x, %g, %z) <{window_dimensions = array<i64: 3>, window_strides = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
