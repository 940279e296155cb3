//===- StablehloOps.td - The StableHLO subset sbp reads ----*- tablegen -*-===//

#ifndef SBP_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD
#define SBP_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Stablehlo_Dialect : Dialect {
  let name = "stablehlo";
  let cppNamespace = "::mlir::sbp::stablehlo";
  let summary = "The subset of StableHLO that sbp imports";
  let description = [{
    The ops of StableHLO that JAX, torch-xla and XLA print for the models
    sbp imports, with the same names, attributes and textual forms (the
    pretty forms as printed by StableHLO's own printers and the generic
    forms with `<{...}>` properties), so that their printed programs parse
    as they are. The ops exist to be converted: `sbp-legalize-stablehlo`
    rewrites them into func/linalg/tensor/arith/math.

    The dialect is a reading device, not a second IR: verifiers check only
    what the conversion relies on (operand counts and attribute presence);
    the conversion checks shapes and reports a located error for what it
    cannot express.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Stablehlo_Op<string mnemonic, list<Trait> traits = []>
    : Op<Stablehlo_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enumerations and attributes
//===----------------------------------------------------------------------===//

def Stablehlo_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0>, I32EnumAttrCase<"NE", 1>,
      I32EnumAttrCase<"GE", 2>, I32EnumAttrCase<"GT", 3>,
      I32EnumAttrCase<"LE", 4>, I32EnumAttrCase<"LT", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::sbp::stablehlo";
}
def Stablehlo_ComparisonDirectionAttr
    : EnumAttr<Stablehlo_Dialect, Stablehlo_ComparisonDirection,
               "comparison_direction">;

def Stablehlo_ComparisonType : I32EnumAttr<"ComparisonType",
    "comparison type", [
      I32EnumAttrCase<"NOTYPE", 0>, I32EnumAttrCase<"FLOAT", 1>,
      I32EnumAttrCase<"TOTALORDER", 2>, I32EnumAttrCase<"SIGNED", 3>,
      I32EnumAttrCase<"UNSIGNED", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::sbp::stablehlo";
}
def Stablehlo_ComparisonTypeAttr
    : EnumAttr<Stablehlo_Dialect, Stablehlo_ComparisonType, "comparison_type">;

def Stablehlo_Precision : I32EnumAttr<"Precision", "operand precision", [
      I32EnumAttrCase<"DEFAULT", 0>, I32EnumAttrCase<"HIGH", 1>,
      I32EnumAttrCase<"HIGHEST", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::sbp::stablehlo";
}
def Stablehlo_PrecisionAttr
    : EnumAttr<Stablehlo_Dialect, Stablehlo_Precision, "precision">;

def Stablehlo_PrecisionConfigAttr
    : TypedArrayAttrBase<Stablehlo_PrecisionAttr, "precision config">;

def Stablehlo_DotDimensionNumbers : AttrDef<Stablehlo_Dialect, "DotDimensionNumbers"> {
  let mnemonic = "dot";
  let summary = "Batching and contracting dimensions of a dot_general";
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$lhsBatchingDimensions,
    ArrayRefParameter<"int64_t">:$rhsBatchingDimensions,
    ArrayRefParameter<"int64_t">:$lhsContractingDimensions,
    ArrayRefParameter<"int64_t">:$rhsContractingDimensions
  );
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_GatherDimensionNumbers : AttrDef<Stablehlo_Dialect, "GatherDimensionNumbers"> {
  let mnemonic = "gather";
  let summary = "Dimension numbers of a gather";
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$offsetDims,
    ArrayRefParameter<"int64_t">:$collapsedSliceDims,
    ArrayRefParameter<"int64_t">:$operandBatchingDims,
    ArrayRefParameter<"int64_t">:$startIndicesBatchingDims,
    ArrayRefParameter<"int64_t">:$startIndexMap,
    "int64_t":$indexVectorDim
  );
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_ScatterDimensionNumbers : AttrDef<Stablehlo_Dialect, "ScatterDimensionNumbers"> {
  let mnemonic = "scatter";
  let summary = "Dimension numbers of a scatter";
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$updateWindowDims,
    ArrayRefParameter<"int64_t">:$insertedWindowDims,
    ArrayRefParameter<"int64_t">:$inputBatchingDims,
    ArrayRefParameter<"int64_t">:$scatterIndicesBatchingDims,
    ArrayRefParameter<"int64_t">:$scatterDimsToOperandDims,
    "int64_t":$indexVectorDim
  );
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_ConvDimensionNumbers : AttrDef<Stablehlo_Dialect, "ConvDimensionNumbers"> {
  let mnemonic = "conv";
  let summary = "Layouts of a convolution's input, kernel and output";
  let description = [{
    Printed compactly as `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`: per
    operand dimension, `b` batch, `f` feature, `i`/`o` kernel input/output
    feature, and the number of the spatial dimension it holds.
  }];
  let parameters = (ins
    "int64_t":$inputBatchDimension,
    "int64_t":$inputFeatureDimension,
    ArrayRefParameter<"int64_t">:$inputSpatialDimensions,
    "int64_t":$kernelInputFeatureDimension,
    "int64_t":$kernelOutputFeatureDimension,
    ArrayRefParameter<"int64_t">:$kernelSpatialDimensions,
    "int64_t":$outputBatchDimension,
    "int64_t":$outputFeatureDimension,
    ArrayRefParameter<"int64_t">:$outputSpatialDimensions
  );
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

class Stablehlo_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Stablehlo_Op<mnemonic, !listconcat([Pure], traits)> {
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand attr-dict `:`
    custom<SameOperandsAndResultType>(type($operand), type($result))
  }];
}

