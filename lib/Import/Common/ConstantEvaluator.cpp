//===- ConstantEvaluator.cpp - Evaluating constant computations at import -===//
//
// A small interpreter over the ops the importers build: tensors are held as
// one attribute an element, structured ops run their payload at every point
// of their loops, and each scalar op is evaluated by its own folder, so any
// op with a folder is covered without a list here. It is meant for shape
// computations and other small constant subgraphs; the budget keeps large
// ones (a weight transposed, say) for run time.
//
//===----------------------------------------------------------------------===//

#include "sbp/Import/ConstantEvaluator.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace {

/// A tensor's elements in row-major order, one attribute each; null for an
/// element nothing wrote (a `tensor.empty`).
struct Elements {
  SmallVector<int64_t> shape;
  SmallVector<Attribute> values;

  int64_t flatten(ArrayRef<int64_t> index) const {
    int64_t flat = 0;
    for (auto [i, size] : llvm::zip_equal(index, shape))
      flat = flat * size + i;
    return flat;
  }
};

/// Steps `index` through the box `sizes` in row-major order; false after
/// the last point.
bool next(MutableArrayRef<int64_t> index, ArrayRef<int64_t> sizes) {
  for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
    if (++index[d] < sizes[d])
      return true;
    index[d] = 0;
  }
  return false;
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t size : sizes)
    n *= size;
  return n;
}

bool isStatic(ArrayRef<int64_t> sizes) {
  return llvm::none_of(sizes, ShapedType::isDynamic);
}

/// Calls `visit` with each position that the strided box of `op` (an
/// extract or insert slice) addresses in the whole tensor, in the box's
/// row-major order; false when the box is not static.
bool forEachInBox(OffsetSizeAndStrideOpInterface op,
                  function_ref<void(ArrayRef<int64_t>)> visit) {
  ArrayRef<int64_t> offsets = op.getStaticOffsets(),
                    sizes = op.getStaticSizes(),
                    strides = op.getStaticStrides();
  if (!isStatic(offsets) || !isStatic(sizes) || !isStatic(strides))
    return false;
  SmallVector<int64_t> index(sizes.size(), 0), at(sizes.size());
  if (product(sizes) != 0)
    do {
      for (size_t d = 0; d < sizes.size(); ++d)
        at[d] = offsets[d] + index[d] * strides[d];
      visit(at);
    } while (next(index, sizes));
  return true;
}

class Evaluator {
public:
  explicit Evaluator(int64_t budget) : budget(budget) {}

  /// Evaluates the ops that compute `root`, in block order.
  DenseElementsAttr run(Value root);

private:
  LogicalResult evaluate(Operation *op);
  LogicalResult evaluateStructured(linalg::LinalgOp op);
  /// Evaluates a scalar op from its operands' values by the op's folder.
  FailureOr<Attribute> foldScalar(Operation *op, ArrayRef<Attribute> operands);
  /// The element `extract` reads, its indices' values given by `lookup`;
  /// null when an index is unknown or out of bounds.
  Attribute extractElement(tensor::ExtractOp extract,
                           function_ref<Attribute(Value)> lookup) {
    const Elements *source = tensor(extract.getTensor());
    if (!source)
      return nullptr;
    SmallVector<int64_t> at;
    for (auto [k, v] : llvm::enumerate(extract.getIndices())) {
      auto i = dyn_cast_if_present<IntegerAttr>(lookup(v));
      if (!i || i.getInt() < 0 || i.getInt() >= source->shape[k])
        return nullptr;
      at.push_back(i.getInt());
    }
    return source->values[source->flatten(at)];
  }
  /// Charges `n` scalar operations to the budget.
  bool spend(int64_t n) {
    budget -= n;
    return budget >= 0;
  }

  const Elements *tensor(Value value) {
    auto it = tensors.find(value);
    return it == tensors.end() ? nullptr : it->second.get();
  }
  Elements &set(Value value, Elements elements) {
    return *(tensors[value] = std::make_unique<Elements>(std::move(elements)));
  }
  Attribute scalar(Value value) { return scalars.lookup(value); }
  /// A tensor result of the op's type, every element unwritten.
  Elements &define(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    Elements elements;
    elements.shape.assign(type.getShape().begin(), type.getShape().end());
    elements.values.assign(product(elements.shape), Attribute());
    return set(value, std::move(elements));
  }

