//===- MakeTrainStep.cpp - One training step of a forward function --------===//
//
// The step is built as one logical function (forward, loss, gradients,
// optimizer update) so that data parallelism, ZeRO-style sharding of the
// optimizer state and the rest are layouts the search chooses for it, not
// modes of their own.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "sbp/Dialect/Sbp/Utils/ArgumentNames.h"
#include "sbp/Transforms/Autodiff.h"
#include "sbp/Transforms/Passes.h"
#include "sbp/Transforms/Pipelining.h"
#include "sbp/Transforms/TrainStep.h"

namespace mlir {
namespace sbp {
#define GEN_PASS_DEF_SBPMAKETRAINSTEPPASS
#include "sbp/Transforms/Passes.h.inc"
} // namespace sbp
} // namespace mlir

using namespace mlir;
using namespace mlir::sbp;

namespace {

/// A structured op over the loops of `domain` (all of them reductions
/// unless `parallel` of them lead) reading `inputs` through `maps` and
/// accumulating one result of `resultType` through `resultMap`.
Value buildStructured(
    OpBuilder &b, Location loc, int64_t loops, int64_t parallel,
    ValueRange inputs, ArrayRef<AffineMap> maps, RankedTensorType resultType,
    AffineMap resultMap, double init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> payload) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(resultMap);
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::reduction);
  for (int64_t loop = 0; loop < parallel; ++loop)
    iterators[loop] = utils::IteratorType::parallel;
  Value initValue = createFilledTensor(b, loc, resultType, init);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{initValue},
             allMaps, iterators,
             [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
               linalg::YieldOp::create(nb, bodyLoc, payload(nb, bodyLoc, args));
             })
      .getResult(0);
}

