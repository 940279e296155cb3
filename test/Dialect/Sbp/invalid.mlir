// RUN: sbp-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// expected-error @+1 {{'sbp.mesh' op needs at least one mesh axis}}
sbp.mesh @m shape = []

// -----

// expected-error @+1 {{'sbp.mesh' op mesh axis 1 has size 0; sizes must be positive}}
sbp.mesh @m shape = [2, 0]

// -----

// expected-error @+1 {{'sbp.mesh' op has 1 axis names for 2 axes}}
sbp.mesh @m shape = [2, 4] axes = ["dp"]

// -----

// expected-error @+1 {{'sbp.mesh' op axis name "dp" appears twice}}
sbp.mesh @m shape = [2, 4] axes = ["dp", "dp"]

// -----

// expected-note @+1 {{see existing symbol definition here}}
sbp.mesh @m shape = [2]
// expected-error @+1 {{redefinition of symbol named 'm'}}
sbp.mesh @m shape = [4]

// -----

sbp.mesh @m shape = [2, 4]
func.func @wrong_entry_count(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'sbp.annotate' op sharding of the annotated value has 1 entries but mesh @m has 2 axes}}
  %0 = sbp.annotate %x #sbp.nd<@m, [S(0)]> : tensor<8x16xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @split_dim_out_of_range(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'sbp.annotate' op sharding of the annotated value splits dimension 2 (mesh axis 1) of a rank-2 tensor}}
  %0 = sbp.annotate %x #sbp.nd<@m, [B, S(2)]> : tensor<8x16xf32>
  return
}

// -----

func.func @unknown_mesh(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'sbp.annotate' op sharding of the annotated value names unknown mesh @nowhere}}
  %0 = sbp.annotate %x #sbp.nd<@nowhere, [B]> : tensor<8x16xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @annotate_type_mismatch(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'sbp.annotate' op requires the same type for all operands and results}}
  %0 = "sbp.annotate"(%x) <{sharding = #sbp.nd<@m, [B, B]>}> : (tensor<8x16xf32>) -> tensor<8x16xf64>
  return
}

// -----

