#include "algorithms/training_counters.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace rlx {

namespace {

// The counts that add up over attempts, by their names in rows and manifests.
struct SamplerCount {
  const char* name;
  uint64_t SamplerStats::*member;
};
constexpr SamplerCount kSamplerCounts[] = {
    {"fragments_dropped_stale", &SamplerStats::fragments_dropped_stale},
    {"fragments_dropped_other", &SamplerStats::fragments_dropped_other},
    {"fragments_refused", &SamplerStats::fragments_refused},
    {"messages_rejected", &SamplerStats::messages_rejected},
    {"worker_restarts", &SamplerStats::worker_restarts},
    {"episodes_dropped_nonfinite", &SamplerStats::episodes_dropped_nonfinite},
    {"fragments_received", &SamplerStats::fragments_received},
    {"fragments_consumed", &SamplerStats::fragments_consumed},
    {"fragments_dropped_at_stop", &SamplerStats::fragments_dropped_at_stop},
    {"workers_joined", &SamplerStats::workers_joined},
    {"workers_lost", &SamplerStats::workers_lost},
    {"workers_left", &SamplerStats::workers_left},
    {"workers_failed", &SamplerStats::workers_failed},
    {"workers_rejoined", &SamplerStats::workers_rejoined},
    {"handshakes_refused", &SamplerStats::handshakes_refused},
};
constexpr std::pair<const char*, double SamplerStats::*> kSamplerSeconds[] = {
    {"worker_ready_s", &SamplerStats::worker_ready_s},
    {"worker_idle_s", &SamplerStats::worker_idle_s},
};

// The counts alone, by name.
nlohmann::json counts_json(const SamplerStats& sampling) {
  nlohmann::json out = nlohmann::json::object();
  for (const SamplerCount& count : kSamplerCounts) out[count.name] = sampling.*count.member;
  out["worker_failures"] = sampling.worker_failures;
  return out;
}

}  // namespace

nlohmann::json sampler_json(const SamplerStats& sampling) {
  nlohmann::json out = counts_json(sampling);
  out["workers_active"] = sampling.workers_active;
  out["fragments_queued"] = sampling.fragments_queued;
  out["worker_idle_share"] = sampling.worker_ready_s > 0 ? nlohmann::json(sampling.worker_idle_s / sampling.worker_ready_s)
                                                         : nlohmann::json();
  return out;
}

SamplerStats sampler_totals(const SamplerStats& this_attempt, const SamplerStats& earlier) {
  SamplerStats total = this_attempt;
  for (const SamplerCount& count : kSamplerCounts) total.*count.member += earlier.*count.member;
  for (const auto& [name, member] : kSamplerSeconds) total.*member += earlier.*member;
  for (const auto& [cause, count] : earlier.worker_failures) total.worker_failures[cause] += count;
  return total;
}

nlohmann::json sampler_counts_json(const SamplerStats& sampling) {
  nlohmann::json out = counts_json(sampling);
  // What is queued now, an attempt resumed from this checkpoint never takes: with these, every
  // fragment received is still accounted for (consumed, queued, dropped or refused).
  out["fragments_dropped_at_stop"] = sampling.fragments_dropped_at_stop + sampling.fragments_queued;
  for (const auto& [name, member] : kSamplerSeconds) out[name] = sampling.*member;
  return out;
}

SamplerStats sampler_counts_from_json(const nlohmann::json& counts) {
  SamplerStats sampling;
  for (const SamplerCount& count : kSamplerCounts) sampling.*count.member = counts.value(count.name, uint64_t{0});
  for (const auto& [name, member] : kSamplerSeconds) sampling.*member = counts.value(name, 0.0);
  sampling.worker_failures = counts.value("worker_failures", std::map<std::string, uint64_t>{});
  return sampling;
}

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
          {"attempt", counters.attempt},
          {"episode_return_mean", or_null(window.return_mean())},
          {"episode_return_min", or_null(window.return_min())},
          {"episode_return_max", or_null(window.return_max())},
          {"episode_len_mean", or_null(window.length_mean())},
          {"sampler", sampler_json(sampling)}};
}

}  // namespace rlx