/// The identity map on `rank` loops.
AffineMap getIdentity(MLIRContext *ctx, int64_t rank) {
  return AffineMap::getMultiDimIdentityMap(rank, ctx);
}
Value constant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// The type a loss over values of `element` accumulates in: f32 for 16-bit
/// floats, as mixed-precision training computes its losses (PyTorch's
/// autocast, Megatron-LM's cross-entropy on `logits.float()`): a bf16 sum
/// of thousands of terms stops growing once each term is below its last
/// place.
Type getLossType(Type element) {
  if (element.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(element.getContext());
  return element;
}

/// `value` (a payload's scalar) in `type`.
Value widen(OpBuilder &b, Location loc, Value value, Type type) {
  return value.getType() == type
             ? value
             : arith::ExtFOp::create(b, loc, type, value).getResult();
}

/// The mean of `(y - target)^2` as a tensor of rank 0.
Value buildMeanSquaredError(OpBuilder &b, Location loc, Value y, Value target) {
  auto type = cast<RankedTensorType>(y.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  Type element = getLossType(type.getElementType());
  double scale = 1.0 / std::max<int64_t>(1, type.getNumElements());
  return buildStructured(
      b, loc, rank, 0, {y, target},
      {getIdentity(ctx, rank), getIdentity(ctx, rank)},
      RankedTensorType::get({}, element), AffineMap::get(rank, 0, {}, ctx), 0,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value a = widen(nb, l, args[0], element);
        Value t = widen(nb, l, args[1], element);
        Value d = arith::SubFOp::create(nb, l, a, t);
        Value sq = arith::MulFOp::create(nb, l, d, d);
        Value scaled =
            arith::MulFOp::create(nb, l, sq, constant(nb, l, element, scale));
        return arith::AddFOp::create(nb, l, args[2], scaled);
      });
}

/// The mean over the leading dimensions of the cross-entropy of the logits
/// `y` (last dimension: classes) against integer `labels`.
Value buildCrossEntropy(OpBuilder &b, Location loc, Value y, Value labels) {
  auto type = cast<RankedTensorType>(y.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank(), lead = rank - 1;
  Type element = getLossType(type.getElementType());
  auto rowType = RankedTensorType::get(type.getShape().drop_back(), element);
  AffineMap all = getIdentity(ctx, rank);
  AffineMap rows =
      AffineMap::get(rank, 0, all.getResults().take_front(lead), ctx);
  // The row's maximum keeps exp() in range; log-sum-exp = m + log(sum).
  double lowest = -3.0e38;
  Value max =
      buildStructured(b, loc, rank, lead, {y}, {all}, rowType, rows, lowest,
                      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                        return arith::MaximumFOp::create(
                            nb, l, widen(nb, l, args[0], element), args[1]);
                      });
  // Log-sum-exp does not change with the shift: its gradient is zero there.
  max.getDefiningOp()->setAttr(SbpDialect::getStopGradientAttrName(),
                               b.getUnitAttr());
  Value sum = buildStructured(
      b, loc, rank, lead, {y, max}, {all, rows}, rowType, rows, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value shifted = arith::SubFOp::create(
            nb, l, widen(nb, l, args[0], element), args[1]);
        return arith::AddFOp::create(nb, l, args[2],
                                     math::ExpOp::create(nb, l, shifted));
      });
  Value picked = buildStructured(
      b, loc, rank, lead, {y, labels}, {all, rows}, rowType, rows, 0,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value position = linalg::IndexOp::create(nb, l, rank - 1);
        Value label =
            arith::IndexCastOp::create(nb, l, nb.getIndexType(), args[1]);
        Value same = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                           position, label);
        Value logit = widen(nb, l, args[0], element);
        Value value = arith::SelectOp::create(nb, l, same, logit,
                                              constant(nb, l, element, 0));
        return arith::AddFOp::create(nb, l, args[2], value);
      });
  double scale = 1.0 / std::max<int64_t>(1, rowType.getNumElements());
  AffineMap rowIdentity = getIdentity(ctx, lead);
  return buildStructured(
      b, loc, lead, 0, {sum, max, picked},
      {rowIdentity, rowIdentity, rowIdentity},
      RankedTensorType::get({}, element), AffineMap::get(lead, 0, {}, ctx), 0,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value lse = arith::AddFOp::create(
            nb, l, math::LogOp::create(nb, l, args[0]), args[1]);
        Value loss = arith::SubFOp::create(nb, l, lse, args[2]);
        return arith::AddFOp::create(
            nb, l, args[3],
            arith::MulFOp::create(nb, l, loss,
                                  constant(nb, l, element, scale)));
      });
}

/// Inlines the calls in `func`, and those in the callees, so that the
/// gradient rules see the callees' ops; collects the callees in `callees`.
LogicalResult inlineCalls(func::FuncOp func,
                          llvm::SetVector<func::FuncOp> &callees) {
  auto module = func->getParentOfType<ModuleOp>();
  unsigned numFuncs = llvm::range_size(module.getOps<func::FuncOp>());
  SmallVector<std::pair<func::CallOp, unsigned>> calls;
  func.walk([&](func::CallOp call) { calls.push_back({call, 0}); });
  while (!calls.empty()) {
    auto [call, depth] = calls.pop_back_val();
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
      return call.emitError()
             << "sbp-make-train-step: cannot differentiate "
                "through the call: @"
             << call.getCallee() << " has no body of one block";
    // A chain of calls longer than the module's functions repeats one.
    if (depth >= numFuncs)
      return call.emitError()
             << "sbp-make-train-step: the call to @" << call.getCallee()
             << " recurses; recursion has no gradient";
    OpBuilder b(call);
    IRMapping mapping;
    Block &body = callee.getBody().front();
    mapping.map(body.getArguments(), call.getOperands());
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping)->walk([&, depth = depth](func::CallOp inner) {
        calls.push_back({inner, depth + 1});
      });
    for (auto [result, value] :
         llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(mapping.lookupOrDefault(value));
    call.erase();
    callees.insert(callee);
  }
  return success();
}

