//===- Passes.td - sbp passes ------------------------------*- tablegen -*-===//

#ifndef SBP_TRANSFORMS_PASSES_TD
#define SBP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SbpPrintSignaturesPass : Pass<"sbp-print-signatures", "ModuleOp"> {
  let summary = "Print the SBP signatures of every op (test pass)";
  let description = [{
    For every function, prints a `func @name` line and then, for each op in
    it, the op's name followed by one line per per-axis signature:
    `(operand entries) -> (result entries)`, with `*` for an entry the op
    leaves free. With `mesh=<name>`, the nd signatures on that mesh are
    printed instead, each entry as `[e0, e1, ...]`. Ops without a signature
    rule are listed as `<op name>: no SBP rule`. Regions of ops with a rule
    (linalg payloads) are not entered. Output goes to stdout; the IR is left
    unchanged.

    Constraints: `mesh`, when given, names an `sbp.mesh` in the module.
  }];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"\"",
           "Print nd signatures on the sbp.mesh of this name">,
  ];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

def SbpPropagatePass : Pass<"sbp-propagate", "ModuleOp"> {
  let summary = "Choose a layout for every tensor and a signature for every op";
  let description = [{
    Starting from the user's constraints — `sbp.annotate` and `sbp.sharding`
    on function arguments and results — chooses an nd-SBP for every tensor
    value and one of its signatures for every op, so that converting
    between them ("boxing") sends as few bytes as possible, counted with the
    boxing table. Unannotated function arguments and results are `B`.

    The choice is made per function by iterated local improvement: each op
    in turn takes the signature that minimizes the bytes of boxing from its
    operands' layouts and to its users' needs, in forward and backward
    sweeps until nothing changes. An op that already records a signature
    (`sbp.operands` and `sbp.results`, written by hand or by an earlier
    run) keeps it. `scf.for` carries each iteration value in
    the layout of its initial value; the yielded value is boxed to it. An op
    without an SBP rule runs whole (`B` in, `B` out) and gets a remark.

    The result is recorded in attributes: `sbp.sharding` on every tensor
    argument and result of each function, `sbp.operands` / `sbp.results` on
    every op that computes on tensors (see `sbp-insert-boxing`).

    Constraints: all annotations of a function name one mesh; two
    annotations of one value agree; a recorded signature is one of the op's
    signatures.
  }];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
  let options = [
    Option<"maxSweeps", "max-sweeps", "unsigned", /*default=*/"8",
           "Forward/backward improvement sweeps at most">,
  ];
}

def SbpCloneCheapValuesPass : Pass<"sbp-clone-cheap-values", "ModuleOp"> {
  let summary = "Give every user of a value computed from constants its own "
                "copy";
  let description = [{
    A value is cheap when it is computed from constants alone: its defining
    op has no memory effects, returns tensors, has no regions unless it is a
    linalg op, and reads only cheap values (iotas, masks, RoPE tables, zero
    fills). Each further user of a cheap value read by several ops gets its
    own copy of the ops computing it, placed right after the originals (so
    that users inside loops do not compute it every trip). JAX hoists such
    values out of a scan; unrolled, one value then reaches every layer,
    forward and backward, and ties the layout choices of all layers
    together, while copies let `sbp-auto-parallel` lay each out as its user
    reads it and eliminate the layers one by one. `sbp-auto-parallel` does
    this first. The copies are at most four per op of the function.
  }];
}

