// The numbers on a plot's axes: where ticks go (1, 2, 2.5 or 5 times a power of ten) and how
// they read (1k, 250k, 1.5M, 0.25, 2e-4), and the map from data to pixels.
#pragma once

#include <string>
#include <vector>

namespace rlx {

struct Ticks {
  double lo = 0;    // the axis' range: the data's, widened to a multiple of step
  double hi = 1;
  double step = 1;  // between neighbouring ticks
  std::vector<double> values;
};

// About `target` intervals of ticks spanning [lo, hi] (swapped when hi < lo; widened around a single value).
Ticks nice_ticks(double lo, double hi, int target);

// A tick's label: thousands as k, millions as M, billions as B ("0", "500", "1k", "1.5k",
// "250k", "1M"), small steps in scientific notation ("2e-4"); as many decimals as `step` needs.
std::string format_tick(double value, double step);

// A value with three significant digits at most, for hyperparameters: "0.2", "0.01", "3e-4",
// "5.89e-4", "475", "12.3k".
std::string format_compact(double value);

// An axis label for a progress.csv column, with its unit: "environment steps" for
// timesteps_total, "episode return (mean of last 100 episodes)" for episode_return_mean; other
// columns by their name.
std::string column_label(const std::string& column);

// A short name for a column in a title: "episode return", else the column.
std::string column_title(const std::string& column);

// `text` through format_compact when it is a number ("0.000300" -> "3e-4"), else unchanged.
std::string format_compact_text(const std::string& text);

// Data value to pixel along one axis: lo..hi onto pixel_lo..pixel_hi (pixel_hi < pixel_lo for
// a y axis, whose pixels grow downwards).
struct AxisMap {
  double lo = 0;
  double hi = 1;
  double pixel_lo = 0;
  double pixel_hi = 1;

  double operator()(double value) const { return pixel_lo + (value - lo) / (hi - lo) * (pixel_hi - pixel_lo); }
};

}  // namespace rlx