struct SbpMakeTrainStepPass
    : public sbp::impl::SbpMakeTrainStepPassBase<SbpMakeTrainStepPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  func::FuncOp findFunction();
  /// The parameters: `params`, or the float arguments that are not a batch.
  FailureOr<SmallVector<int64_t>> getParams(func::FuncOp func);
  /// `loss`, with `auto` resolved for `func`.
  FailureOr<std::string> getLossKind(func::FuncOp func);
  /// The optimizer and its hyperparameters, from the options.
  OptimizerSpec getSpec() const;
};

func::FuncOp SbpMakeTrainStepPass::findFunction() {
  ModuleOp module = getOperation();
  if (!function.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal())
      module.emitError() << "sbp-make-train-step: function=" << function
                         << ": no function of that name with a body";
    return func && !func.isExternal() ? func : func::FuncOp();
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && func.isPublic())
      candidates.push_back(func);
  if (candidates.size() == 1)
    return candidates.front();
  for (func::FuncOp func : candidates)
    if (func.getSymName() == "main")
      return func;
  module.emitError() << "sbp-make-train-step: the module has "
                     << candidates.size()
                     << " public functions with a body; name one with "
                        "function=";
  return {};
}

FailureOr<SmallVector<int64_t>>
SbpMakeTrainStepPass::getParams(func::FuncOp func) {
  auto isFloatTensor = [&](int64_t i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    return type && isa<FloatType>(type.getElementType());
  };
  SmallVector<int64_t> result;
  if (!params.empty()) {
    llvm::SmallDenseSet<int64_t> seen;
    for (const std::string &name : params) {
      std::optional<unsigned> index = findArgument(func, name);
      if (!index || !isFloatTensor(*index) || !seen.insert(*index).second) {
        func.emitError() << "sbp-make-train-step: params=" << name
                         << ": expected a float tensor argument of @"
                         << func.getSymName()
                         << " (argN, N or an argument's onnx.name or "
                            "sbp.name), named once";
        return failure();
      }
      result.push_back(*index);
    }
    return result;
  }
  SmallVector<int64_t> batch = getDefaultBatchArgs(func);
  for (int64_t i = 0; i < func.getNumArguments(); ++i)
    if (isFloatTensor(i) && !llvm::is_contained(batch, i))
      result.push_back(i);
  // A step that updates nothing would train silently in vain.
  if (result.empty()) {
    func.emitError()
        << "sbp-make-train-step: @" << func.getSymName()
        << " has no parameters: every float argument is a "
           "batch (dimension 0 a parallel loop of every op "
           "that reads it); name them with params= (sbp-run --params)";
    return failure();
  }
  return result;
}

FailureOr<std::string> SbpMakeTrainStepPass::getLossKind(func::FuncOp func) {
  auto type = dyn_cast<RankedTensorType>(func.getResultTypes().front());
  if (!type || !isa<FloatType>(type.getElementType())) {
    func.emitError("sbp-make-train-step: the first result is not a float "
                   "tensor, so no loss can be made from it");
    return failure();
  }
  std::string kind = loss;
  if (kind == "auto") {
    bool hasIntegerArg = llvm::any_of(func.getArgumentTypes(), [](Type t) {
      return isa<IntegerType>(getElementTypeOrSelf(t));
    });
    kind = type.getNumElements() == 1 ? "result"
           : hasIntegerArg            ? "cross-entropy"
                                      : "mse";
  }
  if (kind == "result" && type.getNumElements() != 1) {
    func.emitError() << "sbp-make-train-step: loss=result needs a first "
                        "result of one element, not "
                     << type;
    return failure();
  }
  if (kind == "cross-entropy" && type.getRank() < 1) {
    func.emitError("sbp-make-train-step: loss=cross-entropy needs logits of "
                   "rank at least 1");
    return failure();
  }
  if (kind != "result" && kind != "mse" && kind != "cross-entropy") {
    func.emitError() << "sbp-make-train-step: loss=" << loss
                     << ": expected auto, result, mse or cross-entropy";
    return failure();
  }
  return kind;
}

