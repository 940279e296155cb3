//===- Schedule.h - Pipeline schedules and their timelines ------*- C++ -*-===//
//
// The order in which each stage of a pipeline runs its micro-batches'
// forward and backward tasks, and the timeline that order gives when every
// task takes a known time: what the host executes and what the compiler
// predicts, from one definition.
//
//===----------------------------------------------------------------------===//

#ifndef SBP_RUNTIME_SCHEDULE_H
#define SBP_RUNTIME_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sbp::runtime {

enum class PipelineSchedule {
  /// Every forward task, then every backward task (GPipe).
  GPipe,
  /// Warm-up forwards, then alternating one forward and one backward, then
  /// the remaining backwards (PipeDream-flush): stage s keeps at most
  /// stages - s micro-batches' activations.
  OneFOneB,
};

/// "gpipe" or "1f1b".
std::optional<PipelineSchedule> parseSchedule(const std::string &name);
const char *getScheduleName(PipelineSchedule schedule);

struct PipelineTask {
  bool backward = false;
  int64_t microBatch = 0;
};

/// Stage `stage`'s tasks in order. Without `backward` every schedule runs
/// the forward tasks in micro-batch order.
std::vector<PipelineTask> getStageTasks(PipelineSchedule schedule,
                                        int64_t stage, int64_t stages,
                                        int64_t microBatches, bool backward);

/// Seconds one micro-batch takes in a stage.
struct StageTimes {
  double forward = 0, backward = 0;
  /// To send its forward results to the next stage (and the gradients of
  /// its inputs back).
  double send = 0;
};

struct TimedTask {
  int64_t stage = 0;
  PipelineTask task;
  double begin = 0, end = 0;
};

/// The timeline of the schedule: every task starts once its stage is free
/// and its inputs have arrived (a forward task after the previous stage's
/// forward of that micro-batch and its transfer, a backward after the next
/// stage's backward and its transfer). Sends are eager: a stage goes on
/// while its transfer runs, but the link between two stages carries one
/// transfer at a time.
std::vector<TimedTask> simulateSchedule(PipelineSchedule schedule,
                                        const std::vector<StageTimes> &stages,
                                        int64_t microBatches, bool backward);

/// The end of the last task.
double getMakespan(const std::vector<TimedTask> &timeline);

/// The fraction of the step that the stages are idle: 1 - (busy time) /
/// (stages * makespan). With equal stages and no sends it is
/// (p - 1) / (m + p - 1) for p stages and m micro-batches.
double getBubbleFraction(const std::vector<TimedTask> &timeline,
                         int64_t stages);

} // namespace sbp::runtime

#endif // SBP_RUNTIME_SCHEDULE_H