foreach pair = [["abs", "Abs"],
        ["negate", "Negate"],
        ["exponential", "Exponential"],
        ["log", "Log"],
        ["sqrt", "Sqrt"],
        ["rsqrt", "Rsqrt"],
        ["tanh", "Tanh"],
        ["logistic", "Logistic"],
        ["not", "Not"],
        ["floor", "Floor"],
        ["ceil", "Ceil"],
        ["cosine", "Cosine"],
        ["sine", "Sine"],
        ["sign", "Sign"],
        ["log_plus_one", "LogPlusOne"],
        ["exponential_minus_one", "ExponentialMinusOne"],
        ["round_nearest_even", "RoundNearestEven"],
        ["round_nearest_afz", "RoundNearestAfz"],
        ["cbrt", "Cbrt"],
        ["tan", "Tan"],
        ["convert", "Convert"],
        ["bitcast_convert", "BitcastConvert"],
        ["is_finite", "IsFinite"]] in
  def Stablehlo_ # pair[1] # Op : Stablehlo_UnaryOp<pair[0]>;

class Stablehlo_BinaryOp<string mnemonic>
    : Stablehlo_Op<mnemonic, [Pure]> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
    custom<SameOperandsAndResultType>(type($lhs), type($rhs), type($result))
  }];
}

foreach pair = [["add", "Add"],
        ["subtract", "Subtract"],
        ["multiply", "Multiply"],
        ["divide", "Divide"],
        ["maximum", "Maximum"],
        ["minimum", "Minimum"],
        ["power", "Power"],
        ["and", "And"],
        ["or", "Or"],
        ["xor", "Xor"],
        ["remainder", "Remainder"],
        ["atan2", "Atan2"],
        ["shift_left", "ShiftLeft"],
        ["shift_right_arithmetic", "ShiftRightArithmetic"],
        ["shift_right_logical", "ShiftRightLogical"]] in
  def Stablehlo_ # pair[1] # Op : Stablehlo_BinaryOp<pair[0]>;

def Stablehlo_CompareOp : Stablehlo_Op<"compare", [Pure]> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   Stablehlo_ComparisonDirectionAttr:$comparison_direction,
                   OptionalAttr<Stablehlo_ComparisonTypeAttr>:$compare_type);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $comparison_direction `,` $lhs `,` $rhs (`,` $compare_type^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Stablehlo_SelectOp : Stablehlo_Op<"select", [Pure]> {
  let arguments = (ins AnyTensor:$pred, AnyTensor:$on_true,
                   AnyTensor:$on_false);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    operands attr-dict `:` custom<SelectOpType>(type($pred), type($on_true),
                                                type($on_false), type($result))
  }];
}