OptimizerSpec SbpMakeTrainStepPass::getSpec() const {
  OptimizerSpec spec;
  spec.kind = optimizer;
  spec.lr = lr;
  spec.beta1 = beta1;
  spec.beta2 = beta2;
  spec.epsilon = epsilon;
  spec.weightDecay = weightDecay >= 0 ? weightDecay.getValue()
                     : spec.isAdam()  ? 0.01
                                      : 0;
  return spec;
}

void SbpMakeTrainStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (optimizer != "sgd" && optimizer != "adamw") {
    module.emitError() << "sbp-make-train-step: optimizer=" << optimizer
                       << ": expected sgd or adamw";
    return signalPassFailure();
  }
  if (!(lr > 0)) {
    module.emitError("sbp-make-train-step: lr must be positive");
    return signalPassFailure();
  }
  func::FuncOp forward = findFunction();
  if (!forward)
    return signalPassFailure();
  llvm::SetVector<func::FuncOp> callees;
  if (failed(inlineCalls(forward, callees)))
    return signalPassFailure();
  for (Type type : llvm::concat<const Type>(forward.getArgumentTypes(),
                                            forward.getResultTypes())) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (shaped && !shaped.hasStaticShape()) {
      forward.emitError() << "sbp-make-train-step: @" << forward.getSymName()
                          << " has the dynamic type " << type
                          << "; a training step needs static shapes";
      return signalPassFailure();
    }
  }
  if (forward.getNumResults() == 0) {
    forward.emitError("sbp-make-train-step: the function returns nothing to "
                      "make a loss from");
    return signalPassFailure();
  }
  FailureOr<std::string> lossKind = getLossKind(forward);
  FailureOr<SmallVector<int64_t>> paramIndices = getParams(forward);
  if (failed(lossKind) || failed(paramIndices))
    return signalPassFailure();
  Type element;
  for (int64_t index : *paramIndices) {
    Type type = getElementTypeOrSelf(forward.getArgument(index).getType());
    if (element && type != element) {
      forward.emitError("sbp-make-train-step: the parameters have different "
                        "element types");
      return signalPassFailure();
    }
    element = type;
  }
  if (!element)
    element = getElementTypeOrSelf(forward.getResultTypes().front());

  // The step's arguments: parameters, optimizer state, the other
  // arguments in their order, then the loss's target or labels.
  MLIRContext *ctx = &getContext();
  Location loc = forward.getLoc();
  auto resultType = cast<RankedTensorType>(forward.getResultTypes().front());
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto named = [&](const std::string &name) {
    return DictionaryAttr::get(ctx,
                               {NamedAttribute(SbpDialect::getNameAttrName(),
                                               StringAttr::get(ctx, name))});
  };
  // Arguments keep their attributes; those without a name are named
  // after their number in the forward function, which the step reorders.
  auto keptAttrs = [&](int64_t index) {
    NamedAttrList attrs(forward.getArgAttrDict(index));
    if (!attrs.get("onnx.name") && !attrs.get(SbpDialect::getNameAttrName()))
      attrs.set(SbpDialect::getNameAttrName(),
                StringAttr::get(ctx, sbp::getArgumentName(forward, index)));
    return attrs.getDictionary(ctx);
  };
  for (int64_t index : *paramIndices) {
    argTypes.push_back(forward.getArgument(index).getType());
    argAttrs.push_back(keptAttrs(index));
  }
  int64_t numState = 0;
  if (optimizer == "adamw") {
    for (int64_t index : *paramIndices)
      for (StringRef moment : {".m", ".v"}) {
        argTypes.push_back(forward.getArgument(index).getType());
        argAttrs.push_back(
            named(sbp::getArgumentName(forward, index) + moment.str()));
      }
    argTypes.push_back(RankedTensorType::get({}, element));
    argAttrs.push_back(named("step"));
    numState = 2 * paramIndices->size() + 1;
  }
  SmallVector<int64_t> dataIndices;
  for (int64_t i = 0; i < forward.getNumArguments(); ++i)
    if (!llvm::is_contained(*paramIndices, i)) {
      dataIndices.push_back(i);
      argTypes.push_back(forward.getArgument(i).getType());
      argAttrs.push_back(keptAttrs(i));
    }
  if (*lossKind == "mse") {
    argTypes.push_back(resultType);
    argAttrs.push_back(named("target"));
  } else if (*lossKind == "cross-entropy") {
    argTypes.push_back(RankedTensorType::get(resultType.getShape().drop_back(),
                                             IntegerType::get(ctx, 64)));
    argAttrs.push_back(named("labels"));
  }
  auto lossType = RankedTensorType::get(
      {}, *lossKind == "result" ? resultType.getElementType()
                                : getLossType(resultType.getElementType()));
  int64_t numParams = paramIndices->size();
  SmallVector<Type> resultTypes(argTypes.begin(),
                                argTypes.begin() + numParams + numState);
  resultTypes.push_back(lossType);

  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto step =
      func::FuncOp::create(b, loc, (forward.getSymName() + "_train_step").str(),
                           FunctionType::get(ctx, argTypes, resultTypes));
  step.setAllArgAttrs(argAttrs);
  step.setVisibility(forward.getVisibility());
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [i, index] : llvm::enumerate(*paramIndices))
    mapping.map(forward.getArgument(index), body->getArgument(i));
  for (auto [i, index] : llvm::enumerate(dataIndices))
    mapping.map(forward.getArgument(index),
                body->getArgument(numParams + numState + i));
  for (Operation &op : forward.getBody().front().without_terminator())
    b.clone(op, mapping);
  Value y =
      mapping.lookup(forward.getBody().front().getTerminator()->getOperand(0));
  Value lossValue;
  if (*lossKind == "result")
    lossValue =
        resultType.getRank() == 0
            ? y
            : tensor::CollapseShapeOp::create(b, loc, lossType, y,
                                              ArrayRef<ReassociationIndices>{});
  else if (*lossKind == "mse")
    lossValue = buildMeanSquaredError(b, loc, y, body->getArguments().back());
  else
    lossValue = buildCrossEntropy(b, loc, y, body->getArguments().back());

  SmallVector<Value> params(body->getArguments().take_front(numParams));
  FailureOr<SmallVector<Value>> gradients =
      buildGradients(b, *body, lossValue, params);
  if (failed(gradients)) {
    step.erase();
    return signalPassFailure();
  }
  SmallVector<Value> results = buildOptimizerUpdate(
      b, loc, getSpec(), params,
      body->getArguments().slice(numParams, numState), *gradients);
  results.push_back(lossValue);
  func::ReturnOp::create(b, loc, results);
  step->setAttr(SbpDialect::getTrainStepAttrName(),
                getTrainStepAttr(ctx, getSpec(), numParams, numState));
  forward.erase();
  // Private functions only the forward function called are dead now; one
  // may have been called by another only.
  SmallVector<func::FuncOp> dead(callees.begin(), callees.end());
  for (bool erased = true; erased;) {
    erased = false;
    for (func::FuncOp &callee : dead)
      if (callee && callee.isPrivate() &&
          SymbolTable::symbolKnownUseEmpty(callee, getOperation())) {
        callee.erase();
        callee = nullptr;
        erased = true;
      }
  }

  if (failed(simplifyGradients(step)))
    return signalPassFailure();
}

} // namespace

