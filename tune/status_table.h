// The live status table of `rlx tune` (trial, status, hyperparameters, iteration, timesteps, the
// metric trials are ranked by, the latest reported value) headed by the best trial, and the
// trials.csv summary.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/trial.h"
#include "tune/tune_spec.h"

namespace rlx {

class StatusTable {
 public:
  // Shows a running trial's latest row instead of its last segment's end.
  void set_live(const std::string& trial, const nlohmann::json& row, std::optional<double> metric);
  void clear_live(const std::string& trial);
  // Prints the table, headed by a count of trials per status, `note` and the best trial. The
  // metric column is ranked_metric (the value best_trial_index picks by); "latest" is the last
  // reported value (a running trial's live one).
  void print(std::ostream& out, const std::vector<Trial>& trials, const TuneSpec& spec, const std::string& note) const;

 private:
  struct Live {
    int64_t iteration = 0, timesteps = 0;
    std::optional<double> metric;
  };
  std::map<std::string, Live> live_;
};

// trials.csv: trial, status, counters, the ranked metric, the latest and the best reported
// values, failures, stopped_by, checkpoint, then params.
std::string trials_csv(const std::vector<Trial>& trials, const std::string& metric);

}  // namespace rlx
