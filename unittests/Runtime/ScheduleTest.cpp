//===- ScheduleTest.cpp - Pipeline schedules and their timelines ----------===//

#include "sbp/Runtime/Schedule.h"
#include "gtest/gtest.h"
#include <string>

using namespace sbp::runtime;

namespace {

/// "F0 F1 B0 ..." for a stage's tasks.
std::string format(const std::vector<PipelineTask> &tasks) {
  std::string text;
  for (const PipelineTask &task : tasks)
    text += (text.empty() ? "" : " ") + std::string(task.backward ? "B" : "F") +
            std::to_string(task.microBatch);
  return text;
}

TEST(Schedule, ParsesNames) {
  EXPECT_EQ(parseSchedule("gpipe"), PipelineSchedule::GPipe);
  EXPECT_EQ(parseSchedule("1f1b"), PipelineSchedule::OneFOneB);
  EXPECT_FALSE(parseSchedule("1F1B"));
  EXPECT_STREQ(getScheduleName(PipelineSchedule::OneFOneB), "1f1b");
}

TEST(Schedule, GPipeRunsEveryForwardFirst) {
  EXPECT_EQ(format(getStageTasks(PipelineSchedule::GPipe, 0, 4, 3, true)),
            "F0 F1 F2 B0 B1 B2");
}

TEST(Schedule, OneFOneBWarmsUpByDepth) {
  // PipeDream-flush with 4 stages and 6 micro-batches: stage s runs 3 - s
  // forwards first, then alternates, then drains its backwards.
  auto tasks = [](int64_t stage) {
    return format(getStageTasks(PipelineSchedule::OneFOneB, stage, 4, 6, true));
  };
  EXPECT_EQ(tasks(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(tasks(2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(tasks(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than the warm-up: forwards, then backwards.
  EXPECT_EQ(format(getStageTasks(PipelineSchedule::OneFOneB, 0, 4, 2, true)),
            "F0 F1 B0 B1");
}

TEST(Schedule, ForwardOnlyIsTheSameInBoth) {
  for (PipelineSchedule schedule :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
    EXPECT_EQ(format(getStageTasks(schedule, 1, 4, 3, false)), "F0 F1 F2");
}

TEST(Schedule, EqualStagesHaveTheTextbookBubble) {
  // p stages of time 1, m micro-batches, no transfer time: the step is
  // m + p - 1 and the bubble (p - 1) / (m + p - 1), forward only and with
  // backwards twice as long, in both schedules.
  for (int64_t m : {1, 4, 16}) {
    std::vector<StageTimes> stages(4, StageTimes{1, 2, 0});
    auto forward = simulateSchedule(PipelineSchedule::GPipe, stages, m, false);
    EXPECT_DOUBLE_EQ(getMakespan(forward), m + 3);
    EXPECT_NEAR(getBubbleFraction(forward, 4), 3.0 / (m + 3), 1e-12);
    for (PipelineSchedule schedule :
         {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
      auto step = simulateSchedule(schedule, stages, m, true);
      EXPECT_DOUBLE_EQ(getMakespan(step), 3 * (m + 3)) << m;
      EXPECT_NEAR(getBubbleFraction(step, 4), 3.0 / (m + 3), 1e-12);
    }
  }
}

TEST(Schedule, TransfersShareTheirLink) {
  // Two stages of time 1 whose link takes 2 per micro-batch: the link, not
  // the stages, sets the pace (one arrival every 2), and the last
  // micro-batch ends after its transfer and the second stage.
  std::vector<StageTimes> stages = {{1, 0, 2}, {1, 0, 0}};
  auto timeline = simulateSchedule(PipelineSchedule::GPipe, stages, 3, false);
  ASSERT_EQ(timeline.size(), 6u);
  EXPECT_DOUBLE_EQ(getMakespan(timeline), 1 + 3 * 2 + 1);
  // The first stage never waits: its sends are eager.
  for (const TimedTask &task : timeline)
    if (task.stage == 0)
      EXPECT_DOUBLE_EQ(task.begin, task.task.microBatch);
}

} // namespace