SmallVector<Value> mlir::sbp::buildOptimizerUpdate(OpBuilder &b, Location loc,
                                                   const OptimizerSpec &spec,
                                                   ValueRange params,
                                                   ValueRange state,
                                                   ArrayRef<Value> gradients) {
  MLIRContext *ctx = b.getContext();
  bool adam = spec.isAdam();
  double decay = spec.weightDecay, beta1 = spec.beta1, beta2 = spec.beta2;
  SmallVector<Value> newParams, newState;
  // AdamW: the bias corrections 1 - beta^t of this step, as tensors of
  // rank 0 that every update reads.
  Value correction1, correction2, step;
  if (adam) {
    Value count = state.back();
    auto scalarType = cast<RankedTensorType>(count.getType());
    Type element = scalarType.getElementType();
    auto splat = [&](double value) -> Value {
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(scalarType, b.getFloatAttr(element, value)));
    };
    step = arith::AddFOp::create(b, loc, count, splat(1));
    auto correction = [&](double beta) -> Value {
      return arith::SubFOp::create(
          b, loc, splat(1), math::PowFOp::create(b, loc, splat(beta), step));
    };
    correction1 = correction(beta1);
    correction2 = correction(beta2);
  }
  for (auto [i, param, gradient] : llvm::enumerate(params, gradients)) {
    auto type = cast<RankedTensorType>(param.getType());
    Type element = type.getElementType();
    int64_t rank = type.getRank();
    AffineMap id = getIdentity(ctx, rank),
              scalar = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<Value> inputs = {param, gradient};
    SmallVector<AffineMap> maps = {id, id};
    int64_t results = 1;
    if (adam) {
      inputs.append({state[2 * i], state[2 * i + 1], correction1, correction2});
      maps.append({id, id, scalar, scalar});
      results = 3;
    }
    SmallVector<Value> inits;
    for (int64_t r = 0; r < results; ++r) {
      inits.push_back(
          tensor::EmptyOp::create(b, loc, type.getShape(), element));
      maps.push_back(id);
    }
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto update = linalg::GenericOp::create(
        b, loc, SmallVector<Type>(results, type), inputs, inits, maps,
        iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          auto c = [&](double value) {
            return constant(nb, l, element, value);
          };
          auto mul = [&](Value x, Value y) -> Value {
            return arith::MulFOp::create(nb, l, x, y);
          };
          auto add = [&](Value x, Value y) -> Value {
            return arith::AddFOp::create(nb, l, x, y);
          };
          Value p = args[0], g = args[1];
          Value direction = g;
          SmallVector<Value> yields;
          Value m, v;
          if (adam) {
            Value b1 = c(beta1), b2 = c(beta2);
            m = add(mul(b1, args[2]), mul(c(1 - beta1), g));
            v = add(mul(b2, args[3]), mul(c(1 - beta2), mul(g, g)));
            Value mHat = arith::DivFOp::create(nb, l, m, args[4]);
            Value vHat = arith::DivFOp::create(nb, l, v, args[5]);
            Value root =
                add(math::SqrtOp::create(nb, l, vHat), c(spec.epsilon));
            direction = arith::DivFOp::create(nb, l, mHat, root);
          }
          if (decay != 0)
            direction = add(direction, mul(c(decay), p));
          yields.push_back(
              arith::SubFOp::create(nb, l, p, mul(c(spec.lr), direction)));
          if (adam)
            yields.append({m, v});
          linalg::YieldOp::create(nb, l, yields);
        });
    newParams.push_back(update.getResult(0));
    if (adam)
      newState.append({update.getResult(1), update.getResult(2)});
  }
  if (adam)
    newState.push_back(step);
  llvm::append_range(newParams, newState);
  return newParams;
}

