// experiment_state.json: what a tuning run keeps of itself (after every change, atomically) so
// that `rlx tune --resume` and `--replay` continue from it; read here with every structural
// problem named.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_error.h"
#include "tune/trial.h"

namespace rlx {

constexpr const char* kExperimentStateName = "experiment_state.json";

// The parts of experiment_state.json a resumed run or a replay reads.
struct ExperimentState {
  std::string experiment;        // the experiment's name in experiment.yaml
  nlohmann::json scheduler_state;  // the scheduler's own (Scheduler::load_state checks it)
  std::vector<Trial> trials;
};

// DIR/experiment_state.json; nullopt when it is missing or not JSON (DIR is no tuning run).
// ConfigError naming the file, the member's path ("trials[2].status") and what was expected when
// its structure is wrong.
std::optional<ExperimentState> read_experiment_state(const std::filesystem::path& dir);

// ConfigError for a JsonFieldError `what` found in DIR/experiment_state.json, under `path`
// ("scheduler_state"): "FILE: PATH.MEMBER: expected ..., got ...".
ConfigError experiment_state_error(const std::filesystem::path& dir, const std::string& path, const std::string& what);

}  // namespace rlx
