//===- Schedule.cpp - Pipeline schedules and their timelines --------------===//

#include "sbp/Runtime/Schedule.h"
#include <algorithm>
#include <map>

using namespace sbp::runtime;

std::optional<PipelineSchedule>
sbp::runtime::parseSchedule(const std::string &name) {
  if (name == "gpipe")
    return PipelineSchedule::GPipe;
  if (name == "1f1b")
    return PipelineSchedule::OneFOneB;
  return std::nullopt;
}

const char *sbp::runtime::getScheduleName(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::GPipe ? "gpipe" : "1f1b";
}

std::vector<PipelineTask> sbp::runtime::getStageTasks(PipelineSchedule schedule,
                                                      int64_t stage,
                                                      int64_t stages,
                                                      int64_t microBatches,
                                                      bool backward) {
  std::vector<PipelineTask> tasks;
  auto forward = [&](int64_t mb) { tasks.push_back({false, mb}); };
  auto back = [&](int64_t mb) { tasks.push_back({true, mb}); };
  if (!backward || schedule == PipelineSchedule::GPipe) {
    for (int64_t mb = 0; mb < microBatches; ++mb)
      forward(mb);
    for (int64_t mb = 0; backward && mb < microBatches; ++mb)
      back(mb);
    return tasks;
  }
  // 1F1B: the last stage alternates from the start; each earlier stage
  // first runs one more forward than the stage after it.
  int64_t warmUp = std::min(stages - stage - 1, microBatches);
  int64_t nextForward = 0, nextBackward = 0;
  for (; nextForward < warmUp; ++nextForward)
    forward(nextForward);
  for (; nextForward < microBatches; ++nextForward, ++nextBackward) {
    forward(nextForward);
    back(nextBackward);
  }
  for (; nextBackward < microBatches; ++nextBackward)
    back(nextBackward);
  return tasks;
}

std::vector<TimedTask>
sbp::runtime::simulateSchedule(PipelineSchedule schedule,
                               const std::vector<StageTimes> &stages,
                               int64_t microBatches, bool backward) {
  int64_t numStages = stages.size();
  std::vector<std::vector<PipelineTask>> order;
  for (int64_t s = 0; s < numStages; ++s)
    order.push_back(
        getStageTasks(schedule, s, numStages, microBatches, backward));
  std::vector<size_t> next(numStages, 0);
  std::vector<double> free(numStages, 0);
  // The link from stage s to stage s + 1 carries one transfer at a time,
  // in either direction; arrivals by (stage, backward, micro-batch).
  std::vector<double> linkFree(numStages, 0);
  std::map<std::tuple<int64_t, bool, int64_t>, double> arrivals;
  auto transfer = [&](int64_t link, double start) {
    double begin = std::max(start, linkFree[link]);
    linkFree[link] = begin + stages[link].send;
    return linkFree[link];
  };
  std::vector<TimedTask> timeline;
  // Each round starts every task whose inputs are known; the schedules
  // never deadlock, so every round starts at least one.
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < numStages; ++s) {
      while (next[s] < order[s].size()) {
        PipelineTask task = order[s][next[s]];
        double ready = 0;
        if (!task.backward && s > 0) {
          auto it = arrivals.find({s, false, task.microBatch});
          if (it == arrivals.end())
            break;
          ready = it->second;
        } else if (task.backward && s + 1 < numStages) {
          auto it = arrivals.find({s, true, task.microBatch});
          if (it == arrivals.end())
            break;
          ready = it->second;
        }
        TimedTask timed;
        timed.stage = s;
        timed.task = task;
        timed.begin = std::max(ready, free[s]);
        timed.end = timed.begin +
                    (task.backward ? stages[s].backward : stages[s].forward);
        free[s] = timed.end;
        if (!task.backward && s + 1 < numStages)
          arrivals[{s + 1, false, task.microBatch}] = transfer(s, timed.end);
        if (task.backward && s > 0)
          arrivals[{s - 1, true, task.microBatch}] = transfer(s - 1, timed.end);
        timeline.push_back(timed);
        ++next[s];
        progress = true;
      }
    }
  }
  return timeline;
}

double sbp::runtime::getMakespan(const std::vector<TimedTask> &timeline) {
  double end = 0;
  for (const TimedTask &task : timeline)
    end = std::max(end, task.end);
  return end;
}

double sbp::runtime::getBubbleFraction(const std::vector<TimedTask> &timeline,
                                       int64_t stages) {
  double makespan = getMakespan(timeline), busy = 0;
  for (const TimedTask &task : timeline)
    busy += task.end - task.begin;
  return makespan > 0 ? 1 - busy / (stages * makespan) : 0;
}