DictionaryAttr mlir::sbp::getTrainStepAttr(MLIRContext *context,
                                           const OptimizerSpec &spec,
                                           int64_t params, int64_t state) {
  Builder b(context);
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("optimizer", b.getStringAttr(spec.kind)),
      b.getNamedAttr("params", b.getI64IntegerAttr(params)),
      b.getNamedAttr("state", b.getI64IntegerAttr(state)),
      b.getNamedAttr("lr", b.getF64FloatAttr(spec.lr)),
      b.getNamedAttr("weight_decay", b.getF64FloatAttr(spec.weightDecay))};
  if (spec.isAdam())
    fields.append({b.getNamedAttr("beta1", b.getF64FloatAttr(spec.beta1)),
                   b.getNamedAttr("beta2", b.getF64FloatAttr(spec.beta2)),
                   b.getNamedAttr("epsilon", b.getF64FloatAttr(spec.epsilon))});
  return b.getDictionaryAttr(fields);
}

OptimizerSpec mlir::sbp::getOptimizerSpec(func::FuncOp step) {
  OptimizerSpec spec;
  auto dict =
      step->getAttrOfType<DictionaryAttr>(SbpDialect::getTrainStepAttrName());
  if (!dict)
    return spec;
  if (auto kind = dict.getAs<StringAttr>("optimizer"))
    spec.kind = kind.str();
  if (!spec.isAdam())
    spec.weightDecay = 0;
  auto read = [&](StringRef name, double &value) {
    if (auto attr = dict.getAs<FloatAttr>(name))
      value = attr.getValueAsDouble();
  };
  read("lr", spec.lr);
  read("weight_decay", spec.weightDecay);
  read("beta1", spec.beta1);
  read("beta2", spec.beta2);
  read("epsilon", spec.epsilon);
  return spec;
}

