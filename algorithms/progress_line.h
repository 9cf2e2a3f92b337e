// What `rlx train` shows the user as it runs: the live progress line on stderr, and where its
// other lines for the user go.
#pragma once

#include <chrono>
#include <string>

#include <spdlog/logger.h>

#include "algorithms/training_counters.h"

namespace rlx {

// Where a line for the user goes: stderr (and the log) when the run shows its progress, else
// the log file only (`rlx train -q`).
spdlog::logger& progress_logger(bool progress);

// The live line: one line rewritten in place on a terminal, a line every few seconds otherwise.
class ProgressLine {
 public:
  // Shows nothing unless `enabled`; whether stderr is a terminal picks the form.
  explicit ProgressLine(bool enabled);
  // "[ALGO env] iter I  steps S  return R  N steps/s  T s" ("-" for a NaN return); off a
  // terminal, at most one line every 5 seconds.
  void show(const std::string& algorithm, const std::string& env, const TrainingCounters& counters,
            double return_mean, double steps_per_s);
  // Ends the line left in place on a terminal.
  void finish();

 private:
  bool enabled_, tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace rlx