def Stablehlo_ClampOp : Stablehlo_Op<"clamp", [Pure]> {
  let arguments = (ins AnyTensor:$min, AnyTensor:$operand, AnyTensor:$max);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $min `,` $operand `,` $max attr-dict `:`
    custom<SameOperandsAndResultType>(type($min), type($operand), type($max),
                                      type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

def Stablehlo_ConstantOp : Stablehlo_Op<"constant", [Pure, ConstantLike]> {
  let summary = "A constant; `dense_resource` values are weights left out";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_IotaOp : Stablehlo_Op<"iota", [Pure]> {
  let arguments = (ins I64Attr:$iota_dimension);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "`dim` `=` $iota_dimension attr-dict `:` type($output)";
}

def Stablehlo_BroadcastInDimOp : Stablehlo_Op<"broadcast_in_dim", [Pure]> {
  let arguments = (ins AnyTensor:$operand,
                   DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` custom<Dims>($broadcast_dimensions)
    attr-dict `:` functional-type(operands, results)
  }];
}

def Stablehlo_ReshapeOp : Stablehlo_Op<"reshape", [Pure]> {
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Stablehlo_TransposeOp : Stablehlo_Op<"transpose", [Pure]> {
  let arguments = (ins AnyTensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` custom<Dims>($permutation)
    attr-dict `:` functional-type(operands, results)
  }];
}

def Stablehlo_ReverseOp : Stablehlo_Op<"reverse", [Pure]> {
  let arguments = (ins AnyTensor:$operand, DenseI64ArrayAttr:$dimensions);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` custom<Dims>($dimensions) attr-dict `:`
    custom<SameOperandsAndResultType>(type($operand), type($result))
  }];
}

def Stablehlo_ConcatenateOp : Stablehlo_Op<"concatenate", [Pure]> {
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$dimension);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    custom<VariadicOperandWithAttribute>($inputs) `dim` `=` $dimension
    attr-dict `:` functional-type(operands, results)
  }];
}

def Stablehlo_SliceOp : Stablehlo_Op<"slice", [Pure]> {
  let arguments = (ins AnyTensor:$operand, DenseI64ArrayAttr:$start_indices,
                   DenseI64ArrayAttr:$limit_indices,
                   DenseI64ArrayAttr:$strides);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand custom<SliceRanges>($start_indices, $limit_indices, $strides)
    attr-dict `:` functional-type(operands, results)
  }];
}

def Stablehlo_DynamicSliceOp : Stablehlo_Op<"dynamic_slice", [Pure]> {
  let arguments = (ins AnyTensor:$operand, Variadic<AnyTensor>:$start_indices,
                   DenseI64ArrayAttr:$slice_sizes);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` custom<VariadicOperandWithAttribute>($start_indices)
    `sizes` `=` custom<Dims>($slice_sizes) attr-dict `:`
    functional-type(operands, results)
  }];
}

