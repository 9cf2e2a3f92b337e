// Trial JSON form and helpers.
#include "tune/trial.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "core/json_fields.h"

namespace rlx {
namespace {

const char* kStatusNames[] = {"PENDING", "RUNNING", "PAUSED", "TERMINATED", "ERROR"};

nlohmann::json optional_json(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

}  // namespace

const char* trial_status_name(TrialStatus status) { return kStatusNames[static_cast<int>(status)]; }

double Trial::time(const std::string& attr) const {
  if (attr == "training_iteration") return static_cast<double>(iteration);
  if (attr == "timesteps_total") return static_cast<double>(timesteps);
  if (attr == "time_total_s") return time_s;
  throw std::invalid_argument("unknown time attribute '" + attr + "'");
}

double trial_score(const std::optional<double>& metric, const std::string& mode) {
  if (!metric || *metric != *metric) return -std::numeric_limits<double>::infinity();
  return mode == "min" ? -*metric : *metric;
}

std::optional<size_t> best_trial_index(const std::vector<Trial>& trials, const std::string& mode) {
  std::optional<size_t> best;
  for (size_t i = 0; i < trials.size(); ++i) {
    const auto& value = ranked_metric(trials[i]);
    if (!value || *value != *value) continue;
    if (!best || trial_score(value, mode) > trial_score(ranked_metric(trials[*best]), mode)) best = i;
  }
  return best;
}

nlohmann::json trial_to_json(const Trial& t) {
  nlohmann::json json = {{"name", t.name},
                         {"initial_params", t.initial_params},
                         {"params", t.params},
                         {"status", trial_status_name(t.status)},
                         {"awaiting_decision", t.awaiting_decision},
                         {"failures", t.failures},
                         {"segments", t.segments},
                         {"decisions", t.decisions},
                         {"training_iteration", t.iteration},
                         {"timesteps_total", t.timesteps},
                         {"time_total_s", t.time_s},
                         {"metric", optional_json(t.metric)},
                         {"best_metric", optional_json(t.best_metric)},
                         {"checkpoint", t.checkpoint ? nlohmann::json(*t.checkpoint) : nlohmann::json()},
                         {"checkpoint_metric", optional_json(t.checkpoint_metric)},
                         {"pause_at", optional_json(t.pause_at)},
                         {"stopped_by", t.stopped_by},
                         {"error", t.error},
                         {"pending_exploit", nullptr}};
  if (t.pending) {
    json["pending_exploit"] = {{"id", t.pending->id},
                               {"donor", t.pending->donor},
                               {"donor_checkpoint", t.pending->donor_checkpoint},
                               {"old_params", t.pending->old_params},
                               {"new_params", t.pending->new_params},
                               {"donor_metric", optional_json(t.pending->donor_metric)}};
  }
  return json;
}

Trial trial_from_json(const nlohmann::json& json, const std::string& path) {
  const auto number = [&](const char* key) { return json_optional_field<double>(json, key, path); };
  Trial t;
  t.name = json_field<std::string>(json, "name", path);
  t.initial_params = json_field<JsonObject>(json, "initial_params", path);
  t.params = json_field<JsonObject>(json, "params", path);
  const std::string status = json_field<std::string>(json, "status", path);
  const auto known = std::find(std::begin(kStatusNames), std::end(kStatusNames), status);
  if (known == std::end(kStatusNames)) {
    throw JsonFieldError(json_member_path(path, "status") + ": expected one of PENDING, RUNNING, PAUSED, TERMINATED, "
                         "ERROR, got \"" + status + "\"");
  }
  t.status = static_cast<TrialStatus>(known - std::begin(kStatusNames));
  t.awaiting_decision = json_field<bool>(json, "awaiting_decision", path);
  t.failures = json_field<int64_t>(json, "failures", path);
  t.segments = json_field<int64_t>(json, "segments", path);
  t.decisions = json_field<int64_t>(json, "decisions", path);
  t.iteration = json_field<int64_t>(json, "training_iteration", path);
  t.timesteps = json_field<int64_t>(json, "timesteps_total", path);
  t.time_s = json_field<double>(json, "time_total_s", path);
  t.metric = number("metric");
  t.best_metric = number("best_metric");
  t.checkpoint = json_optional_field<std::string>(json, "checkpoint", path);
  t.checkpoint_metric = number("checkpoint_metric");
  t.pause_at = number("pause_at");
  t.stopped_by = json_field<std::string>(json, "stopped_by", path);
  t.error = json_field<std::string>(json, "error", path);
  if (const auto p = json_optional_field<JsonObject>(json, "pending_exploit", path)) {
    const std::string at = json_member_path(path, "pending_exploit");
    t.pending = PendingExploit{json_field<std::string>(*p, "id", at), json_field<std::string>(*p, "donor", at),
                               json_field<std::string>(*p, "donor_checkpoint", at), json_field<JsonObject>(*p, "old_params", at),
                               json_field<JsonObject>(*p, "new_params", at), json_optional_field<double>(*p, "donor_metric", at)};
  }
  return t;
}

}  // namespace rlx