  int64_t budget;
  /// Held by pointer: evaluating an op reads its operands' elements while
  /// it adds its results.
  DenseMap<Value, std::unique_ptr<Elements>> tensors;
  DenseMap<Value, Attribute> scalars;
};

DenseElementsAttr Evaluator::run(Value root) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || !type.hasStaticShape() || !root.getDefiningOp())
    return nullptr;
  // The backward slice, values read inside regions included; any block
  // argument outside the slice's own regions means it is not constant.
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *op = value.getDefiningOp();
    if (!op)
      return nullptr;
    if (!slice.insert(op))
      continue;
    if (!spend(1))
      return nullptr;
    llvm::append_range(worklist, op->getOperands());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    llvm::append_range(worklist, captured);
  }
  Block *block = root.getDefiningOp()->getBlock();
  if (llvm::any_of(slice, [&](Operation *op) { return op->getBlock() != block; }))
    return nullptr;
  SmallVector<Operation *> order(slice.begin(), slice.end());
  llvm::sort(order, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *op : order)
    if (failed(evaluate(op)))
      return nullptr;
  const Elements *result = tensor(root);
  if (!result || llvm::is_contained(result->values, Attribute()))
    return nullptr;
  return DenseElementsAttr::get(type, result->values);
}

FailureOr<Attribute> Evaluator::foldScalar(Operation *op,
                                           ArrayRef<Attribute> operands) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      llvm::is_contained(operands, Attribute()))
    return failure();
  // The select folder reads its condition from the IR, not the operands.
  if (isa<arith::SelectOp>(op)) {
    auto condition = dyn_cast<IntegerAttr>(operands[0]);
    if (!condition)
      return failure();
    return operands[condition.getValue().isZero() ? 2 : 1];
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != 1)
    return failure();
  if (auto attr = dyn_cast<Attribute>(results[0])) {
    if (!isa<TypedAttr>(attr))
      return failure();
    return attr;
  }
  // A folder may answer with one of the operands.
  Value folded = cast<Value>(results[0]);
  for (auto [operand, attr] : llvm::zip(op->getOperands(), operands))
    if (operand == folded)
      return attr;
  return failure();
}

LogicalResult Evaluator::evaluateStructured(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Block *body = op.getBlock();
  if (!isStatic(ranges) || !body ||
      !spend(product(ranges) * static_cast<int64_t>(body->getOperations().size())))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Each operand's elements; inits are copied into the results.
  SmallVector<const Elements *> operands;
  SmallVector<Elements *> outputs;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!isa<RankedTensorType>(value.getType())) {
      if (!scalar(value))
        return failure();
      operands.push_back(nullptr);
      continue;
    }
    if (!tensor(value))
      return failure();
    operands.push_back(tensor(value));
  }
  for (auto [init, result] : llvm::zip(op.getDpsInits(), op->getResults())) {
    if (!isa<RankedTensorType>(result.getType()))
      return failure();
    if (!tensor(init))
      return failure();
    outputs.push_back(&set(result, *tensor(init)));
  }
  int64_t numInputs = op.getNumDpsInputs();
  SmallVector<int64_t> point(ranges.size(), 0);
  if (product(ranges) == 0)
    return success();
  DenseMap<Value, Attribute> env;
  do {
    env.clear();
    SmallVector<int64_t> outputPositions;
    for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
      Value arg = body->getArgument(i);
      if (!operands[i]) {
        env[arg] = scalar(operand.get());
        continue;
      }
      int64_t flat = operands[i]->flatten(maps[i].compose(point));
      if (static_cast<int64_t>(i) >= numInputs) {
        outputPositions.push_back(flat);
        env[arg] = outputs[i - numInputs]->values[flat];
      } else {
        env[arg] = operands[i]->values[flat];
      }
    }
    for (Operation &inner : *body) {
      auto lookup = [&](Value value) {
        Attribute attr = env.lookup(value);
        return attr ? attr : scalar(value);
      };
      if (auto yield = dyn_cast<linalg::YieldOp>(inner)) {
        for (auto [k, value] : llvm::enumerate(yield.getValues()))
          outputs[k]->values[outputPositions[k]] = lookup(value);
        continue;
      }
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        env[index] = IntegerAttr::get(index.getType(), point[index.getDim()]);
        continue;
      }
      if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
        Attribute element = extractElement(extract, lookup);
        if (!element)
          return failure();
        env[extract] = element;
        continue;
      }
      SmallVector<Attribute> values;
      for (Value operand : inner.getOperands())
        values.push_back(lookup(operand));
      FailureOr<Attribute> folded = foldScalar(&inner, values);
      if (failed(folded))
        return failure();
      env[inner.getResult(0)] = *folded;
    }
  } while (next(point, ranges));
  return success();
}

