//===- LinalgSignatures.cpp - SBP rules for linalg structured ops ---------===//
//
// Every structured op gets its signatures from its loops: splitting a
// parallel loop splits each operand and result along the dimension that the
// loop indexes (and replicates the others); splitting a reduction loop
// splits the inputs and makes the inits and results partial, with the kind
// read from the combiner in the payload. A loop is splittable only where it
// indexes operands directly (not inside compound expressions such as the
// `h + kh` of a convolution); where the payload reads its index,
// sbp-partition offsets the index by the device's piece.
//
//===----------------------------------------------------------------------===//

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "sbp/Dialect/Sbp/Extensions/Signatures.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// The reduction kind of a combiner op, if it is one SBP can express.
std::optional<ReductionKind> getCombinerKind(Operation *combiner) {
  return llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(combiner)
      .Case<arith::AddFOp, arith::AddIOp>(
          [](Operation *) { return ReductionKind::Sum; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
            arith::MaxUIOp>([](Operation *) { return ReductionKind::Max; })
      .Case<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
            arith::MinUIOp>([](Operation *) { return ReductionKind::Min; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The combiner kind of each init, `std::nullopt` where the payload does not
/// reduce into it with a single recognised combiner.
SmallVector<std::optional<ReductionKind>>
getCombinerKinds(linalg::LinalgOp linalgOp) {
  SmallVector<std::optional<ReductionKind>> kinds;
  SmallVector<BlockArgument> outputArgs(linalgOp.getRegionOutputArgs());
  for (unsigned i = 0, e = outputArgs.size(); i < e; ++i) {
    SmallVector<Operation *> combiners;
    if (!matchReduction(outputArgs, i, combiners) || combiners.size() != 1) {
      kinds.push_back(std::nullopt);
      continue;
    }
    kinds.push_back(getCombinerKind(combiners.front()));
  }
  return kinds;
}

/// The result position of `map` that is exactly loop `loop`; std::nullopt
/// when the map does not use the loop; failure when it uses it in any other
/// way (inside an expression, or twice).
FailureOr<std::optional<int64_t>> findLoop(AffineMap map, unsigned loop) {
  std::optional<int64_t> position;
  for (auto [index, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(loop))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || position)
      return failure();
    position = index;
  }
  return position;
}

/// `B` for partial rule entries that are `std::nullopt`.
SbpEntry toEntry(std::optional<ReductionKind> kind) {
  return kind ? SbpEntry::partial(*kind) : SbpEntry::broadcast();
}

/// Partial signatures of an element-wise op whose payload is one scalar op
/// on input arguments (`linalg.add`, or a generic computing `a * b`).
void addElementwisePartials(linalg::LinalgOp linalgOp,
                            SmallVectorImpl<SbpSignature> &signatures) {
  if (linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return;
  Block *body = linalgOp.getBlock();
  Operation *yield = body->getTerminator();
  if (body->getOperations().size() != 2 || yield->getNumOperands() != 1)
    return;
  Operation *scalarOp = yield->getOperand(0).getDefiningOp();
  if (!scalarOp || scalarOp->getBlock() != body)
    return;
  Operation *op = linalgOp.getOperation();
  for (const PartialRule &rule : getPartialRules(scalarOp)) {
    SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
    bool consistent = true;
    // The same input may feed several scalar operands; a rule that needs it
    // both partial and broadcast does not apply.
    SmallVector<std::optional<SbpEntry>> assigned(op->getNumOperands());
    for (auto [value, kind] :
         llvm::zip(scalarOp->getOperands(), rule.operands)) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || arg.getOwner() != body ||
          arg.getArgNumber() >= linalgOp.getNumDpsInputs())
        return;
      unsigned operand = arg.getArgNumber();
      if (!isa<RankedTensorType>(op->getOperand(operand).getType()) && kind)
        return;
      SbpEntry entry = toEntry(kind);
      if (assigned[operand] && *assigned[operand] != entry)
        consistent = false;
      assigned[operand] = entry;
      signature.operands[operand] = entry;
    }
    if (!consistent)
      continue;
    SbpEntry result = SbpEntry::partial(rule.result);
    signature.operands.back() = result;
    signature.results.assign(op->getNumResults(), result);
    addSignature(signatures, std::move(signature));
  }
}

/// How a payload value depends on the block arguments taken as partial
/// sums (each device holding a piece, the others whole on every device).
enum class Dependence {
  /// Not on them: the same on every device.
  None,
  /// Additively: the pieces' values sum to the value of the sums.
  Additive,
  /// Otherwise.
  Other
};

Dependence getDependence(Value value, Block *body,
                         const llvm::SmallBitVector &partial) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == body && partial.test(arg.getArgNumber())
               ? Dependence::Additive
               : Dependence::None;
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != body)
    return Dependence::None;
  SmallVector<Dependence> of;
  for (Value operand : op->getOperands())
    of.push_back(getDependence(operand, body, partial));
  if (llvm::all_of(of, [](Dependence d) { return d == Dependence::None; }))
    return Dependence::None;
  // Additive when one of the op's sum rules (getPartialRules) takes exactly
  // the additive operands partial and the others whole: a value the same on
  // every device in a partial position would be counted once per device.
  for (const PartialRule &rule : getPartialRules(op))
    if (rule.result == ReductionKind::Sum &&
        llvm::all_of(llvm::zip(rule.operands, of), [](auto pair) {
          auto [kind, dependence] = pair;
          return kind ? *kind == ReductionKind::Sum &&
                            dependence == Dependence::Additive
                      : dependence == Dependence::None;
        }))
      return Dependence::Additive;
  return Dependence::Other;
}

/// Sum-partial signatures of an element-wise op whose payload is additive
/// in some of its tensor operands (init included, when the payload reads
/// it): those `P(sum)`, the rest `B`, the result `P(sum)`. Derived from the
/// payload, so that compositions such as a gradient's `out + extf(in)` keep
/// partial sums as single ops do.
void addAdditivePartials(linalg::LinalgOp linalgOp,
                         SmallVectorImpl<SbpSignature> &signatures) {
  Operation *op = linalgOp.getOperation();
  unsigned n = op->getNumOperands();
  if (linalgOp.getNumDpsInits() != 1 || n > 8 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return;
  Block *body = linalgOp.getBlock();
  Value yielded = body->getTerminator()->getOperand(0);
  bool readsInit = !body->getArgument(n - 1).use_empty();
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    llvm::SmallBitVector partial(n);
    bool valid = true;
    for (unsigned i = 0; i < n && valid; ++i) {
      if (!(mask & (1u << i)))
        continue;
      // Only tensors the payload reads; an init it does not read follows
      // the result.
      valid = isa<RankedTensorType>(op->getOperand(i).getType()) &&
              !body->getArgument(i).use_empty();
      partial.set(i);
    }
    if (!valid || getDependence(yielded, body, partial) != Dependence::Additive)
      continue;
    SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
    for (unsigned i = 0; i < n; ++i)
      if (partial.test(i) || (i == n - 1 && !readsInit))
        signature.operands[i] = SbpEntry::partial(ReductionKind::Sum);
    signature.results.assign(op->getNumResults(),
                             SbpEntry::partial(ReductionKind::Sum));
    addSignature(signatures, std::move(signature));
  }
}

/// Contractions and convolutions (`init + sum(a * b)`) are linear in each
/// input: one partial input with the other replicated gives a partial
/// result. The init is accumulated into, so it is partial too. Quantized
/// variants, whose extra zero-point inputs are subtracted from the data, are
/// not linear and are left out.
void addMultiplyAccumulatePartials(linalg::LinalgOp linalgOp,
                                   SmallVectorImpl<SbpSignature> &signatures) {
  if (linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      (!linalg::isaContractionOpInterface(linalgOp) &&
       !linalg::isaConvolutionOpInterface(linalgOp)))
    return;
  // Pooling has the structure of a convolution too, but max and min are
  // not linear: the payload must add products into the init.
  Block *body = linalgOp.getBlock();
  auto isProduct = [](Value value) {
    return isa_and_nonnull<arith::MulFOp, arith::MulIOp>(value.getDefiningOp());
  };
  Operation *accumulate = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<arith::AddFOp, arith::AddIOp>(accumulate) ||
      !llvm::is_contained(accumulate->getOperands(),
                          body->getArguments().back()) ||
      !llvm::any_of(accumulate->getOperands(), isProduct))
    return;
  Operation *op = linalgOp.getOperation();
  SbpEntry sum = SbpEntry::partial(ReductionKind::Sum);
  for (unsigned input = 0; input < 2; ++input) {
    SbpSignature signature = getUniformSignature(op, SbpEntry::broadcast());
    signature.operands[input] = sum;
    signature.operands[2] = sum;
    signature.results[0] = sum;
    addSignature(signatures, std::move(signature));
  }
}

