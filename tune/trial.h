// A trial of a tuning run: its hyperparameters, status, progress, latest checkpoint and
// pending PBT exploit, and the JSON form experiment_state.json keeps it in.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

// PENDING: not started; RUNNING: a segment process runs; PAUSED: at a scheduler boundary with
// a checkpoint; TERMINATED: a stop criterion or the scheduler ended it; ERROR: out of retries.
enum class TrialStatus { kPending, kRunning, kPaused, kTerminated, kError };

// "PENDING", "RUNNING", ...
const char* trial_status_name(TrialStatus status);

// An exploit decided but perhaps not yet carried out (saved first, so a resumed tuner redoes
// it instead of deciding again).
struct PendingExploit {
  std::string id;                // "<trial>@<decision number>": one pbt_log.jsonl line per id
  std::string donor;             // the donor trial's name
  std::string donor_checkpoint;  // the donor's checkpoint directory copied
  nlohmann::json old_params;
  nlohmann::json new_params;     // the donor checkpoint's params, explored
  std::optional<double> donor_metric;  // the metric at the donor's checkpoint (what the copy now scores)
};

struct Trial {
  std::string name;                      // "trial_00003": its directory under the experiment
  nlohmann::json initial_params = nlohmann::json::object();
  nlohmann::json params = nlohmann::json::object();  // current hyperparameters {key: value}
  TrialStatus status = TrialStatus::kPending;
  bool awaiting_decision = false;        // PAUSED at a boundary, the scheduler not yet asked
  int64_t failures = 0;                  // crashed segments so far
  int64_t failures_in_a_row = 0;         // crashed segments since one that ended well (not saved)
  std::chrono::steady_clock::time_point retry_at{};  // a crashed trial's next try waits until then (not saved)
  int64_t segments = 0;                  // segment processes started
  int64_t decisions = 0;                 // scheduler decisions made (seeds PBT's draws)
  int64_t iteration = 0;
  int64_t timesteps = 0;
  double time_s = 0;
  std::optional<double> metric;          // the latest reported value of the tuned metric
  std::optional<double> best_metric;     // the best value ever reported (per mode); shown in trials.csv only
  std::optional<std::string> checkpoint; // the latest checkpoint the tuner knows
  std::optional<double> checkpoint_metric;  // the metric at that checkpoint: what the trial is ranked by
  std::optional<double> pause_at;        // the boundary (time_attr) the running/next segment pauses at
  std::string stopped_by;                // why it ended ("episode_return_mean", "asha", ...)
  std::string error;                     // the last failure
  std::optional<PendingExploit> pending;

  // The value of a time attribute (training_iteration, timesteps_total, time_total_s).
  double time(const std::string& attr) const;
  // True when it may run another segment now.
  bool runnable() const { return status == TrialStatus::kPending || (status == TrialStatus::kPaused && !awaiting_decision && !pending); }
  bool finished() const { return status == TrialStatus::kTerminated || status == TrialStatus::kError; }
};

nlohmann::json trial_to_json(const Trial& trial);
// The trial of an entry found at `path` ("trials[2]"); JsonFieldError naming the member's path and
// what was expected on a malformed entry.
Trial trial_from_json(const nlohmann::json& json, const std::string& path = "trial");

// `metric` with the sign that makes larger better for `mode` ("max"/"min"); -inf when missing.
double trial_score(const std::optional<double>& metric, const std::string& mode);

// The one rule by which trials are compared everywhere (PBT's donors, the status table's metric
// column, the best trial): the metric at the trial's latest checkpoint, which is its last
// reported value whenever a segment ended there, and the donor's value right after an exploit.
inline const std::optional<double>& ranked_metric(const Trial& trial) { return trial.checkpoint_metric; }

// The index of the best trial by ranked_metric for `mode`, the first on a tie; nullopt when no
// trial has a ranked value.
std::optional<size_t> best_trial_index(const std::vector<Trial>& trials, const std::string& mode);

}  // namespace rlx
