// The PPO learners' checkpoint file, one format for both back ends (the native learner and
// LibTorch's PpoLearner), so that a run trained by one resumes or evaluates with the other (a
// CPU run continued with two data-parallel learners, or on a GPU). Little-endian:
//   8 bytes   magic "RLXNPPO1"
//   uint64    P, the number of parameters
//   P float32 parameters, in the flat order of models/network_layout.h
//   uint64    Adam's step count (0 before the first step)
//   P float32 Adam's exp_avg
//   P float32 Adam's exp_avg_sq
// Statistics and counters travel in the learners' state_json(), beside it in checkpoint.json:
// {"obs_stats", "reward_scaler", "num_updates", "seed"} (PpoStatistics below).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "native/running_mean_std.h"

namespace rlx {

// The checkpoint's name for this file.
constexpr const char* kPpoLearnerFile = "ppo_learner.bin";

// Parameters and Adam state of a PPO learner.
struct PpoLearnerState {
  std::vector<float> params;
  int64_t adam_step = 0;
  std::vector<float> exp_avg;     // empty when adam_step is 0 (written as zeros)
  std::vector<float> exp_avg_sq;  // likewise
};

// Writes the format above; throws std::invalid_argument when the Adam vectors are neither empty
// nor params' size, std::runtime_error when the stream fails.
void write_ppo_learner_state(std::ostream& out, const PpoLearnerState& state);

// Whether `bytes` begins with the format's magic (LibTorch's older archives do not).
bool is_ppo_learner_state(const std::string& bytes);

// Reads the format for a model of num_parameters; throws std::invalid_argument naming the
// mismatch (magic, parameter count, Adam step, truncation and how much was there).
PpoLearnerState read_ppo_learner_state(std::istream& in, int64_t num_parameters);

// A PPO learner's running statistics and counters: what its state_json() holds.
struct PpoStatistics {
  RunningMeanStd obs_stats;
  RewardScaler reward_scaler;
  int64_t num_updates = 0;
  uint64_t seed = 0;
};

// {"obs_stats", "reward_scaler", "num_updates", "seed"}.
nlohmann::json ppo_statistics_json(const PpoStatistics& statistics);

// Parses ppo_statistics_json's form for observations of obs_size and the learner's gamma (a
// state without "seed" keeps `seed`); throws std::invalid_argument on a malformed or mismatched
// state.
PpoStatistics parse_ppo_statistics(const nlohmann::json& state, int64_t obs_size, double gamma, uint64_t seed);

}  // namespace rlx