def SbpAutoParallelPass : Pass<"sbp-auto-parallel", "ModuleOp"> {
  let summary = "Choose every op's signature by searching a cost model";
  let description = [{
    Chooses an nd-SBP signature for every op that computes on tensors, and a
    layout for every function argument and result that the user left
    unannotated, so that the predicted step time on the cluster is least
    while the predicted peak memory per device fits the limit. User
    annotations (`sbp.annotate`, `sbp.sharding`) are hard constraints. The
    choice is recorded like `sbp-propagate`'s (which then settles loops and
    uninitialized tensors), for `sbp-insert-boxing` and `sbp-partition`.

    The cost of a plan is the sum over ops of their compute time under their
    signature (roofline on the local shapes) and the time of every boxing
    between a producer's layout and a use's need (collectives under the
    alpha-beta model on the link of each mesh axis). docs/cost-model.md
    gives the formulas. The search is exact for this sum: nodes of degree
    up to 2 are eliminated by dynamic programming, repeated layers are
    recognized by their identical cost tables and solved once, states that
    another state of their op never costs less than are dropped, the
    remaining core is bounded by message passing (TRW-S, the bound of the
    LP relaxation), an assignment at that bound is optimal, and otherwise
    the states the bound rules out are dropped and the rest is an integer
    program solved by CBC.

    Memory is the per-device peak of parameters (arguments), activations
    live at once and boxing buffers. When the fastest plan does not fit,
    the search weighs local bytes against time (a Lagrangian weight, found
    by bisection) until it does.

    `report=FILE.json` (or `FILE.md`) writes, per op, the chosen signature
    and predicted compute, communication and memory, and the totals of the
    plan and of reference strategies priced by the same model: replicated,
    data parallel (inputs split along dimension 0 on every mesh axis,
    parameters replicated), tensor parallel (parameters split on every
    mesh axis) and, on meshes of several axes, data x tensor parallel
    (data parallel over the first axis, tensor parallel over the others,
    weights never gathered; vectors such as biases free over the others).
    Arguments whose dimension 0 equals the first result's are inputs; the
    others are parameters. An axis of one device adds no
    layouts: every value and op is `B` along it.

    The mesh is `mesh=` (created as `@mesh` unless the module has one of
    that shape), else the module's only mesh, else the cluster's shape.
    Searches longer than a second print progress lines on stderr.

    Pipelines (`pipeline-stages=K`, or `0` to let the search choose K,
    including none) cut the mesh's first axis (or all its devices) into K
    stages, each on the sub-mesh of the remaining axes, as Alpa does: for
    each number of micro-batches (`micro-batches`, or 1, 2, 4, 8 and 16)
    the function is micro-batched as `sbp-split-stages` does, its ops are
    grouped into segments at the cuts where the fewest bytes are live (a
    loop over layers first split into as many loops as there may be
    segments, as `sbp-split-stages` splits it), every
    contiguous range of segments is priced as a stage by this search on each
    candidate sub-mesh, and a dynamic program chooses the cuts that
    minimize the step `sum of stage times + (m - 1) * slowest stage` (each
    stage's time includes sending what crosses its end over the link of the
    stage axis) while each stage keeps its parameters plus the activations
    of the micro-batches the schedule holds (`m` in GPipe, `K - s` in stage
    `s` of 1F1B) within the memory limit. One stage of the whole mesh with
    several micro-batches is gradient accumulation (`pipeline-stages=1
    micro-batches=m`, and a candidate of `pipeline-stages=0`): the same
    search of the whole function, one micro-batch's activations live at a
    time. A pipeline is chosen when it is
    faster than the best plan without stages (or when K is given); with
    `pipeline-stages=0` no stages are searched when that plan's step is
    within `(m + 1) / m` of its compute time, which no pipeline can beat
    (the same work plus a bubble). The module then has `sbp-split-stages`' form on the pipeline's mesh
    (`@pipeline`, the stages along its first axis), each stage searched with
    its layouts `B` along that axis (that is, on its sub-mesh) and the
    layouts of the values it receives fixed by the stage that sends them.
    `report=` adds the stages, their predicted times, memory and bubble,
    and, on stage meshes of several axes, Megatron-LM's pipeline of as many
    stages and micro-batches priced by the same model as a reference (the
    layers of the loops over layers dealt evenly, what precedes them in the
    first stage and what follows in the last; every stage in the data x
    tensor parallel layouts over its sub-mesh, without a memory limit);
    `timeline=FILE.svg` draws the predicted schedule.

    A training step (`sbp.train_step`, see `sbp-make-train-step`) hands back
    each updated parameter and optimizer state in the layout of its
    argument: one choice for both, so data parallelism, ZeRO-style sharding
    of the state and the parameters, and the gradient's boxing into them
    are all priced by this search. When no plan fits the memory limit, the
    search recomputes forward activations instead of keeping them for the
    backward pass (Chen et al. 2016): the forward pass is cut into
    `recompute-segments` segments of balanced work, and segments are
    recomputed, those keeping the most bytes first, until a plan fits; the
    copies are real ops, so their compute is in the plan's price, and the
    report says how many segments were recomputed. A training step is
    pipelined as `sbp-split-stages` pipelines it (stages of its loss, each
    with a backward and an update function): each candidate stage's
    backward is searched first, then its forward and its update with the
    layouts they share with it fixed (parameters, received values and
    their gradients, the summed gradients) and the update's optimizer state
    free within the memory the passes leave; a stage's time per
    micro-batch is its forward and backward, and the step adds the slowest
    update.

    Constraints: the cluster preset or file exists and is complete; the mesh
    has as many devices as the cluster (any number on a `host_cores`
    cluster) and matches the annotations' mesh; the memory limit parses and
    some plan fits it; `pipeline-stages` is not negative and, above 1,
    divides the mesh's first axis (or, on a mesh of several axes, its
    number of devices), the module has one function and some pipeline of
    that many stages fits; `micro-batches` is not negative and, above 1
    with one stage, the module has one function and some plan of that many
    micro-batches fits;
    `schedule` is `1f1b` or `gpipe`.
  }];
  let options = [
    Option<"recomputeSegments", "recompute-segments", "int64_t",
           /*default=*/"8",
           "Training steps: forward segments the search may recompute to "
           "fit the memory limit (0: none)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu-local\"",
           "Cluster preset (cpu-local, dgx-a100-8, dgx-h100-8, h200-8, "
           "<preset>x<nodes>) or JSON file">,
    Option<"mesh", "mesh", "std::string", /*default=*/"\"\"",
           "Mesh shape, e.g. 2x4 (default: the module's mesh, else the "
           "cluster's)">,
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "Bytes per device, e.g. 40GiB (default: the device's memory)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan and reference strategies to this .json or .md "
           "file">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"60",
           "Seconds the integer program may take per solve">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "No status line while the search runs (also the tools' --quiet)">,
    Option<"pipelineStages", "pipeline-stages", "int64_t", /*default=*/"1",
           "Pipeline stages: 1 is none (gradient accumulation with "
           "micro-batches above 1), 0 lets the search choose">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "Micro-batches of a pipeline (0: the search chooses among 1, 2, "
           "4, 8 and 16)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "Pipeline schedule: 1f1b or gpipe">,
    Option<"timeline", "timeline", "std::string", /*default=*/"\"\"",
           "Write the predicted timeline of a pipeline's step to this .svg "
           "file">,
  ];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

