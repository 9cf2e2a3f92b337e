#include "algorithms/training_counters.h"

#include <cmath>
#include <stdexcept>

namespace rlx {

namespace {

nlohmann::json sampler_json(const SamplerStats& sampling) {
  return {{"fragments_dropped_stale", sampling.fragments_dropped_stale},
          {"fragments_dropped_other", sampling.fragments_dropped_other},
          {"fragments_refused", sampling.fragments_refused},
          {"messages_rejected", sampling.messages_rejected},
          {"worker_restarts", sampling.worker_restarts},
          {"workers_active", sampling.workers_active},
          {"episodes_dropped_nonfinite", sampling.episodes_dropped_nonfinite},
          {"fragments_received", sampling.fragments_received},
          {"fragments_consumed", sampling.fragments_consumed},
          {"fragments_queued", sampling.fragments_queued},
          {"workers_joined", sampling.workers_joined},
          {"workers_lost", sampling.workers_lost},
          {"workers_left", sampling.workers_left},
          {"workers_rejoined", sampling.workers_rejoined},
          {"handshakes_refused", sampling.handshakes_refused},
          {"worker_idle_share", sampling.worker_ready_s > 0 ? nlohmann::json(sampling.worker_idle_s / sampling.worker_ready_s)
                                                            : nlohmann::json()}};
}

}  // namespace

const std::vector<std::string>& pause_counter_names() {
  static const std::vector<std::string> names = {"training_iteration", "timesteps_total", "time_total_s"};
  return names;
}

double counter_value(const TrainingCounters& counters, const std::string& name) {
  if (name == "training_iteration") return static_cast<double>(counters.iteration);
  if (name == "timesteps_total") return static_cast<double>(counters.timesteps);
  if (name == "time_total_s") return counters.time_s;
  throw std::invalid_argument("unknown pause counter '" + name + "'");
}

std::string stop_reason(const StopCriteria& stop, const TrainingCounters& counters, const EpisodeWindow& window) {
  if (stop.episode_return_mean && window.size() >= kEpisodeWindow && window.return_mean() >= *stop.episode_return_mean) {
    return "episode_return_mean";
  }
  if (stop.timesteps_total && counters.timesteps >= *stop.timesteps_total) return "timesteps_total";
  if (stop.time_total_s && counters.time_s >= *stop.time_total_s) return "time_total_s";
  if (stop.training_iteration && counters.iteration >= *stop.training_iteration) return "training_iteration";
  return "";
}

nlohmann::json counters_json(const TrainingCounters& counters, const EpisodeWindow& window, const SamplerStats& sampling) {
  const auto or_null = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  return {{"training_iteration", counters.iteration},
          {"timesteps_total", counters.timesteps},
          {"time_total_s", counters.time_s},
          {"episodes_total", counters.episodes},
          {"episode_return_mean", or_null(window.return_mean())},
          {"episode_return_min", or_null(window.return_min())},
          {"episode_return_max", or_null(window.return_max())},
          {"episode_len_mean", or_null(window.length_mean())},
          {"sampler", sampler_json(sampling)}};
}

}  // namespace rlx
