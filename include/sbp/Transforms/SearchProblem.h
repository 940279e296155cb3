//===- SearchProblem.h - A function's layout choice as costs ----*- C++ -*-===//
//
// Turns one function into the cost graph the auto-parallel search solves:
// a node per op that computes on tensors (states: its signatures), per
// unannotated tensor argument and result (states: layouts without partial
// entries), and an edge per use between two nodes whose table is the time of
// the boxing the pair of states needs. Prices whole plans: step time,
// compute and communication, bytes moved and peak memory per device.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_SEARCHPROBLEM_H
#define SBP_TRANSFORMS_SEARCHPROBLEM_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "sbp/Cost/CostModel.h"
#include "sbp/Search/CostGraph.h"
#include <functional>

namespace mlir {
namespace sbp {

/// What a plan costs one device.
struct PlanCost {
  double compute = 0;
  double communication = 0;
  double bytesMoved = 0;
  double parameterBytes = 0;
  /// Parameters plus the most activation and boxing bytes live at once.
  double peakMemory = 0;
  double stepTime() const { return compute + communication; }
};

/// One op's share of a plan, for reports.
struct OpCost {
  Operation *op;
  NdSbpSignature signature;
  double compute = 0;
  /// Boxing of the op's operands into the layouts it needs.
  double communication = 0;
  double bytesMoved = 0;
  double memory = 0;
};

class SearchProblem {
public:
  enum class NodeKind { Op, Argument, Result };
  struct Node {
    NodeKind kind;
    Operation *op = nullptr;
    /// The argument or result number.
    unsigned index = 0;
    /// Op states.
    SmallVector<NdSbpSignature> signatures;
    /// Argument and result states.
    SmallVector<NdSbpAttr> layouts;
    /// How often the op runs per step (loop trip counts).
    double multiplicity = 1;
    /// For arguments: a parameter rather than an input (see Passes.td).
    bool isParameter = false;
    unsigned getNumStates() const {
      return kind == NodeKind::Op ? signatures.size() : layouts.size();
    }
  };

  /// Builds the problem; fails (with an error) on an invalid recorded
  /// signature. The first `tied` arguments come back updated as the first
  /// results, in the layout they were taken in; -1 reads the count from
  /// `sbp.train_step` (its parameters and state). Results from
  /// `partialFrom` on may also be handed back as partial sums: gradients
  /// the caller sums over micro-batches before one reduction per step.
  static FailureOr<SearchProblem> build(FunctionOpInterface func, MeshOp mesh,
                                        const CostModel &model,
                                        int64_t tied = -1,
                                        unsigned partialFrom = ~0u);

  ArrayRef<Node> getNodes() const { return nodes; }
  /// The function the problem places.
  FunctionOpInterface getFunction() const { return func; }
  /// The shape of the mesh it places it on.
  ArrayRef<int64_t> getMeshShape() const { return model->getMeshShape(); }

  /// The graph whose least-cost assignment is the fastest plan when
  /// `memoryWeight` is 0; a positive weight adds that many seconds per byte
  /// of parameters and results each device holds. States `allow` rejects
  /// are left out (a node keeps all when it rejects every state); `states`
  /// maps graph states back to node states.
  CostGraph buildGraph(double memoryWeight,
                       const std::function<bool(const Node &, unsigned)> &allow,
                       std::vector<std::vector<unsigned>> &states) const;

  /// The cost of the plan choosing `states` (one per node), and per op.
  PlanCost evaluate(ArrayRef<unsigned> states,
                    SmallVectorImpl<OpCost> *perOp = nullptr) const;

  /// Records the plan's layouts on the function, as sbp-propagate does.
  void record(ArrayRef<unsigned> states) const;

private:
  /// One use of a tensor value: from the layout its producer gives it to
  /// the layout its consumer needs.
  struct Use {
    RankedTensorType type;
    /// The producing node and result, or a fixed layout.
    int producer = -1;
    unsigned result = 0;
    NdSbpAttr producerLayout;
    /// The consuming node and operand, or a fixed need.
    int consumer = -1;
    unsigned operand = 0;
    /// A loop's yield: the next iteration needs the layout the consumer
    /// (the initial value's producer) gives its result `operand`.
    bool needsProduced = false;
    NdSbpAttr consumerLayout;
    double multiplicity = 1;
    /// Position of the consumer in the function's order (nested ops
    /// numbered), and until where the use keeps the value alive: the end
    /// of the outermost loop around the consumer that is not around the
    /// value's buffer.
    unsigned position = 0, liveUntil = 0;
  };

