// Trial JSON form and helpers.
#include "tune/trial.h"

#include <limits>
#include <stdexcept>

namespace rlx {
namespace {

const char* kStatusNames[] = {"PENDING", "RUNNING", "PAUSED", "TERMINATED", "ERROR"};

nlohmann::json optional_json(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }
std::optional<double> optional_double(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

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

Trial trial_from_json(const nlohmann::json& json) {
  try {
    Trial t;
    t.name = json.at("name").get<std::string>();
    t.initial_params = json.at("initial_params");
    t.params = json.at("params");
    const std::string status = json.at("status").get<std::string>();
    bool known = false;
    for (int i = 0; i < 5; ++i) {
      if (status == kStatusNames[i]) {
        t.status = static_cast<TrialStatus>(i);
        known = true;
      }
    }
    if (!known) throw std::runtime_error("unknown status '" + status + "'");
    t.awaiting_decision = json.at("awaiting_decision").get<bool>();
    t.failures = json.at("failures").get<int64_t>();
    t.segments = json.at("segments").get<int64_t>();
    t.decisions = json.at("decisions").get<int64_t>();
    t.iteration = json.at("training_iteration").get<int64_t>();
    t.timesteps = json.at("timesteps_total").get<int64_t>();
    t.time_s = json.at("time_total_s").get<double>();
    t.metric = optional_double(json, "metric");
    t.best_metric = optional_double(json, "best_metric");
    if (!json.at("checkpoint").is_null()) t.checkpoint = json.at("checkpoint").get<std::string>();
    t.checkpoint_metric = optional_double(json, "checkpoint_metric");
    t.pause_at = optional_double(json, "pause_at");
    t.stopped_by = json.at("stopped_by").get<std::string>();
    t.error = json.at("error").get<std::string>();
    if (const auto& p = json.at("pending_exploit"); !p.is_null()) {
      t.pending = PendingExploit{p.at("id").get<std::string>(), p.at("donor").get<std::string>(),
                                 p.at("donor_checkpoint").get<std::string>(), p.at("old_params"), p.at("new_params"),
                                 optional_double(p, "donor_metric")};
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed trial entry: ") + e.what());
  }
}

}  // namespace rlx
