#include "tune/experiment_state.h"

#include "core/json_fields.h"
#include "tune/segment.h"

namespace rlx {

ConfigError experiment_state_error(const std::filesystem::path& dir, const std::string& path, const std::string& what) {
  return ConfigError((dir / kExperimentStateName).string() + ": " + (path.empty() ? what : path + "." + what) +
                     " (a tuning run's state file; repair or restore it to resume)");
}

std::optional<ExperimentState> read_experiment_state(const std::filesystem::path& dir) {
  const std::optional<nlohmann::json> json = read_json_file(dir / kExperimentStateName);
  if (!json) return std::nullopt;
  try {
    ExperimentState state;
    state.experiment = json_field<std::string>(*json, "experiment");
    state.scheduler_state = json_field<nlohmann::json>(*json, "scheduler_state");
    const nlohmann::json& trials = json_field<JsonArray>(*json, "trials");
    for (size_t i = 0; i < trials.size(); ++i) {
      state.trials.push_back(trial_from_json(trials[i], json_element_path("trials", i)));
    }
    return state;
  } catch (const JsonFieldError& error) {
    throw experiment_state_error(dir, "", error.what());
  }
}

}  // namespace rlx
