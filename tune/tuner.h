// The experiment controller behind `rlx tune`: trials as `rlx train` segment processes, the
// scheduler's decisions between segments, PBT exploits, retries of crashed trials, the live
// status table, experiment_state.json (atomic, after every change), trials.csv, resume after
// a crash, and the replay of one trial's PBT schedule.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

constexpr const char* kExperimentStateName = "experiment_state.json";
constexpr const char* kPbtLogName = "pbt_log.jsonl";
constexpr const char* kTrialsCsvName = "trials.csv";
constexpr const char* kTunedExperimentName = "experiment.yaml";  // the resolved experiment trials run

struct TunerOptions {
  std::filesystem::path experiment_file;        // a fresh run: the YAML file...
  std::string experiment_name;                  // ...and which experiment of it ("" when it holds one)
  std::vector<std::string> overrides;           // --set applied to the base experiment
  std::filesystem::path output_root = "runs";   // trials go to OUTPUT/<experiment>/<trial>/
  std::optional<std::filesystem::path> resume;  // OUTPUT/<experiment> of an interrupted run
  std::string rlx_program;                      // the rlx binary the trial segments run
  bool table = true;                            // the live status table on stderr
};

struct TuneOutcome {
  std::filesystem::path experiment_dir;
  std::optional<std::string> best_trial;  // by the last value of the metric
  std::optional<double> best_metric;
  nlohmann::json best_params;
  std::optional<std::filesystem::path> best_checkpoint;
  int errored_trials = 0;
};

// Runs (or resumes) a tuning experiment until every trial is terminated or out of retries;
// writes the report to `out`. ConfigError on a bad tune: section, std::runtime_error on a
// state it cannot continue; a crashing trial never throws here.
TuneOutcome run_tuner(const TunerOptions& options, std::ostream& out);

// Trains one trial's PBT hyperparameter schedule (initial params, then each logged explore at
// its time) from scratch as OUTPUT/<experiment>/replay_<trial>/; returns the rlx train exit
// status of the last segment. std::runtime_error when the trial dir is not part of a tuning run.
int run_replay(const std::filesystem::path& trial_dir, const std::string& rlx_program, std::ostream& out);

}  // namespace rlx
