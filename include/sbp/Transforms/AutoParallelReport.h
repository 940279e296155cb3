//===- AutoParallelReport.h - What the search chose and gained --*- C++ -*-===//
//
// The report of sbp-auto-parallel: per function the search's figures, the
// plan's predicted totals beside those of reference strategies, and per op
// its signature, compute, communication and memory. Written as JSON, or as
// Markdown tables for a `.md` path.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_TRANSFORMS_AUTOPARALLELREPORT_H
#define SBP_TRANSFORMS_AUTOPARALLELREPORT_H

#include "sbp/Transforms/SearchProblem.h"
#include "sbp/Transforms/StagePlanner.h"
#include <memory>

namespace mlir {
namespace sbp {

class AutoParallelReport {
public:
  AutoParallelReport(const CostModel &model, MeshOp mesh, double memoryLimit);
  ~AutoParallelReport();

  /// Adds `func`'s plan for `problem`, how it was found (its solves, its
  /// bound) in `seconds`, and the totals of the named reference
  /// strategies.
  void addFunction(FunctionOpInterface func, const SearchProblem &problem,
                   const Plan &plan, double seconds,
                   ArrayRef<std::pair<std::string, PlanCost>> references);

  /// Notes that the last function added recomputes `segments` of its
  /// `of` forward segments in the backward pass, copying `ops` ops.
  void setRecomputation(int64_t segments, int64_t of, int64_t ops);

  /// Adds the pipeline the search chose, the predicted step of the best
  /// plan without stages (+inf when none fits or none was priced) and
  /// Megatron-LM's pipeline of as many stages (priceReferencePipeline)
  /// when there is one, and why the pipeline was taken.
  void setPipeline(const PipelinePlan &plan, double singleStepTime,
                   const PipelinePlan *reference, StringRef why);

  /// Writes the report to `path`: Markdown when it ends in `.md`, else JSON.
  LogicalResult write(StringRef path) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace sbp
} // namespace mlir

#endif // SBP_TRANSFORMS_AUTOPARALLELREPORT_H
