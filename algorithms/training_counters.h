// A training run's counters (iterations, env steps, episodes, seconds): the stop criteria and
// pause points they meet, and the columns that every results row and result.json carry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/episode_window.h"
#include "algorithms/sampler.h"
#include "core/experiment.h"

namespace rlx {

// Counters that a checkpoint carries and a resumed run continues from.
struct TrainingCounters {
  int64_t iteration = 0;  // training_iteration
  int64_t timesteps = 0;  // timesteps_total
  int64_t episodes = 0;   // episodes_total
  double time_s = 0.0;    // time_total_s
};

// The counters pause_at may name.
const std::vector<std::string>& pause_counter_names();

// The counter `name` (one of pause_counter_names()); std::invalid_argument for another name.
double counter_value(const TrainingCounters& counters, const std::string& name);

// The criterion of `stop` the run meets now ("episode_return_mean", "timesteps_total",
// "time_total_s" or "training_iteration"), or "" to go on. The reward counts with a full window.
std::string stop_reason(const StopCriteria& stop, const TrainingCounters& counters, const EpisodeWindow& window);

// The counters, the window's means (null while it is empty) and the sampler's health: what
// every results row and result.json carry.
nlohmann::json counters_json(const TrainingCounters& counters, const EpisodeWindow& window, const SamplerStats& sampling);

}  // namespace rlx