  SearchProblem(FunctionOpInterface func, const CostModel &model)
      : func(func), model(&model) {}
  NdSbpAttr producedLayout(const Use &use, unsigned state) const;
  NdSbpAttr neededLayout(const Use &use, unsigned state) const;

  /// Interfaces are handles; `mutable` lets const methods use them.
  mutable FunctionOpInterface func;
  const CostModel *model;
  SmallVector<Node> nodes;
  SmallVector<Use> uses;
  /// Compute seconds and result bytes per op node and state.
  SmallVector<SmallVector<double>> computeTimes, resultBytes;
  /// Per node: position of its definition and of its last use (for
  /// liveness); view ops extend their source's life.
  SmallVector<unsigned> defPosition, lastUse;
  unsigned numPositions = 0;
  /// Results of a training step laid out as the argument that a node
  /// decides: (result, argument node).
  SmallVector<std::pair<unsigned, unsigned>> tiedResults;
};

/// A plan: states per node, and what it costs.
struct Plan {
  std::vector<unsigned> states;
  PlanCost cost;
  Solution solution;
  /// Solves the search needed to find it (one per byte price tried).
  unsigned solves = 1;
  /// A proven lower bound on the step time of every plan of the problem
  /// that fits: the bound of the solve without a byte price, which ignores
  /// memory.
  double lowerBound = 0;

  /// How much slower than the bound the plan may be, as a fraction of its
  /// step time: 0 when it is proven optimal.
  double getGap() const;
};

/// Which states of a node a search may choose (all when null).
using Allow = std::function<bool(const SearchProblem::Node &, unsigned)>;

/// What a hand-written recipe does along one mesh axis.
enum class AxisRole {
  /// Nothing: the search chooses.
  Free,
  /// Data parallel: parameters whole, batch inputs split along dimension 0.
  Data,
  /// Megatron-LM's tensor parallelism: parameters split (vectors free) and
  /// read split, never gathered; batch inputs whole. Activations stay free,
  /// so sequence parallelism is among the plans.
  Tensor,
  /// ZeRO-3 / FSDP: parameters split (vectors free) and gathered whole for
  /// every op that reads them; batch inputs split along dimension 0.
  Sharded,
};

/// The plans of a recipe given per mesh axis (axes past `roles` free), as
/// the states it allows. `isParameter` is as for getDataTensorParallel.
Allow getRecipe(
    const SearchProblem &problem, ArrayRef<AxisRole> roles,
    std::function<std::optional<bool>(unsigned)> isParameter = nullptr);

/// Megatron-LM's layout on mesh axes `firstAxis` on (the report's "data x
/// tensor parallel" reference): parameters `B` over the first of those axes
/// and split over the others, batch inputs split along dimension 0 over
/// the first and `B` over the others, and every op reads parameters (or
/// slices, reshapes and element-type casts of them) in such a layout, never
/// gathered. Parameters read only as vectors (biases, LayerNorm's gains)
/// are free over the others.
/// `isParameter` says of an argument whether it is a parameter (true), a
/// batch input (false) or neither, left free (nullopt); by default the
/// node's `isParameter` decides. Axes before `firstAxis` are left alone.
Allow getDataTensorParallel(
    const SearchProblem &problem, unsigned firstAxis = 0,
    std::function<std::optional<bool>(unsigned)> isParameter = nullptr);

/// The least-cost plan of the graph `problem.buildGraph` makes.
Plan solvePlan(const SearchProblem &problem, double memoryWeight,
               const Allow &allow, double timeLimit);

/// The fastest plan whose peak memory per device is within `limit`: the
/// fastest plan when it fits, else the fastest that fits among those of
/// byte prices raised tenfold until one fits and then bisected. Fails when
/// none fits, with the least memory a plan needed in `leastMemory`.
/// `progress` hears of each step; `allow` restricts the states.
FailureOr<Plan> searchWithinMemory(const SearchProblem &problem, double limit,
                                   double timeLimit, double &leastMemory,
                                   function_ref<void(const Twine &)> progress,
                                   const Allow &allow = nullptr);

/// "1.50 MiB", "2.00 GiB".
std::string formatBytes(double bytes);

/// "optimal" for a gap of zero (Plan::getGap), else "gap 3.53%".
std::string formatGap(double gap);

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_SEARCHPROBLEM_H
