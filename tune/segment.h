// One trial segment as an `rlx train` process, shared by the tuner and the replay: its command
// line (from scratch or resumed from a checkpoint, with the trial's params, env plugins and
// pause point), rlx train's exit statuses, the plugins a run uses, and reading what it wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

// rlx train's exit statuses (cli/command.h).
constexpr int kTrainReached = 0;
constexpr int kTrainUsage = 2;
constexpr int kTrainBudgetSpent = 3;
constexpr int kTrainPaused = 5;
constexpr int kTrainStopped = 6;  // SIGTERM/SIGINT stopped it, with a checkpoint when it had learned anything
// result.json's stopped_by then (algorithms/trainer.h kStoppedBySignal).
constexpr const char* kStoppedBySignalName = "signal";

struct Segment {
  std::string rlx_program;
  // From scratch: `rlx train EXPERIMENT_FILE --experiment NAME --output ROOT --trial-name TRIAL`...
  std::filesystem::path experiment_file;
  std::string experiment_name;
  std::filesystem::path output_root;
  std::string trial_name;
  // ...or, when set, `rlx train --resume CHECKPOINT`.
  std::optional<std::filesystem::path> resume;
  nlohmann::json params = nlohmann::json::object();          // --set key=value, each
  std::vector<std::string> env_plugins;                      // --env-plugin PATH, each
  std::optional<std::pair<std::string, double>> pause_at;    // --pause-at COUNTER=VALUE
  std::string log_level;                                     // --log-level LEVEL, when not empty
};

// The segment's argv (argv[0] the rlx program), always --quiet.
std::vector<std::string> segment_argv(const Segment& segment);

// The argv as one line for logs.
std::string command_line(const std::vector<std::string>& argv);

// `plugins` with relative paths made absolute and each file kept once (the first path naming
// it; two paths of one file, through links or "..", are the same plugin).
std::vector<std::string> unique_plugin_files(const std::vector<std::string>& plugins);

// The plugins a run uses: on a fresh run the experiment's `recorded` plugins then the `given`
// --env-plugin ones; on --resume and --replay the `given` ones, when any, replace the recorded
// list (so a moved or rebuilt plugin can be named; the recorded paths stay when both name the
// same files), else the recorded list. Each file once.
std::vector<std::string> run_plugins(const std::vector<std::string>& recorded, const std::vector<std::string>& given,
                                     bool fresh);

// True when both lists name the same set of files (order and repeats aside).
bool same_plugin_files(const std::vector<std::string>& a, const std::vector<std::string>& b);

// The --env-plugin paths a segment needs to run with `plugins` when the experiment it starts
// from lists `recorded`: none when those are the same files, else all of `plugins` (rlx train
// then loads each file once).
std::vector<std::string> plugins_to_pass(const std::vector<std::string>& plugins, const std::vector<std::string>& recorded);

// The plugins a checkpoint's experiment lists (its checkpoint.json, not verified); empty when
// the checkpoint is unreadable.
std::vector<std::string> checkpoint_plugins(const std::filesystem::path& checkpoint);

// A JSON file's contents; nullopt when it is missing or not JSON.
std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path);

// The metric in a result row ("a/b" reaches nested values); nullopt when missing or null.
std::optional<double> metric_of(const nlohmann::json& row, const std::string& metric);

}  // namespace rlx