namespace {

/// Whether `offset` differs in every iteration of `loop`: its induction
/// variable, plus or minus a constant.
bool isDistinctPerIteration(Value offset, scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  if (offset == iv)
    return true;
  Operation *op = offset.getDefiningOp();
  if (!isa_and_nonnull<arith::AddIOp, arith::SubIOp>(op))
    return false;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  return (lhs == iv && matchPattern(rhs, m_Constant())) ||
         (rhs == iv && matchPattern(lhs, m_Constant()));
}

/// In a loop whose iterations each add into their own row of a carried
/// tensor that starts as zeros (`acc[i] = acc[i] + g`, a backward loop's
/// gradient of stacked weights), the row still holds zeros when it is
/// added to: inserts `g` as it is, saving a read of the row and an add.
struct InsertIntoZeroRow : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto acc = dyn_cast<BlockArgument>(insert.getDest());
    auto loop = acc ? dyn_cast<scf::ForOp>(acc.getOwner()->getParentOp())
                    : scf::ForOp();
    if (!loop || acc.getArgNumber() == 0)
      return failure();
    auto add = insert.getSource().getDefiningOp<arith::AddFOp>();
    if (!add)
      return failure();
    unsigned which = 0;
    auto row = add.getLhs().getDefiningOp<tensor::ExtractSliceOp>();
    if (!row || row.getSource() != acc) {
      row = add.getRhs().getDefiningOp<tensor::ExtractSliceOp>();
      which = 1;
    }
    if (!row || row.getSource() != acc ||
        !row.isSameAs(insert, isEqualConstantIntOrValue))
      return failure();
    // One row per iteration, each iteration its own: a dimension of size
    // 1 at an offset that differs per iteration.
    bool ownRow = false;
    for (auto [offset, size] :
         llvm::zip(insert.getMixedOffsets(), insert.getStaticSizes()))
      if (auto value = dyn_cast<Value>(offset))
        ownRow |= size == 1 && isDistinctPerIteration(value, loop);
    // Nothing else reads or writes the carried tensor, which the insert
    // hands to the next iteration and which starts as zeros.
    unsigned carried = acc.getArgNumber() - 1;
    auto fill = loop.getInitArgs()[carried].getDefiningOp<linalg::FillOp>();
    if (!ownRow || !fill || !matchPattern(fill.value(), m_AnyZeroFloat()) ||
        loop.getBody()->getTerminator()->getOperand(carried) !=
            insert.getResult() ||
        llvm::any_of(acc.getUsers(), [&](Operation *user) {
          return user != row && user != insert;
        }))
      return failure();
    rewriter.modifyOpInPlace(insert, [&] {
      insert.getSourceMutable().assign(add->getOperand(1 - which));
    });
    return success();
  }
};

} // namespace

LogicalResult mlir::sbp::simplifyGradients(func::FuncOp func) {
  // The backward pass recomputes payloads whole and reads every forward
  // operand: drop what its ops do not use (an unused operand would still
  // constrain its layout), fold and share the rest.
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  patterns.add<InsertIntoZeroRow>(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  IRRewriter rewriter(ctx);
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  return success();
}
