// Learning curves: a progress.csv column of one or many trials against environment steps. Runs
// of one experiment that differ only in their seed (watch/plot_data.h, group_by_config) are drawn
// as their mean line in a min-max band; every other trial as a plain line.
#pragma once

#include <string>
#include <vector>

#include "watch/canvas.h"
#include "watch/plot_data.h"

namespace rlx {

struct LearningCurveOptions {
  std::string x_column = "timesteps_total";
  std::string metric = "episode_return_mean";
  std::string title;         // empty: the experiments and the metric
  bool group_seeds = true;   // false: every trial its own line
};

// Draws the trials' `metric` against `x_column` onto `canvas`; std::invalid_argument when a
// trial lacks either column, or when no trial has a row with both.
void draw_learning_curves(Canvas& canvas, const std::vector<TrialResults>& trials, const LearningCurveOptions& options);

}  // namespace rlx
