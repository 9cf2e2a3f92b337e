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
  int64_t attempt = 1;    // the runs of this trial so far, this one included (each resume adds one)
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

// The sampler's health as rows carry it (counts, workers_active, worker_idle_share).
nlohmann::json sampler_json(const SamplerStats& sampling);

// Counts over a trial's attempts: `earlier`'s counts (earlier attempts', from the checkpoint)
// plus `this_attempt`'s; what is state rather than a count (workers_active, fragments_queued)
// is this attempt's.
SamplerStats sampler_totals(const SamplerStats& this_attempt, const SamplerStats& earlier);
// The counts of sampler_totals for a checkpoint's manifest, and back (0 for a missing key: a
// checkpoint from before they were kept).
nlohmann::json sampler_counts_json(const SamplerStats& sampling);
SamplerStats sampler_counts_from_json(const nlohmann::json& counts);

}  // namespace rlx