def SbpMakeTrainStepPass : Pass<"sbp-make-train-step", "ModuleOp"> {
  let summary = "Turn a forward function into one training step";
  let description = [{
    Replaces a logical forward function `@f` by `@f_train_step`, one step
    of training: it takes the parameters, the optimizer state and a batch,
    and returns the updated parameters, the updated state and the loss.
    Everything is an ordinary logical program, so the search chooses the
    layouts of the whole step at once: a gradient summed over a batch split
    across devices is `P(sum)` and its synchronization is the boxing to the
    parameter's (or optimizer state's) layout.

    Parameters are the arguments `params` names, by default every float
    argument that is not a batch (dimension 0 a parallel loop of all its
    readers, of the size of the first such integer argument, else of the
    first such argument); integer arguments are always data. The loss is
    made from the function's first result: `result` takes it as it is (one
    element); `mse` adds a `target` argument of its type and takes the mean
    squared error; `cross-entropy` takes it as logits over its last
    dimension and adds a `labels` argument of integers (the other
    dimensions); `auto` (the default) is `result`
    for one element, `cross-entropy` when the function has an integer
    argument (tokens), and `mse` otherwise.

    Gradients are built by reverse-mode differentiation of the body:
    structured ops from their indexing maps and payload (the gradient of an
    input is a structured op over the same loops, its unused loops reduced,
    scattered through the input's map where that reads a compound index such
    as a convolution's `oh + kh`, and given a loop of its own for a
    dimension read at a constant or at a loop that another of its
    dimensions reads (a diagonal), adding only where that loop's index is
    the one read; a reduction's partial gets the result's
    adjoint for a sum, where it equals the result for a max or min (shared
    among the equal partials and init, which one more reduction counts), and
    times the product of the others for a product, from a count of its
    zero partials and the product of the rest (outputs over all the loops
    that the payload writes and does not read take the yielded value's); a tensor read inside a
    payload gets a one-hot contraction, a plain
    gather such as an embedding the matrix product of the ids' one-hot with
    the result's adjoint; a scalar input, such as a fill's value, the sum
    over every iteration), explicit rules for element-wise arith and math
    ops on tensors and scalars, `linalg.softmax` (`y * (dy - sum(dy *
    y))`), `tensor.expand_shape`, `collapse_shape`, `reshape`,
    `extract_slice`, `insert_slice`, `pad` (a padding value the same at
    every position takes the sum of the adjoint over the border), `concat`,
    `cast`, `extract` (zero but at the element), `splat` (the sum) and
    `from_elements` (the elements), `scf.for`,
    whose carried
    values are saved per iteration and whose body is recomputed in the
    backward loop, `scf.while`, whose backward loop recomputes each
    iteration's start from the first (n(n+1)/2 iterations for n, in
    constant memory), and `scf.if`, whose sides recompute and differentiate
    theirs under the same condition. Calls (`func.call` of a function with one block, and the
    calls in it) are inlined first; private callees nothing else calls are
    removed with the forward function. In element-wise adjoints, a product
    of the adjoint with a partial derivative is 0 where the adjoint is 0,
    even if the partial is infinite (the branch a select did not take).

    `optimizer=sgd` updates `p -= lr * (g + weight-decay * p)`;
    `optimizer=adamw` (Loshchilov and Hutter) keeps two moments per
    parameter and a step count (`tensor<f32>`) and updates with bias
    correction and decoupled weight decay. The step function records
    `sbp.train_step = {optimizer, params, state}`: its first `params`
    arguments are the parameters, the next `state` the optimizer state, and
    its results the same values updated followed by the loss.

    Constraints: the function has static shapes and at least one float
    result; `loss=result` needs a result of one element, `cross-entropy` a
    float result of rank at least one; every op between the parameters and
    the loss has a gradient rule (else an error at that op), every
    output of a structured op with reduction loops on that path either
    combines by an add, mul, max or min or spans all its loops unread;
    no padding value that depends on a parameter varies over the border
    or has pads of dynamic size, nor does a float scalar an `scf.while`
    carries;
    every callee has a body of one block and none
    calls itself; `params` name
    float arguments (`argN`, `N` or an `onnx.name` or `sbp.name`), and
    without it some float argument is not a batch;
    `lr` is positive.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The forward function (default: the only public one)">,
    Option<"loss", "loss", "std::string", /*default=*/"\"auto\"",
           "auto, result, mse or cross-entropy">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd or adamw">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "AdamW: decay of the first moment">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "AdamW: decay of the second moment">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "AdamW: added to the second moment's root">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1",
           "Weight decay (default 0.01 for adamw, 0 for sgd)">,
    ListOption<"params", "params", "std::string",
               "The arguments that are parameters, each argN, N or an "
               "argument's onnx.name or sbp.name (default: the float "
               "arguments that are not a batch)">,
  ];
  let dependentDialects = ["::mlir::sbp::SbpDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "math::MathDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

def SbpSplitStagesPass : Pass<"sbp-split-stages", "ModuleOp"> {
  let summary = "Cut a function into micro-batches and pipeline stages";
  let description = [{
    Turns a logical function into a pipeline: the program of one
    micro-batch, cut into stages that run one after another on their own
    sub-meshes, as GPipe and PipeDream do.

    Micro-batching is an SBP partition along a virtual axis of
    `micro-batches` devices run in turn: the batch arguments (`batch-args`,
    default those whose dimension 0 is a parallel loop of every linalg op
    reading them, of the first such argument's size) are split
    along dimension 0, the others taken whole, and every op must then run
    on its micro-batch alone: an op that needs the whole batch (a
    normalization over it) is an error. Each result is put together from
    the micro-batches by concatenation (it stays split), a sum (it is a
    partial sum over the batch, e.g. a loss) or taken once (it does not
    depend on the batch).

    Ops are assigned to stages by their `sbp.stage` attribute (written by
    hand or by `sbp-auto-parallel`) or, with `stages=K`, in program order
    with balanced work (iteration points of linalg ops); there, a loop over
    layers (an `scf.for` from 0 to L that reads some arguments of L rows,
    its stacked weights, only at row `iv`) is first split into K loops over
    consecutive layers, each reading its own rows, so that its layers can
    go to different stages. An op without
    `sbp.stage` joins the earliest stage that uses it; constants, empty
    tensors and fills of them are made again in every stage that uses them
    instead of being sent. Each stage becomes a function `@<f>_stage<k>`
    whose arguments say where their values come from (`sbp.source`: a
    function input, cut into micro-batches or whole, the rows of an input a
    stage uses only rows of (`offset`), or a result of an earlier stage);
    the function itself is replaced by them and the module
    records the pipeline in `sbp.pipeline`: the stages in order, the mesh
    they run on (`@pipeline`, of shape `mesh`, whose first axis numbers
    the stages: stage k runs on the devices at position k along it), the
    number of micro-batches, the schedule (`gpipe` or `1f1b`) and how each
    result of the function is made from a stage's results. After
    partitioning, `sbp-insert-transfers` turns the values passed between
    stages into `sbp.send` and `sbp.recv`.

    A training step (`sbp.train_step`, from `sbp-make-train-step`) is
    pipelined as its loss: its batch is the arguments after the parameters
    and state whose dimension 0 is that of the first of them, its loss
    function (the ops the loss depends on) is cut as above, and each stage
    gets two more functions: `@<f>_stage<k>_backward`, which recomputes the
    stage's forward from its inputs and differentiates it (the gradients
    of its results come from the stages that used them), returning the
    gradients of what it received and of its parameters, and
    `@<f>_stage<k>_update`, the optimizer's update of the stage's
    parameters and their state from the gradients summed over the
    micro-batches (gradient accumulation). `sbp.pipeline` names them
    (`backward`, `update`); the updated parameters and state are outputs
    of the updates (of several, one after another along dimension 0, for
    a stacked weight whose rows several stages own; their optimizer state
    is cut the same way).

    Constraints: the function has no layout annotations (a pipeline
    chooses the layouts of each stage); with more than one micro-batch
    some argument is a batch; batch arguments have a static
    dimension 0 that `micro-batches` divides; no op needs communication
    between micro-batches; stages follow the data flow (no stage uses a
    value of a later one); there are at least as many ops as stages;
    `stages` and `sbp.stage` are not both given; the first axis of `mesh`
    is the number of stages; a training step's parameters are each used by
    one stage, or by several as disjoint rows that cover it.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function to pipeline (default: the only one)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Number of stages with balanced work (default: the sbp.stage "
           "attributes)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Number of micro-batches">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe (all forward, then all backward) or 1f1b">,
    Option<"mesh", "mesh", "std::string", /*default=*/"\"\"",
           "The pipeline's mesh, e.g. 2x4: its first axis numbers the "
           "stages (default: one device per stage)">,
    ListOption<"batchArgs", "batch-args", "int64_t",
               "Arguments cut into micro-batches along dimension 0 "
               "(default: those whose dimension 0 is a parallel loop of "
               "their readers)">,
  ];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

def SbpInsertTransfersPass : Pass<"sbp-insert-transfers", "ModuleOp"> {
  let summary = "Pass values between pipeline stages with sbp.send and sbp.recv";
  let description = [{
    In a partitioned pipeline (`sbp.pipeline`, see `sbp-split-stages`) a
    stage argument that another stage computes (`sbp.source = {stage = S,
    result = R}`) becomes an `sbp.recv` from stage `S` at the start of the
    stage, and that result of stage `S` an `sbp.send` to every stage that
    takes it, before its return; both go along the first axis of the
    pipeline's mesh, from a device to the one at the same position of the
    other stage. A sender's result that is not an output of the program is
    no longer returned, and `sbp.pipeline`'s outputs are renumbered. Each
    stage then takes only the program's inputs and returns only its
    outputs; messages between two stages are sent and received in the
    order of the sender's results. A module without `sbp.pipeline` is left
    unchanged.

    In a training pipeline the forward functions also return what they
    received (after their other results, in argument order), which their
    backward functions take as those arguments; a backward function's
    `{backward = T, result = R}` arguments are received from stage `T`,
    whose backward sends its result `R` instead of returning it.

    Constraints: the stages are partitioned (their arguments have local
    types) and a received argument's type is the type its sender returns.
  }];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

def SbpInsertBoxingPass : Pass<"sbp-insert-boxing", "ModuleOp"> {
  let summary = "Insert sbp.boxing where a producer's layout differs from a use's";
  let description = [{
    Reads the layouts recorded by `sbp-propagate` and, on every use whose
    needed layout differs from its value's, routes the value through an
    `sbp.boxing`. Uses of one value that need the same layout share one
    boxing, placed right after the value is defined.
  }];
  let dependentDialects = ["::mlir::sbp::SbpDialect"];
}

def SbpPartitionPass : Pass<"sbp-partition", "ModuleOp"> {
  let summary = "Rewrite a laid-out program into the program each device runs";
  let description = [{
    Turns the logical program, with layouts recorded by `sbp-propagate` and
    boxings inserted by `sbp-insert-boxing`, into the SPMD program every
    device runs on its own pieces:

    * function arguments and results take their local types (their
      `sbp.sharding` stays, for the runtime);
    * every op computes on local pieces: result types become local, and
      `tensor.empty`, `tensor.expand_shape`, `tensor.extract_slice`,
      `tensor.insert_slice` and split constants are rebuilt with local sizes;
    * every `sbp.boxing` becomes the cheapest sequence of collectives and
      local steps of the boxing table, one mesh axis at a time: all-reduce
      for `P -> B`, reduce-scatter for `P -> S`, all-gather for `S -> B`,
      all-to-all for `S(i) -> S(j)`, a slice at the device's offset
      (`sbp.axis_index`) for `B -> S`, the first device keeping its copy and
      the others zeros for `B -> P(sum)`, and the device's piece padded
      with the reduction's neutral element for `S -> P`;
    * a `linalg.index` of a loop that a structured op's layouts split gets
      the device's offset along that loop added, so the payload (a causal
      mask, a one-hot, a position) still sees global indices;
    * `sbp.annotate` ops disappear and the recorded layouts are removed;
    * the module gets the unit attribute `sbp.partitioned`, which tells
      `sbp-run` that its functions take local shards.

    A dimension whose balanced pieces differ in size between devices gets a
    dynamic local size, computed from the device's mesh coordinates.

    Constraints: split dimensions of function arguments have static sizes.
  }];
  let dependentDialects = [
    "::mlir::sbp::SbpDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SbpLowerCollectivesPass : Pass<"sbp-lower-collectives", "ModuleOp"> {
  let summary = "Turn collectives and sbp.axis_index into calls of the runtime";
  let description = [{
    Rewrites every collective of a partitioned program, still on tensors,
    into a call of the C ABI in `include/sbp/Runtime/sbp_program.h`: the
    operand becomes a read-only buffer (`bufferization.to_buffer`), the
    result a fresh allocation that the call fills and that becomes a tensor
    again (`bufferization.to_tensor restrict writable`), so that one-shot
    bufferization and the deallocation pipeline treat the result like any
    other allocation. Buffers pass as unranked memrefs to the entry point
    for their element type (`sbp_rt_all_reduce_f32`, ...); the mesh axes
    (packed, 8 bits each) and the op's attributes pass as `i64`. Dynamic result sizes come from the operand, from the runtime's
    balanced piece of a size (`reduce_scatter`, `all_to_all`) or from the
    group's sum of the operand's sizes (`all_gather`, `all_to_all`).
    `sbp.axis_index` becomes a call that returns the rank's coordinate.

    Constraints: element types are f32, f64, f16, bf16, i32, i64, i8 or i1
    (signless); at most 8
    mesh axes, each below 256, per collective; `sbp.recv` results have
    static shapes.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SbpTileAndVectorizePass : Pass<"sbp-tile-and-vectorize", "ModuleOp"> {
  let summary = "Tile and vectorize matmuls and transposes for the host CPU";
  let description = [{
    Applies a transform-dialect schedule to every f32 and f64
    `linalg.matmul` on tensors of static shape, and to the matmuls a
    static `linalg.batch_matmul` becomes: a loop over the batch of
    `linalg.matmul` on its slices (attention's products, one small matrix
    per batch element and head, ran as scalar loops: half of a GPT training
    step on one CPU rank). B is first packed into
    panels of `2V` columns (`[K][N]` viewed as `[K][N/2V][2V]` and
    transposed to `[N/2V][K][2V]`, C viewed as `[M][N/2V][2V]`), so that a
    register tile reads consecutive memory along the reduction; the
    contraction on the panels is tiled for the caches (up to 32 rows, 32
    panels, 256 deep), then in register tiles of `R x 2V`, where `V` is the
    number of elements in one vector register and `R` keeps the
    accumulators in half of the registers, or the largest power of two
    below that divides the rows; the register tile is vectorized and its
    accumulators are hoisted out of the reduction loop. Tiles divide the
    sizes, so no vector needs masks. A matmul whose rows are no multiple of
    4 is first split into one on the rows that are (4-row tiles) and one on
    the last 1-3 rows (one-row tiles on B as it is, whose elements they
    read once: packing would cost more): a convolution's 7 x 7 positions
    make 49x4608x512 products, 823 ms as loops, 20 ms in one-row tiles,
    4.6 ms split. A matmul whose columns are no multiple of `V` is left to
    the loops. When the
    matmul's only user is an element-wise `linalg.generic` over its result
    (a bias, an activation, fused into one op by element-wise fusion), B is
    not packed: that consumer is tiled for the cache (64x512), the matmul
    is fused into its loops and tiled 32 deep, and the consumer's tile is
    vectorized in the same loop nest while the matmul's tile is in cache.
    A static `linalg.transpose` that moves the innermost dimension (the
    operands `sbp-specialize-contractions` puts in order for the products:
    `Xᵀ` of a weight gradient) runs in square blocks of one vector
    register's elements (`V x V`, one element along the other dimensions),
    each vectorized: rows read, transposed in registers, rows written. Its
    plain loops read with the stride of a whole row, one cache set for a
    power-of-two row (11.7 of 84 ms in a GPT step on one rank; 5.8 with
    blocks). Transposes that keep the innermost dimension (whole rows
    copied) and sizes no block divides are left to the loops.
    The vector width is read from the host
    CPU at compile time (AVX-512: 512 bits, AVX/AVX2: 256, otherwise 128)
    unless `vector-bits` sets it.

    Constraints: `vector-bits` is 0, 128, 256 or 512.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Bits of one vector register (0: the host CPU's)">,
  ];
  let dependentDialects = [
    "::mlir::transform::TransformDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def SbpMatmulToBlasPass : Pass<"sbp-matmul-to-blas", "ModuleOp"> {
  let summary = "Call OpenBLAS for f32 and f64 matmuls";
  let description = [{
    Replaces every f32 and f64 `linalg.matmul` on tensors with the default
    indexing maps by a call of the runtime's `sbp_rt_matmul_f32` /
    `sbp_rt_matmul_f64`, which computes `C + A * B` with `cblas_sgemm` /
    `cblas_dgemm` (one thread per rank) into a fresh buffer, the same way
    `sbp-lower-collectives` calls collectives. When C is a `linalg.fill`
    of zero, the call is told not to read it (`beta = 0`). Other matmuls are left to
    code generation.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SbpMatmulToCublasPass : Pass<"sbp-matmul-to-cublas", "ModuleOp"> {
  let summary = "Call cuBLAS for matmuls and batched matmuls";
  let description = [{
    Replaces every `linalg.matmul` and `linalg.batch_matmul` on tensors
    with the default indexing maps whose operands are f32, f64, f16 or
    bf16 (A and B of one type; C of that type or f32) by a call of the
    runtime's `sbp_rt_cuda_matmul`, which computes `C + A * B` into a fresh
    buffer with `cublasGemmStridedBatchedEx` on the rank's stream. f16 and
    bf16 products accumulate in f32 on the tensor cores; with `tf32` f32
    products use TF32 tensor cores (10-bit mantissas, as PyTorch's
    `allow_tf32`), otherwise they are exact f32. When C is a `linalg.fill`
    of zero the call does not read it (`beta = 0`). Other matmuls are left
    to the generated kernels.

    Constraints: none; ops of other types or with user-defined indexing
    maps are left as they are.
  }];
  let options = [
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "Let f32 products use TF32 tensor cores">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SbpGpuBuffersPass : Pass<"sbp-gpu-buffers", "ModuleOp"> {
  let summary = "Place every buffer of a bufferized program in device memory";
  let description = [{
    Runs after one-shot bufferization and ownership-based deallocation, in
    place of the deallocation lowering: every buffer of the program lives
    in the memory of the rank's GPU, so that kernels, cuBLAS and NCCL work
    on it with no copy to the host.

    - `memref.alloc` becomes `gpu.alloc` (stream-ordered allocation on the
      rank's stream in sbp's runtime);
    - `bufferization.clone` becomes `gpu.alloc` and a `memref.copy` (a
      kernel after `sbp-linalg-to-gpu`);
    - `memref.get_global` (a bufferized constant, such as an imported
      model's weights, in host memory) is read through a device copy:
      `gpu.alloc` and `gpu.memcpy` after it, `gpu.dealloc` at the end of
      its block;
    - `bufferization.dealloc` becomes, for each buffer, a comparison of
      base pointers (host integers, no device access) with the retained
      buffers and the earlier ones, and a `gpu.dealloc` under the
      resulting condition; the ownership of each retained buffer is
      computed the same way. `memref.dealloc` becomes `gpu.dealloc`;
    - a `memref.load` outside structured ops (a tensor element that
      decides host control flow: an `scf.if` condition, a `while` loop's
      test) reads through copies: a `memref.copy` of the element into a
      one-element device buffer (a kernel after `sbp-linalg-to-gpu`),
      then `gpu.memcpy` into a one-element `memref.alloca` at the top of
      the function (once, however often a loop reads through it), which
      the host loads after the copy.

    Function arguments and results are device buffers: the host uploads
    the arguments and frees the results it downloaded.

    Constraints: `memref.alloca` of tensors is not supported (device
    memory only); the pass reports it.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def SbpLinalgToGpuPass : Pass<"sbp-linalg-to-gpu", "ModuleOp"> {
  let summary = "Turn each linalg op on buffers into a GPU kernel launch";
  let description = [{
    Every structured op on buffers (`linalg.generic` after element-wise
    fusion, `linalg.fill`, `linalg.copy`, reductions, transposes,
    broadcasts, contractions that cuBLAS does not take) and every
    `memref.copy` becomes one `gpu.launch` of `block-size` threads per
    block with one thread per point of the op's parallel loops: the thread
    delinearizes its index (innermost loop fastest, so neighbouring threads
    touch neighbouring elements), loads the operands through the indexing
    maps, runs the reduction loops serially with the accumulators in
    registers, and stores the results once. An op whose operands are all
    indexed by the identity map is addressed as one flat vector. A fused
    element-wise chain is therefore one kernel that reads each input and
    writes each output once.

    An op that writes an output at a reduction loop's index (a gradient
    scattered through a convolution's `h + kh`, or a fused chain whose
    element-wise outputs span a reduction loop beside a sum over it) runs
    one thread per point of all its loops instead. Outputs whose map is a
    permutation of the loops belong to one point each and are loaded and
    stored as above; each other output must be a sum into itself (the
    payload yields `out + term` with `out` read nowhere else and the sum
    used nowhere else), and its term is added with `memref.atomic_rmw`
    (`addf` or `addi`). The order of those additions is the hardware's.

    A `linalg.fill` right before an op that writes the filled buffer as an
    output (and does not read it as an input), with nothing but pure ops
    between them, is folded into that op: its accumulators start from the
    fill's value, one kernel fewer (the initial values of reductions). An
    op that adds atomically keeps its fills as kernels before it.

    The launch is skipped when the op has no points. Loop extents are
    computed on the host from buffer sizes; no device memory is read there.

    Constraints: after the pass no `memref.load`, `memref.store` or vector
    transfer outside a kernel touches a buffer, since buffers live in
    device memory; such an op (a tensor element read into host control
    flow that `sbp-gpu-buffers` did not read through a host buffer) is
    reported with its location. An output that several points of an op's
    loops write must be a sum into itself (`out + term`); any other
    payload there (a maximum, a product) is reported.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::affine::AffineDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def SbpOverlapCollectivesPass : Pass<"sbp-overlap-collectives", "ModuleOp"> {
  let summary = "Let collectives run beside the kernels that do not need them";
  let description = [{
    In a program whose buffers live on the GPU (after `sbp-gpu-buffers`
    and `sbp-linalg-to-gpu`), brackets every collective call of the
    runtime (`sbp_rt_<all_reduce|all_gather|reduce_scatter|all_to_all|
    broadcast|send|recv>_<type>`) with `sbp_rt_cuda_collective_begin` and
    `sbp_rt_cuda_collective_end`, which queue it on the rank's
    communication stream after everything queued before it, and places
    `sbp_rt_cuda_collective_wait` (the compute stream waits for it) right
    before the first later op in the same block that uses any view of the
    collective's buffers: a kernel launch, a runtime call, a deallocation
    or the return. Kernels in between, which touch neither buffer, run on
    the compute stream while the collective runs.

    Constraints: none; a collective whose buffers are used right away
    waits right away.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def SbpEmulateGpuPass : Pass<"sbp-emulate-gpu", "ModuleOp"> {
  let summary = "Run the GPU lowering's kernels as host loops (testing)";
  let description = [{
    Replaces every `gpu.launch` by loops over its blocks and threads that
    run its body on the host, `gpu.alloc` by `memref.alloc`, `gpu.dealloc`
    by `memref.dealloc`, `gpu.memcpy` by `memref.copy`, and drops
    `gpu.wait`. With it, the program that
    `sbp-gpu-buffers` and `sbp-linalg-to-gpu` produce runs through the CPU
    lowering, so that the kernels' indexing, reductions and buffer
    lifetimes are checked numerically against the reference on machines
    without a GPU (`sbp-run --emulate-gpu`).

    Constraints: launches must not use shared memory, barriers or
    cluster sizes; `sbp-linalg-to-gpu` emits none.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def SbpStripPass : Pass<"sbp-strip", "ModuleOp"> {
  let summary = "Remove meshes and layout attributes before lowering to LLVM";
  let description = [{
    Once a program is partitioned (or was never distributed), its meshes and
    `sbp.*` layout, pipeline, training-step and stop-gradient attributes
    only describe it; this pass removes them so that the program can be
    lowered and translated to LLVM. The
    logical-level ops `sbp.annotate` and `sbp.boxing` leave the value they
    describe unchanged, so they are replaced by their operand: a logical
    program runs as it is on one rank. The ops that compute (collectives,
    `sbp.axis_index`) must already be lowered by `sbp-lower-collectives`.

    Constraints: no collective or `sbp.axis_index` remains.
  }];
}

def SbpDecomposeAggregatesPass
    : Pass<"sbp-decompose-aggregates", "func::FuncOp"> {
  let summary = "Decompose linalg.softmax and other aggregated ops into "
                "structured ops, math.clampf into a minimum and a maximum";
  let description = [{
    Ops of `linalg::AggregatedOpInterface` (`linalg.softmax`) stay whole
    through the search: one SBP rule (split any dimension but the one
    normalized), one gradient rule (`dx = y * (dy - sum(dy * y))` over that
    dimension) and one op for the cost model. Neither lowering has loops
    for them, so each rank's program replaces them by the structured ops
    upstream's `decomposeOperation` builds (for softmax: the maximum, the
    shifted exponential, their sum and the division, as `linalg.generic`
    and `linalg.fill`), which fuse and tile like any other.

    `math.clampf` (an aggregate of a minimum and a maximum, element-wise in
    the search and in autodiff) becomes `arith.maximumf(arith.minimumf(value,
    max), min)`: a clamp, as CUDA and SPIR-V define it and as upstream MLIR
    now documents the op. MLIR 22's `math-expand-ops` builds its earlier
    formula, `maximumf(minimumf(value, min), max)`, which is `max` wherever
    `min < max`.

    Constraints: the aggregated ops have tensor results (the pass runs before
    bufferization).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "math::MathDialect"];
}

def SbpSpecializeContractionsPass
    : Pass<"sbp-specialize-contractions", "func::FuncOp"> {
  let summary = "Turn generic matrix products into linalg.matmul and "
                "linalg.batch_matmul";
  let description = [{
    A `linalg.generic` that computes `C[batch.., m.., n..] += A[batch..,
    m.., k..] * B[batch.., k.., n..]`, each operand's dimensions in any
    order (a product with a transposed operand, as gradients of matmuls
    are; attention's products over batch and head loops; a weight applied
    to every position of a batch of sequences, or its gradient summed over
    both), becomes `linalg.transpose` of the operands that need it and a
    `linalg.matmul`, or, with batch loops, a `linalg.batch_matmul`, each
    group of loops merged into one (`tensor.collapse_shape`, then
    `expand_shape` and a transpose back to the output's order). The CPU lowering tiles and vectorizes matmuls or
    hands them to BLAS, the GPU lowering hands both to cuBLAS, and the cost
    model prices such generics at the contraction rate. A transpose moves
    `O(n^2)` elements for an `O(n^3)` product. Upstream's
    `linalg-specialize-generic-ops` does not transpose and builds an
    invalid matmul from such products.

    The body must be exactly a multiplication of the two inputs added to
    the output (floats of one type); every loop must be one of the rows
    `m` (read by `A` and `C`), the columns `n` (`B` and `C`), the
    reductions `k` (`A` and `B`) or a batch loop (all three), with at least
    one row, column and reduction; `A` is the input that reads the
    lowest-numbered row or column loop. Other generics are left alone.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def SbpUnfoldConvolutionsPass
    : Pass<"sbp-unfold-convolutions", "func::FuncOp"> {
  let summary = "Turn convolutions written as linalg.generic into matrix "
                "products";
  let description = [{
    A `linalg.generic` that multiplies and accumulates like a matrix
    product but reads one operand through window positions — `h * stride
    + kh * dilation`, as the importers write convolutions and the
    autodiff writes their gradients — becomes a matrix product that
    `sbp-specialize-contractions` then hands to the tuned matmul paths:

    - loops of extent 1 are dropped first (upstream's unit-dimension
      folding: a convolution's group loop for one group, a 1x1 kernel's
      window loops, a batch of one), so a 1x1 convolution of stride 1
      needs nothing more;
    - an input read through window positions (the image of a convolution
      or of its kernel's gradient) is gathered into a tensor over the
      loops those positions use (im2col), the output's loops first, then
      the other input's, so the product reads it without a transpose;
    - an output written through window positions (the image's gradient)
      gets the products over the loops its positions use, from zero, then
      a generic adds them into the output, summing over the loops that
      only a window position reads (col2im).

    The gathered image is `kh * kw / stride^2` times the image's size: a
    copy of `O(n^2)` elements for a product of `O(n^3)` flops. The cost
    model prices such generics at the contraction rate.

    The body must be exactly a multiplication of the two inputs added to
    the output (floats of one type), every static loop extent known, every
    indexing map result a loop or a sum of loops times positive constants
    (plus a constant), and the op must be a matrix product once unfolded
    (see `sbp-specialize-contractions`); other generics are left alone.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def SbpFuseElementwisePass : Pass<"sbp-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse element-wise producers into consumers without "
                "recomputing them";
  let description = [{
    Upstream's element-wise fusion, reshape propagation and constant folding
    of `linalg.generic` ops, limited to fusions that do no work twice and
    keep named ops whole:

    - a producer is fused into a consumer only where the consumer reads it
      through a permutation of all its loops, so each producer element is
      computed once (fusing GELU into a matmul that reads it once per output
      column would compute it N times);
    - reshapes are not propagated through named ops (`linalg.matmul`), which
      the CPU lowering tiles or hands to BLAS as they are;
    - a producer with more than one user is left alone.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "affine::AffineDialect"];
}

def SbpOutlineLoopNestsPass : Pass<"sbp-outline-loop-nests", "ModuleOp"> {
  let summary = "Move the loop nests of large functions into functions of "
                "their own";
  let description = [{
    After bufferization a whole model is one function holding a loop nest
    per op: thousands for BERT-base. LLVM's loop passes (IndVarSimplify
    first) take time that grows faster than linearly with the loops of one
    function: minutes for BERT, and every pass of the lowering after
    bufferization works on the one function alone. In functions with more
    than `min-loops` top-level nests (an `scf.for` or `scf.parallel`
    without results, or a linalg op on buffers, which becomes loops later),
    each nest moves into a private function of its own, marked `noinline`,
    called in its place; the values it uses from above become arguments,
    except constants, which are cloned. The call costs nanoseconds per
    nest. `--sbp-lower-cpu` outlines right after bufferization, so that
    the deallocation pipeline and every conversion after it run once per
    distinct nest, on the functions in parallel.

    Nests that are the same but for the values they are given (each layer
    of a model runs the same nests on other buffers) share one function:
    a nest equal to one outlined before, op by op with the same attributes
    and types (locations aside), calls that function instead of a new one.
    LLVM then compiles each distinct nest once: a model of 8 identical
    layers compiles about a fifth of the code. A nest whose memrefs all
    have static shapes, strides and offsets is marked `llvm.bareptr`: it
    takes one pointer per memref instead of a descriptor (two pointers and
    two integers per dimension, each unpacked by the caller: most of a
    model's glue before), and rebuilds the rest from the types. A function
    left without loops runs once a call (allocations, views, calls): it is
    marked `noinline` and `optnone`, so that LLVM spends no time optimizing
    it.

    Constraints: none; a function with `min-loops` nests or fewer is left
    as it is.
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"32",
           "Outline only in functions with more top-level loop nests">,
  ];
  let dependentDialects = ["func::FuncDialect"];
}

def SbpConvertToLibcCallsPass
    : Pass<"sbp-convert-to-libc-calls", "ModuleOp"> {
  let summary = "Call the C library for the math ops and asserts that remain, "
                "if any remain";
  let description = [{
    Runs upstream's `convert-math-to-libm` when the module still holds a
    `math` op, and `convert-cf-to-llvm` when it holds a `cf.assert` (which
    becomes a call of `abort`), and does nothing otherwise. It comes after
    `convert-math-to-llvm`, which lowers what LLVM has intrinsics for, so
    that only the rest (`math.erf`, `math.atan2`, ...) becomes calls, and
    before `sbp-convert-bodies-to-llvm`, which leaves both kinds of op
    alone because their lowerings declare functions in the module. In a
    model's lowering there is usually nothing to do, but each upstream pass
    converts the whole module to find it out: 0.05-0.1 s each on
    MobileViT's 100k ops, against one walk that stops once it has seen
    both kinds.

    Constraints: none beyond `convert-math-to-libm`'s and
    `convert-cf-to-llvm`'s.
  }];
  let dependentDialects = [
    "arith::ArithDialect",
    "func::FuncDialect",
    "LLVM::LLVMDialect",
    "vector::VectorDialect",
  ];
}

def SbpConvertBodiesToLLVMPass
    : Pass<"sbp-convert-bodies-to-llvm", "func::FuncOp"> {
  let summary = "Lower a function's vector, ub, arith, cf and index ops to "
                "LLVM in one conversion";
  let description = [{
    Does, in one dialect conversion per function, what upstream's
    `convert-vector-to-llvm`, `convert-ub-to-llvm`, `convert-arith-to-llvm`,
    `convert-cf-to-llvm` and `convert-index-to-llvm` do in five: it first
    rewrites the vector ops that have no LLVM counterpart (broadcasts,
    transposes element-wise, contractions as outer products, shape casts,
    1-d transfers, masks, strided slices) with the patterns
    `convert-vector-to-llvm` applies, then converts the function's body.
    Each upstream pass walks every op of the module and leaves casts at its
    boundary with the next; on a model's lowered program of a few hundred
    functions (MobileViT's), the five took 0.39 s of wall time on two
    threads and this pass takes 0.16-0.17 s.

    The function's signature, `func.call` and `func.return` are left to
    `convert-func-to-llvm`, memrefs to `finalize-memref-to-llvm` (which
    comes before), math ops to `convert-math-to-llvm` and libm, and
    `cf.assert` to `convert-cf-to-llvm`: those declare functions (`abort`,
    `malloc`, libm's) in the module, which a pass converting the module's
    functions in parallel must not touch. Casts between converted and
    unconverted values are left for `reconcile-unrealized-casts`.

    Constraints: none beyond the upstream conversions'; an op that none of
    them converts stays as it was.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def SbpLegalizeStablehloPass : Pass<"sbp-legalize-stablehlo", "ModuleOp"> {
  let summary = "Convert StableHLO and CHLO ops into the logical program";
  let description = [{
    Rewrites every `stablehlo.*` and `chlo.*` op into func/linalg/tensor/
    arith/math on tensors, the input sbp partitions:

    - element-wise ops become `linalg.generic`s whose payload is the op's
      scalar form; `reduce`, `reduce_window` and `scatter` carry their
      combiner region into the payload (an add, mul, max or min combiner is
      what SBP derivation recognizes as `P(sum|max|min)`);
    - `dot_general` becomes `linalg.matmul` or `linalg.batch_matmul` when the
      operands are laid out for them (the lhs's leading free dimensions
      collapsed), other contractions and convolutions `linalg.generic`s with
      their indexing maps; reshapes, transposes, slices, pads and concats
      become tensor ops and `linalg.transpose`;
    - `while` loops whose trip count follows from constants are unrolled and
      `case` ops with a constant index inlined;
    - constants whose values the file left out (`dense_resource`, printed
      as `__elided__`) become arguments of their function, with a warning,
      so that the program runs with weights given as inputs;
    - shardings (`mhlo.sharding` on arguments and results, JAX's
      `custom_call @Sharding`) become `sbp.sharding` attributes and
      `sbp.annotate` ops on one `sbp.mesh @mesh` whose axes cut the device
      ids at every boundary the shardings use: `{devices=[1,2]<=[2]}`
      becomes `#sbp.nd<@mesh, [S(1)]>`; Shardy's `sdy.mesh`, `sdy.sharding`
      and `sdy.sharding_constraint` become an `sbp.mesh` of the same axes,
      `sbp.sharding` and `sbp.annotate`.

    Calls are expected to be inlined first (the `sbp-import-stablehlo`
    pipeline does that). Every op that cannot be converted is reported at its
    location, then the pass fails.

    Constraints: shapes are static; a `while` trip count and `dynamic_slice`
    and `case` indices follow from constants; `dot_general` operands and
    result share an element type; the shardings of a module use one device
    count.
  }];
  let dependentDialects = ["::mlir::sbp::SbpDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "math::MathDialect",
                           "tensor::TensorDialect"];
}

#endif // SBP_TRANSFORMS_PASSES_TD