sbp.mesh @m shape = [2]
sbp.mesh @n shape = [2]
func.func @boxing_between_meshes(%x: tensor<8xf32>) {
  // expected-error @+1 {{'sbp.boxing' op converts between different meshes @m and @n}}
  %0 = sbp.boxing %x #sbp.nd<@m, [S(0)]> -> #sbp.nd<@n, [B]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @boxing_bad_source(%x: tensor<8xf32>) {
  // expected-error @+1 {{'sbp.boxing' op sharding of the source splits dimension 1 (mesh axis 0) of a rank-1 tensor}}
  %0 = sbp.boxing %x #sbp.nd<@m, [S(1)]> -> #sbp.nd<@m, [B]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @boxing_bad_destination(%x: tensor<8xf32>) {
  // expected-error @+1 {{'sbp.boxing' op sharding of the destination has 2 entries but mesh @m has 1 axes}}
  %0 = sbp.boxing %x #sbp.nd<@m, [P]> -> #sbp.nd<@m, [B, B]> : tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
// expected-error @+1 {{sharding of argument #0 has 1 entries but mesh @m has 2 axes}}
func.func @argument_entry_count(%x: tensor<8xf32> {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  return
}

// -----

// expected-error @+1 {{sharding of result #0 names unknown mesh @nowhere}}
func.func @result_unknown_mesh(%x: tensor<8xf32>) -> (tensor<8xf32> {sbp.sharding = #sbp.nd<@nowhere, [B]>}) {
  return %x : tensor<8xf32>
}

// -----

sbp.mesh @m shape = [2]
// expected-error @+1 {{sharding of argument #1 splits dimension 1 (mesh axis 0) of a rank-1 tensor}}
func.func @argument_split_out_of_range(%x: tensor<8xf32>, %y: tensor<8xf32> {sbp.sharding = #sbp.nd<@m, [S(1)]>}) {
  return
}

// -----

sbp.mesh @m shape = [2]
// expected-error @+1 {{sharding of argument #0 of non-tensor type 'f32' must be all B}}
func.func @scalar_argument_split(%x: f32 {sbp.sharding = #sbp.nd<@m, [S(0)]>}) {
  return
}

// -----

// expected-error @+1 {{'sbp.sharding' on argument #0 must be an #sbp.nd attribute}}
func.func @sharding_not_nd(%x: tensor<8xf32> {sbp.sharding = 1 : i32}) {
  return
}

// -----

// expected-error @+1 {{unknown sbp attribute 'sbp.shard' on argument #0}}
func.func @unknown_argument_attr(%x: tensor<8xf32> {sbp.shard = 1 : i32}) {
  return
}

// -----

func.func @unknown_op_attr() {
  // expected-error @+1 {{unknown sbp attribute 'sbp.foo' on an operation}}
  "test.op"() {sbp.foo} : () -> ()
  return
}

// -----

func.func @collective_unknown_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.all_reduce' op names unknown mesh @nowhere}}
  %0 = sbp.all_reduce %x on @nowhere axes = [0] reduction = sum : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @collective_axis_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.all_reduce' op mesh axis 2 is out of range for mesh @m of rank 2}}
  %0 = sbp.all_reduce %x on @m axes = [2] reduction = sum : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @collective_repeated_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.broadcast' op mesh axis 1 appears twice}}
  %0 = sbp.broadcast %x on @m axes = [1, 1] root = 0 : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @all_reduce_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.all_reduce' op requires the same type for all operands and results}}
  %0 = "sbp.all_reduce"(%x) <{mesh = @m, mesh_axes = array<i64: 0>, reduction = #sbp.reduction<sum>}> : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @max_of_complex(%x: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'sbp.all_reduce' op reduction 'max' is not defined on complex element type 'complex<f32>'}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = max : tensor<4xcomplex<f32>>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @reduce_index(%x: tensor<4xindex>) {
  // expected-error @+1 {{'sbp.reduce_scatter' op cannot reduce element type 'index'}}
  %0 = sbp.reduce_scatter %x on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<4xindex> -> tensor<2xindex>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @unknown_reduction(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown reduction kind 'prod'; expected sum, max or min}}
  %0 = sbp.all_reduce %x on @m axes = [0] reduction = prod : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @all_gather_wrong_size(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'sbp.all_gather' op result dimension 1 has size 32 but 64 was expected (operand size 16, group size 4)}}
  %0 = sbp.all_gather %x on @m axes = [1] gather_dim = 1 : tensor<4x16xf32> -> tensor<4x32xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @all_gather_other_dim_changed(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'sbp.all_gather' op result dimension 0 has size 8 but 4 was expected (operand size 4, group size 4)}}
  %0 = sbp.all_gather %x on @m axes = [1] gather_dim = 1 : tensor<4x16xf32> -> tensor<8x64xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @all_gather_dim_out_of_range(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'sbp.all_gather' op gather_dim 2 is out of range for rank 2}}
  %0 = sbp.all_gather %x on @m axes = [0] gather_dim = 2 : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @all_gather_rank_mismatch(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{'sbp.all_gather' op ranks differ: 2 vs 1}}
  %0 = sbp.all_gather %x on @m axes = [0] gather_dim = 0 : tensor<4x16xf32> -> tensor<128xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @all_gather_element_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.all_gather' op element types differ: 'f32' vs 'f16'}}
  %0 = sbp.all_gather %x on @m axes = [0] gather_dim = 0 : tensor<4xf32> -> tensor<8xf16>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @reduce_scatter_wrong_size(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.reduce_scatter' op result dimension 0 has size 4 but 2 was expected (operand size 8, group size 4)}}
  %0 = sbp.reduce_scatter %x on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @reduce_scatter_uneven_static(%x: tensor<10x4xf32>) {
  // expected-error @+1 {{'sbp.reduce_scatter' op dimension 0 of size 10 is not divisible by the group size 4; uneven shards have dynamic sizes}}
  %0 = sbp.reduce_scatter %x on @m axes = [0] scatter_dim = 0 reduction = sum : tensor<10x4xf32> -> tensor<3x4xf32>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @all_to_all_wrong_concat_size(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.all_to_all' op result dimension 1 has size 8 but 16 was expected (operand size 4, group size 4)}}
  %0 = sbp.all_to_all %x on @m axes = [0] split_dim = 0 concat_dim = 1 : tensor<8x4xf32> -> tensor<2x8xf32>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @all_to_all_dim_out_of_range(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.all_to_all' op concat_dim -1 is out of range for rank 2}}
  %0 = sbp.all_to_all %x on @m axes = [0] split_dim = 0 concat_dim = -1 : tensor<8x4xf32> -> tensor<2x16xf32>
  return
}

// -----

sbp.mesh @m shape = [2, 4]
func.func @broadcast_root_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.broadcast' op root 4 is not a rank of a group of 4 devices}}
  %0 = sbp.broadcast %x on @m axes = [1] root = 4 : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @send_peer_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.send' op peer 2 is not a rank of a group of 2 devices}}
  sbp.send %x on @m axes = [0] peer = 2 : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @recv_peer_negative() {
  // expected-error @+1 {{'sbp.recv' op peer -1 is not a rank of a group of 2 devices}}
  %0 = sbp.recv on @m axes = [0] peer = -1 : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @all_to_all_wrong_split_size(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.all_to_all' op result dimension 0 has size 4 but 2 was expected (operand size 8, group size 4)}}
  %0 = sbp.all_to_all %x on @m axes = [0] split_dim = 0 concat_dim = 1 : tensor<8x4xf32> -> tensor<4x16xf32>
  return
}

// -----

sbp.mesh @m shape = [4]
func.func @all_to_all_same_dim_changes_shape(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'sbp.all_to_all' op result dimension 0 has size 2 but 8 was expected (operand size 8, group size 4)}}
  %0 = sbp.all_to_all %x on @m axes = [0] split_dim = 0 concat_dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @axis_index_out_of_range() -> index {
  // expected-error @+1 {{'sbp.axis_index' op mesh axis 1 is out of range for mesh @m of rank 1}}
  %0 = sbp.axis_index @m axis = 1 : index
  return %0 : index
}

// -----

func.func @axis_index_unknown_mesh() -> index {
  // expected-error @+1 {{'sbp.axis_index' op names unknown mesh @nowhere}}
  %0 = sbp.axis_index @nowhere axis = 0 : index
  return %0 : index
}

// -----

sbp.mesh @m shape = [2]
func.func @operand_shardings_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.operands' must be an array of 2 #sbp.nd or unit attributes}}
  %0 = arith.addf %x, %x {sbp.operands = [#sbp.nd<@m, [B]>]} : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @result_shardings_entry(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.results' entry for result #0 must be an #sbp.nd or unit attribute}}
  %0 = arith.addf %x, %x {sbp.results = [1 : i32]} : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @result_shardings_split_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{sharding of result #0 splits dimension 1 (mesh axis 0) of a rank-1 tensor}}
  %0 = arith.addf %x, %x {sbp.operands = [unit, unit], sbp.results = [#sbp.nd<@m, [S(1)]>]} : tensor<4xf32>
  return
}

// -----

sbp.mesh @m shape = [2]
func.func @axis_index_negative() -> index {
  // expected-error @+1 {{'sbp.axis_index' op mesh axis -1 is out of range for mesh @m of rank 1}}
  %0 = sbp.axis_index @m axis = -1 : index
  return %0 : index
}

// -----

// expected-error @+1 {{'sbp.partitioned' must be a unit attribute of a module}}
module attributes {sbp.partitioned = 1 : i64} {
}

// -----

module {
  // expected-error @+1 {{'sbp.partitioned' must be a unit attribute of a module}}
  func.func @f() attributes {sbp.partitioned} {
    return
  }
}

// -----

func.func @stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.stage' must be a non-negative integer on an op}}
  %y = arith.negf %x {sbp.stage = -1} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @stop_gradient_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sbp.stop_gradient' must be a unit attribute of an op with results}}
  %y = arith.negf %x {sbp.stop_gradient = true} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @stop_gradient_no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'sbp.stop_gradient' must be a unit attribute of an op with results}}
  "test.sink"(%x) {sbp.stop_gradient} : (tensor<4xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}, {stage = S, result = R}, {backward = S, result = R}, {gradient = J} or {saved = J} with non-negative integers}}
func.func @source_form(%x: tensor<4xf32> {sbp.source = {stage = 0 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}, {stage = S, result = R}, {backward = S, result = R}, {gradient = J} or {saved = J} with non-negative integers}}
func.func @source_both(%x: tensor<4xf32> {sbp.source = {input = 0 : i64, stage = 0 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}, {stage = S, result = R}, {backward = S, result = R}, {gradient = J} or {saved = J} with non-negative integers}}
func.func @source_gradient(%x: tensor<4xf32> {sbp.source = {gradient = 0 : i64, result = 0 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}, {stage = S, result = R}, {backward = S, result = R}, {gradient = J} or {saved = J} with non-negative integers}}
func.func @source_backward(%x: tensor<4xf32> {sbp.source = {backward = -1 : i64, result = 0 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}, {stage = S, result = R}, {backward = S, result = R}, {gradient = J} or {saved = J} with non-negative integers}}
func.func @source_saved(%x: tensor<4xf32> {sbp.source = {saved = 0 : i64, stage = 0 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0: micro_batch_dim must be a dimension of it}}
func.func @source_dim(%x: tensor<4xf32> {sbp.source = {input = 0 : i64, micro_batch_dim = 1 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0: an offset needs an argument whose dimension 0 is static (the rows it takes)}}
func.func @source_offset_dynamic(%x: tensor<?x4xf32> {sbp.source = {input = 0 : i64, offset = 2 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.source' on argument #0 must be {input = N [, micro_batch_dim = D | offset = O]}}}
func.func @source_offset_and_dim(%x: tensor<4x4xf32> {sbp.source = {input = 0 : i64, offset = 2 : i64, micro_batch_dim = 1 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'sbp.pipeline' needs function, mesh, stages (a non-empty array), micro_batches, schedule and outputs}}
module attributes {sbp.pipeline = {function = "f", stages = [], micro_batches = 1 : i64, schedule = "1f1b", outputs = []}} {
}

// -----

// expected-error @+1 {{'sbp.pipeline' needs a mesh of the module whose first axis is the number of stages}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "1f1b", outputs = []}} {
  sbp.mesh @p shape = [2, 2]
  func.func @s() {
    return
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' needs a positive micro_batches}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 0 : i64, schedule = "1f1b", outputs = []}} {
  sbp.mesh @p shape = [1]
  func.func @s() {
    return
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' has schedule "zigzag"; expected "gpipe" or "1f1b"}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "zigzag", outputs = []}} {
  sbp.mesh @p shape = [1]
  func.func @s() {
    return
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' names a stage that is not a function of the module}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@nowhere], micro_batches = 1 : i64, schedule = "gpipe", outputs = []}} {
  sbp.mesh @p shape = [1]
}

// -----

// expected-error @+1 {{'sbp.pipeline' has an output that is not {stage = S, result = R, combine = "concat" (with dim = D) | "sum" | "same" [, update]} of an existing stage (or update) result}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = 0 : i64, result = 1 : i64, combine = "same"}]}} {
  sbp.mesh @p shape = [1]
  func.func @s() -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' must be a dictionary attribute of a module}}
func.func @pipeline_on_func() attributes {sbp.pipeline = {}} {
  return
}

// -----

// expected-error@+1 {{'sbp.train_step' needs optimizer = "sgd" or "adamw"}}
func.func @train_optimizer(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) attributes {sbp.train_step = {optimizer = "adam", params = 1 : i64, state = 0 : i64}} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %p, %l : tensor<4xf32>, tensor<f32>
}

// -----

// expected-error@+1 {{'sbp.train_step' needs non-negative integers params and state}}
func.func @train_counts(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) attributes {sbp.train_step = {optimizer = "sgd", params = -1 : i64, state = 0 : i64}} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %p, %l : tensor<4xf32>, tensor<f32>
}

// -----

// expected-error@+1 {{'sbp.train_step' names 2 parameters and states but the function has 1 arguments}}
func.func @train_args(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) attributes {sbp.train_step = {optimizer = "sgd", params = 2 : i64, state = 0 : i64}} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %p, %l : tensor<4xf32>, tensor<f32>
}

// -----

// expected-error@+1 {{'sbp.train_step' needs 2 results (the updated parameters and states, then the loss), not 1}}
func.func @train_results(%p: tensor<4xf32>) -> tensor<4xf32> attributes {sbp.train_step = {optimizer = "sgd", params = 1 : i64, state = 0 : i64}} {
  return %p : tensor<4xf32>
}

// -----

// expected-error@+1 {{'sbp.train_step' needs result #0 of the type of argument #0 ('tensor<4xf32>'), not 'tensor<2xf32>'}}
func.func @train_types(%p: tensor<4xf32>) -> (tensor<2xf32>, tensor<f32>) attributes {sbp.train_step = {optimizer = "sgd", params = 1 : i64, state = 0 : i64}} {
  %s = tensor.extract_slice %p[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %l = arith.constant dense<0.0> : tensor<f32>
  return %s, %l : tensor<2xf32>, tensor<f32>
}

// -----

// expected-error@+1 {{'sbp.train_step' needs a loss result of type tensor<float>, not 'tensor<2xf32>'}}
func.func @train_loss(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {sbp.train_step = {optimizer = "sgd", params = 1 : i64, state = 0 : i64}} {
  %l = arith.constant dense<0.0> : tensor<2xf32>
  return %p, %l : tensor<4xf32>, tensor<2xf32>
}

// -----

// expected-error@+1 {{'sbp.name' on argument #0 must be a string}}
func.func @name(%p: tensor<4xf32> {sbp.name = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'sbp.pipeline' needs backward and update, both arrays of one function of the module per stage, or neither}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [], backward = [@s]}} {
  sbp.mesh @p shape = [1]
  func.func @s() {
    return
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' has an output of an update function but no update functions (or update is not a unit attribute)}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = 0 : i64, result = 0 : i64, combine = "same", update}]}} {
  sbp.mesh @p shape = [1]
  func.func @s() -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' has an output that is not {stage = S, result = R, combine = "concat" (with dim = D) | "sum" | "same" [, update]} of an existing stage (or update) result}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = 0 : i64, result = 1 : i64, combine = "same", update}], backward = [@s], update = [@s]}} {
  sbp.mesh @p shape = [1]
  func.func @s() -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// Rows of several updates are concatenated along dimension 0 only.
// expected-error @+1 {{'sbp.pipeline' has an output that is not {stage = S, result = R, combine = "concat" (with dim = D) | "sum" | "same" [, update]} of an existing stage (or update) result, nor an update's {stage = [S...], result = [R...], combine = "concat", dim = 0, update}}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s, @s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = [0, 1], result = [0, 0], combine = "same", update}], backward = [@s, @s], update = [@s, @s]}} {
  sbp.mesh @p shape = [2]
  func.func @s() -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'sbp.pipeline' has an output that is not}}
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s, @s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = [0, 1], result = [0, 1], combine = "concat", dim = 0 : i64, update}], backward = [@s, @s], update = [@s, @s]}} {
  sbp.mesh @p shape = [2]
  func.func @s() -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// A stage's rows of a stacked weight, and the update outputs of two stages
// one after another.
module attributes {sbp.pipeline = {function = "f", mesh = @p, stages = [@s, @s], micro_batches = 1 : i64, schedule = "gpipe", outputs = [{stage = [0, 1], result = [0, 0], combine = "concat", dim = 0 : i64, update}], backward = [@s, @s], update = [@s, @s]}} {
  sbp.mesh @p shape = [2]
  func.func @s(%w: tensor<2x4xf32> {sbp.source = {input = 0 : i64, offset = 2 : i64}}) -> tensor<2x4xf32> {
    return %w : tensor<2x4xf32>
  }
}