LogicalResult Evaluator::evaluate(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
      if (!spend(dense.getNumElements()))
        return failure();
      Elements &elements = define(constant);
      llvm::copy(dense.getValues<Attribute>(), elements.values.begin());
      return success();
    }
    scalars[constant] = constant.getValue();
    return success();
  }
  if (auto structured = dyn_cast<linalg::LinalgOp>(op))
    return evaluateStructured(structured);
  if (op->getNumResults() != 1)
    return failure();
  Value result = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (type && (!type.hasStaticShape() || !spend(type.getNumElements())))
    return failure();
  // Ops that keep the elements' order and change only the shape.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
          tensor::CastOp>(op)) {
    const Elements *source = tensor(op->getOperand(0));
    if (!source)
      return failure();
    Elements &elements = define(result);
    elements.values = source->values;
    return success();
  }
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::EmptyOp) {
        define(result);
        return success();
      })
      .Case([&](tensor::ExtractSliceOp slice) {
        const Elements *source = tensor(slice.getSource());
        if (!source)
          return failure();
        Elements &elements = define(result);
        int64_t k = 0;
        return success(forEachInBox(slice, [&](ArrayRef<int64_t> at) {
          elements.values[k++] = source->values[source->flatten(at)];
        }));
      })
      .Case([&](tensor::InsertSliceOp insert) {
        const Elements *source = tensor(insert.getSource());
        const Elements *dest = tensor(insert.getDest());
        if (!source || !dest)
          return failure();
        Elements copy = *dest;
        int64_t k = 0;
        if (!forEachInBox(insert, [&](ArrayRef<int64_t> at) {
              copy.values[copy.flatten(at)] = source->values[k++];
            }))
          return failure();
        set(result, std::move(copy));
        return success();
      })
      .Case([&](tensor::PadOp pad) {
        const Elements *source = tensor(pad.getSource());
        Value padding = pad.getConstantPaddingValue();
        Attribute fill;
        if (padding && !matchPattern(padding, m_Constant(&fill)))
          fill = scalar(padding);
        ArrayRef<int64_t> low = pad.getStaticLow();
        if (!source || !fill || !isStatic(low) ||
            !isStatic(pad.getStaticHigh()))
          return failure();
        Elements &elements = define(result);
        llvm::fill(elements.values, fill);
        SmallVector<int64_t> index(source->shape.size(), 0),
            at(source->shape.size());
        int64_t k = 0;
        if (!source->values.empty())
          do {
            for (size_t d = 0; d < index.size(); ++d)
              at[d] = low[d] + index[d];
            elements.values[elements.flatten(at)] = source->values[k++];
          } while (next(index, source->shape));
        return success();
      })
      .Case([&](tensor::ConcatOp concat) {
        Elements &elements = define(result);
        int64_t dim = concat.getDim(), offset = 0;
        for (Value input : concat.getInputs()) {
          const Elements *source = tensor(input);
          if (!source)
            return failure();
          SmallVector<int64_t> index(source->shape.size(), 0);
          int64_t k = 0;
          if (!source->values.empty())
            do {
              SmallVector<int64_t> at = index;
              at[dim] += offset;
              elements.values[elements.flatten(at)] = source->values[k++];
            } while (next(index, source->shape));
          offset += source->shape[dim];
        }
        return success();
      })
      .Case([&](tensor::ExtractOp extract) {
        scalars[result] =
            extractElement(extract, [&](Value v) { return scalar(v); });
        return success(scalars[result] != nullptr);
      })
      .Case([&](tensor::FromElementsOp fromElements) {
        Elements &elements = define(result);
        for (auto [k, v] : llvm::enumerate(fromElements.getElements()))
          if (!(elements.values[k] = scalar(v)))
            return failure();
        return success();
      })
      .Default([&](Operation *op) {
        if (type)
          return failure();
        SmallVector<Attribute> operands;
        for (Value operand : op->getOperands())
          operands.push_back(scalar(operand));
        FailureOr<Attribute> folded = foldScalar(op, operands);
        if (failed(folded))
          return failure();
        scalars[result] = *folded;
        return success();
      });
}

} // namespace

DenseElementsAttr mlir::sbp::evaluateConstant(Value value, int64_t budget) {
  return Evaluator(budget).run(value);
}