/// A fill of a replicated scalar is a valid max/min partial everywhere, and
/// a fill with zero a valid sum partial: the usual init of a contraction.
void addFillPartials(linalg::LinalgOp linalgOp,
                     SmallVectorImpl<SbpSignature> &signatures) {
  auto fill = dyn_cast<linalg::FillOp>(linalgOp.getOperation());
  if (!fill)
    return;
  Value value = fill.getInputs().front();
  auto partial = [&](ReductionKind kind) {
    SbpSignature signature = getUniformSignature(fill, SbpEntry::partial(kind));
    signature.operands[0] = SbpEntry::broadcast();
    addSignature(signatures, std::move(signature));
  };
  if (matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero()))
    partial(ReductionKind::Sum);
  partial(ReductionKind::Max);
  partial(ReductionKind::Min);
}

template <typename OpTy>
struct StructuredSignatureModel : public SbpSignatureOpInterface::ExternalModel<
                                      StructuredSignatureModel<OpTy>, OpTy> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    SmallVector<SbpSignature> signatures;
    signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
    if (!linalgOp.hasPureTensorSemantics())
      return signatures;

    SmallVector<utils::IteratorType> iterators =
        linalgOp.getIteratorTypesArray();
    SmallVector<std::optional<ReductionKind>> combiners =
        getCombinerKinds(linalgOp);
    for (unsigned loop = 0, e = linalgOp.getNumLoops(); loop < e; ++loop) {
      bool isReduction = iterators[loop] == utils::IteratorType::reduction;
      if (isReduction && llvm::is_contained(combiners, std::nullopt))
        continue;
      SbpSignature signature;
      bool splittable = true;
      for (OpOperand &operand : op->getOpOperands()) {
        FailureOr<std::optional<int64_t>> position =
            findLoop(linalgOp.getMatchingIndexingMap(&operand), loop);
        if (failed(position)) {
          splittable = false;
          break;
        }
        if (isReduction && linalgOp.isDpsInit(&operand)) {
          unsigned init =
              operand.getOperandNumber() - linalgOp.getNumDpsInputs();
          signature.operands.push_back(SbpEntry::partial(*combiners[init]));
          continue;
        }
        signature.operands.push_back(*position ? SbpEntry::split(**position)
                                               : SbpEntry::broadcast());
      }
      if (!splittable)
        continue;
      // Results are distributed like the inits they update.
      for (OpOperand &init : linalgOp.getDpsInitsMutable())
        signature.results.push_back(
            signature.operands[init.getOperandNumber()]);
      addSignature(signatures, std::move(signature));
    }

    addMultiplyAccumulatePartials(linalgOp, signatures);
    addElementwisePartials(linalgOp, signatures);
    addAdditivePartials(linalgOp, signatures);
    addFillPartials(linalgOp, signatures);
    return signatures;
  }
};

/// linalg.softmax: every dimension but the normalized one is a batch of
/// independent rows. Not linear in its input, so no partial.
struct SoftmaxSignatureModel
    : public SbpSignatureOpInterface::ExternalModel<SoftmaxSignatureModel,
                                                    linalg::SoftmaxOp> {
  SmallVector<SbpSignature> getSbpSignatures(Operation *op) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    SmallVector<SbpSignature> signatures;
    signatures.push_back(getUniformSignature(op, SbpEntry::broadcast()));
    for (int64_t dim = 0, e = softmax.getInputOperandRank(); dim < e; ++dim)
      if (dim != static_cast<int64_t>(softmax.getDimension()))
        addSignature(signatures, getUniformSignature(op, SbpEntry::split(dim)));
    return signatures;
  }
};

template <typename... OpTys> void attachStructured(MLIRContext *ctx) {
  (OpTys::template attachInterface<StructuredSignatureModel<OpTys>>(*ctx), ...);
}

} // namespace

void sbp::registerLinalgSignatureModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachStructured<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxSignatureModel>(*ctx);
  });
}
