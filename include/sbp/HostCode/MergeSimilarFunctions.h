//===- MergeSimilarFunctions.h - One function for nests alike ---*- C++ -*-===//
//
// The tiled loop nests of a model lower to many functions that differ only
// in integer constants: the same matmul or convolution kernel at other
// bounds, strides and offsets. Compiling each of them is most of a large
// model's code generation.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_HOSTCODE_MERGESIMILARFUNCTIONS_H
#define SBP_HOSTCODE_MERGESIMILARFUNCTIONS_H

namespace llvm {
class Module;
} // namespace llvm

namespace sbp {

/// What mergeSimilarFunctions did.
struct MergeStatistics {
  /// Functions replaced by a merged one (the members of every group).
  unsigned merged = 0;
  /// Merged functions created (one per group).
  unsigned groups = 0;
};

/// Replaces each group of internal functions of `module` that are equal but
/// for some integer constants by one function that takes those constants
/// as trailing arguments, and rewrites the calls to pass them.
///
/// Two functions are in a group when they have the same type and
/// attributes, their blocks and instructions correspond one to one with
/// the same operations, types and flags, and every pair of corresponding
/// operands is the same value (argument, instruction or block at the same
/// place, or the same global or constant) or two integer constants at a
/// place that may take any value: an operand of an integer or comparison
/// operation (a divisor aside), a cast, a select or a phi; an array index
/// of a getelementptr; the value a store writes. Constants that a call, a
/// switch, a struct index or an intrinsic needs stay constants, and so
/// does a bound below 16 of an innermost loop in a function without vector
/// code (LLVM would unroll that loop): functions that differ there are not
/// merged. Only functions whose every use is a direct call are candidates,
/// and groups needing more than a few arguments stay apart. Constants that
/// vary alike across a group share one argument.
MergeStatistics mergeSimilarFunctions(llvm::Module &module);

} // namespace sbp

#endif // SBP_HOSTCODE_MERGESIMILARFUNCTIONS_H