def Stablehlo_DynamicUpdateSliceOp
    : Stablehlo_Op<"dynamic_update_slice", [Pure]> {
  let summary = "The operand with `update` written at the start indices";
  let arguments = (ins AnyTensor:$operand, AnyTensor:$update,
                   Variadic<AnyTensor>:$start_indices);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` $update `,` $start_indices attr-dict `:`
    functional-type(operands, results)
  }];
}

def Stablehlo_PadOp : Stablehlo_Op<"pad", [Pure]> {
  let arguments = (ins AnyTensor:$operand, AnyTensor:$padding_value,
                   DenseI64ArrayAttr:$edge_padding_low,
                   DenseI64ArrayAttr:$edge_padding_high,
                   DenseI64ArrayAttr:$interior_padding);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` $padding_value `,` `low` `=` custom<Dims>($edge_padding_low)
    `,` `high` `=` custom<Dims>($edge_padding_high)
    `,` `interior` `=` custom<Dims>($interior_padding)
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Contractions, reductions, windows
//===----------------------------------------------------------------------===//

def Stablehlo_DotGeneralOp : Stablehlo_Op<"dot_general", [Pure]> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   Stablehlo_DotDimensionNumbers:$dot_dimension_numbers,
                   OptionalAttr<Stablehlo_PrecisionConfigAttr>:$precision_config);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,`
    custom<DotDimensionNumbers>($dot_dimension_numbers, $precision_config)
    attr-dict `:`
    functional-type(operands, results)
  }];
}

def Stablehlo_DotOp : Stablehlo_Op<"dot", [Pure]> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   OptionalAttr<Stablehlo_PrecisionConfigAttr>:$precision_config);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs custom<PrecisionConfig>($precision_config) attr-dict `:`
    functional-type(operands, results)
  }];
}

def Stablehlo_ReduceOp : Stablehlo_Op<"reduce", [SameVariadicOperandSize,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "Reduction with a combiner region";
  let description = [{
    Both printed forms parse: the short form
    `stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1]`
    and the body form with `reducer(%a: tensor<f32>, %b: tensor<f32>) {...}`.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                   Variadic<AnyTensor>:$init_values,
                   DenseI64ArrayAttr:$dimensions);
  let results = (outs Variadic<AnyTensor>);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_ReduceWindowOp : Stablehlo_Op<"reduce_window", [
    SameVariadicOperandSize, RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                   Variadic<AnyTensor>:$init_values,
                   DenseI64ArrayAttr:$window_dimensions,
                   OptionalAttr<DenseI64ArrayAttr>:$window_strides,
                   OptionalAttr<DenseI64ArrayAttr>:$base_dilations,
                   OptionalAttr<DenseI64ArrayAttr>:$window_dilations,
                   OptionalAttr<I64ElementsAttr>:$padding);
  let results = (outs Variadic<AnyTensor>);
  let regions = (region SizedRegion<1>:$body);
}

def Stablehlo_SelectAndScatterOp : Stablehlo_Op<"select_and_scatter", [
    RecursiveMemoryEffects]> {
  let summary = "Scatters each source element to the element its window selects";
  let description = [{
    The gradient of a max (or min) pooling as JAX writes it: for each
    window of `operand`, `select(current, candidate)` keeps the current
    element or moves to the candidate; the source element of that window is
    combined by `scatter` into the result, `init_value` elsewhere. Generic
    form only, as JAX prints it.
  }];
  let arguments = (ins AnyTensor:$operand, AnyTensor:$source,
                   AnyTensor:$init_value,
                   OptionalAttr<DenseI64ArrayAttr>:$window_dimensions,
                   OptionalAttr<DenseI64ArrayAttr>:$window_strides,
                   OptionalAttr<I64ElementsAttr>:$padding);
  let results = (outs AnyTensor);
  let regions = (region SizedRegion<1>:$select, SizedRegion<1>:$scatter);
}

def Stablehlo_ConvolutionOp : Stablehlo_Op<"convolution", [Pure]> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   OptionalAttr<DenseI64ArrayAttr>:$window_strides,
                   OptionalAttr<I64ElementsAttr>:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$lhs_dilation,
                   OptionalAttr<DenseI64ArrayAttr>:$rhs_dilation,
                   OptionalAttr<DenseBoolArrayAttr>:$window_reversal,
                   Stablehlo_ConvDimensionNumbers:$dimension_numbers,
                   I64Attr:$feature_group_count,
                   I64Attr:$batch_group_count,
                   OptionalAttr<Stablehlo_PrecisionConfigAttr>:$precision_config);
  let results = (outs AnyTensor:$result);
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def Stablehlo_GatherOp : Stablehlo_Op<"gather", [Pure]> {
  let arguments = (ins AnyTensor:$operand, AnyTensor:$start_indices,
                   Stablehlo_GatherDimensionNumbers:$dimension_numbers,
                   DenseI64ArrayAttr:$slice_sizes,
                   OptionalAttr<BoolAttr>:$indices_are_sorted);
  let results = (outs AnyTensor:$result);
}

def Stablehlo_ScatterOp : Stablehlo_Op<"scatter", [SameVariadicOperandSize,
    RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<AnyTensor>:$inputs, AnyTensor:$scatter_indices,
                   Variadic<AnyTensor>:$updates,
                   Stablehlo_ScatterDimensionNumbers:$scatter_dimension_numbers,
                   OptionalAttr<BoolAttr>:$indices_are_sorted,
                   OptionalAttr<BoolAttr>:$unique_indices);
  let results = (outs Variadic<AnyTensor>);
  let regions = (region SizedRegion<1>:$update_computation);
}

def Stablehlo_SortOp : Stablehlo_Op<"sort", [SameOperandsAndResultShape,
    RecursiveMemoryEffects]> {
  let summary = "Sorts its inputs along one dimension by a comparator";
  let description = [{
    The comparator region takes a pair of scalars per input (the elements
    compared, from every input at the two positions) and returns whether
    the first sorts before the second. Generic form only, as JAX prints it.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$dimension,
                   OptionalAttr<BoolAttr>:$is_stable);
  let results = (outs Variadic<AnyTensor>);
  let regions = (region SizedRegion<1>:$comparator);
}

def Stablehlo_OptimizationBarrierOp
    : Stablehlo_Op<"optimization_barrier", [Pure]> {
  let summary = "Its operands, unchanged (JAX's rematerialization marker)";
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>:$result);
  let assemblyFormat = [{
    $operand attr-dict `:` custom<SameTypes>(type($operand), type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Control flow and calls
//===----------------------------------------------------------------------===//

def Stablehlo_WhileOp : Stablehlo_Op<"while", [RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>);
  let regions = (region SizedRegion<1>:$cond, SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
}

def Stablehlo_CaseOp : Stablehlo_Op<"case", [RecursiveMemoryEffects]> {
  let arguments = (ins AnyTensor:$index);
  let results = (outs Variadic<AnyType>);
  let regions = (region VariadicRegion<SizedRegion<1>>:$branches);
}

def Stablehlo_ReturnOp : Stablehlo_Op<"return", [Pure, Terminator]> {
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict (`:` type($results)^)?";
}

def Stablehlo_CustomCallOp : Stablehlo_Op<"custom_call"> {
  let summary = "A call to a target the importer knows (JAX's `@Sharding`)";
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$call_target_name);
  let results = (outs Variadic<AnyType>);
  let assemblyFormat = [{
    custom<CustomCallTarget>($call_target_name) `(` $inputs `)`
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // SBP_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD
