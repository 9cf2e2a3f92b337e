// The replay of one trial's PBT lineage.
#include "tune/replay.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/config_schema.h"
#include "core/log.h"
#include "core/process_launcher.h"
#include "core/stop_signal.h"
#include "tune/exploit.h"
#include "tune/scheduler.h"
#include "tune/segment.h"
#include "tune/trial.h"
#include "tune/tune_spec.h"
#include "tune/tuner.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// Carries out one logged exploit on the replay's checkpoint `target`, as the live trial did:
// the donor checkpoint the entry names, if it is still the one copied then. Returns the line
// that says what happened.
std::string replay_exploit(const nlohmann::json& entry, const fs::path& target) {
  const std::string donor = entry.value("donor", "?");
  const fs::path checkpoint = entry.value("donor_checkpoint", "");
  const std::string what = "donor checkpoint " + checkpoint.string() + " of " + donor;
  const std::string fallback = "; the replay goes on with its own weights and the new params";
  const auto fingerprint = checkpoint_fingerprint(checkpoint);
  if (!fingerprint) return what + " no longer exists" + fallback;
  const std::string logged = entry.value("donor_checkpoint_sha256", "");
  if (!logged.empty() && logged != *fingerprint) {
    return what + " is not the one the exploit copied (it was written again since)" + fallback;
  }
  try {
    const ExploitedDonor copied = exploit_checkpoint(checkpoint, target, entry.at("new_params"), donor);
    return "loaded " + what + " (iteration " + copied.counters.at("training_iteration").dump() + ", " +
           copied.counters.at("timesteps_total").dump() + " steps) into " + target.string();
  } catch (const CheckpointError& e) {
    return what + " cannot be loaded (" + e.what() + ")" + fallback;
  }
}

}  // namespace

int run_replay(const ReplayOptions& options, std::ostream& out) {
  const fs::path trial_dir = fs::absolute(options.trial_dir).lexically_normal();
  const fs::path dir = trial_dir.parent_path();
  const std::string name = trial_dir.filename().string();
  const std::optional<ExperimentState> state = read_experiment_state(dir);
  if (!state) throw ConfigError("'" + trial_dir.string() + "' is not a trial of a tuning run (no " + kExperimentStateName + " beside it)");
  const std::string experiment_name = state->experiment;
  Experiment experiment = load_experiment(dir / kTunedExperimentName, experiment_name, {});
  const TuneSpec spec = parse_tune_spec(experiment);
  std::optional<Trial> trial;
  for (const Trial& entry : state->trials) {
    if (entry.name == name) trial = entry;
  }
  if (!trial) throw std::runtime_error("no trial '" + name + "' in " + (dir / kExperimentStateName).string());
  const std::vector<std::string> plugins = run_plugins(plugin_paths(experiment.plugins), options.env_plugins, /*fresh=*/false);
  const bool new_plugins = plugins != plugin_paths(experiment.plugins);
  experiment.plugins = plugins_at(plugins, experiment.plugins);
  if (options.check_experiment) options.check_experiment(experiment);
  std::vector<nlohmann::json> schedule;
  for (const auto& entry : read_pbt_log(dir / kPbtLogName)) {
    if (entry.at("trial") == name) schedule.push_back(entry);
  }
  const std::string replay_name = "replay_" + name;
  const fs::path replay_dir = dir / replay_name;
  const fs::path log = dir / "logs" / (replay_name + ".log");
  if (fs::exists(replay_dir)) throw std::runtime_error("'" + replay_dir.string() + "' exists already; remove it to replay again");
  // The first segment reads experiment.yaml: it lists the plugins given now.
  if (new_plugins) write_file_atomic(dir / kTunedExperimentName, experiment_to_yaml(experiment));
  fs::create_directories(log.parent_path());
  auto say = [&](const std::string& line) {
    out << line << "\n" << std::flush;
    append_line_durable(log, "# rlx tune --replay: " + line);
  };
  say(name + ": " + std::to_string(schedule.size()) + " exploit(s) at " + spec.time_attr() + "; initial " +
      trial->initial_params.dump());

  // The replay pauses where the trial did (the scheduler's boundaries, so its envs restart where
  // the trial's did) and never past the next exploit.
  const std::unique_ptr<Scheduler> scheduler = make_scheduler(spec);
  const std::string& attr = spec.time_attr();
  Trial progress;  // the replay's counters
  nlohmann::json params = trial->initial_params;
  size_t next_exploit = 0;
  int code = 0;
  for (int segment_number = 1;; ++segment_number) {
    Segment segment;
    segment.rlx_program = options.rlx_program;
    if (const auto checkpoint = latest_checkpoint(replay_dir)) {
      segment.resume = *checkpoint;
      segment.env_plugins = plugins_to_pass(plugin_paths(experiment.plugins), checkpoint_plugins(*checkpoint));
    } else {
      segment.experiment_file = dir / kTunedExperimentName;
      segment.experiment_name = experiment_name;
      segment.output_root = dir.parent_path();
      segment.trial_name = replay_name;
    }
    segment.params = params;
    std::optional<double> pause = scheduler->next_pause(progress);
    if (next_exploit < schedule.size()) {
      const double exploit_time = schedule[next_exploit].at("time").get<double>();
      pause = pause ? std::min(*pause, exploit_time) : exploit_time;
    }
    if (pause) segment.pause_at = std::make_pair(attr, *pause);
    segment.log_level = log_level_name(log_level());
    const std::vector<std::string> argv = segment_argv(segment);
    append_line_durable(log, "# rlx tune --replay: segment " + std::to_string(segment_number) + ": " + command_line(argv));
    const std::unique_ptr<LaunchedProcess> child = launcher_or_local(options.launcher).launch({argv, options.env, log, ""});
    std::optional<ChildExit> exit;
    while (!(exit = child->poll())) {
      if (stop_requested()) child->terminate();  // passes a stop signal on (once)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    code = exit->signaled ? 128 + exit->code : exit->code;
    if (code == kTrainStopped) {
      say("stopped by a signal in segment " + std::to_string(segment_number) + "; remove " + replay_dir.string() +
          " to replay again");
      return code;
    }
    const auto result = read_json_file(replay_dir / "result.json");
    if (exit->signaled || (code != kTrainPaused && code != kTrainReached && code != kTrainBudgetSpent) || !result) {
      throw std::runtime_error("replay segment " + std::to_string(segment_number) + " failed: " + exit->describe() +
                               "; see " + log.string());
    }
    if (code != kTrainPaused) break;  // a stop criterion ended it
    progress.iteration = result->value("training_iteration", progress.iteration);
    progress.timesteps = result->value("timesteps_total", progress.timesteps);
    progress.time_s = result->value("time_total_s", progress.time_s);
    const auto target = latest_checkpoint(replay_dir);
    if (!target) throw std::runtime_error("replay segment " + std::to_string(segment_number) + " paused without a checkpoint");
    for (; next_exploit < schedule.size() && schedule[next_exploit].at("time").get<double>() <= progress.time(attr); ++next_exploit) {
      const nlohmann::json& entry = schedule[next_exploit];
      params = entry.at("new_params");
      say("at " + format_double(progress.time(attr)) + " (" + entry.value("id", "?") + "): " + replay_exploit(entry, *target) +
          "; params " + params.dump());
    }
  }
  const auto result = read_json_file(replay_dir / "result.json");
  out << "replay: " << replay_dir.string() << "\n";
  if (result) {
    const auto value = metric_of(*result, spec.metric);
    out << "  " << spec.metric << " " << (value ? format_double(*value) : "-") << " at "
        << result->value("timesteps_total", int64_t{0}) << " steps; the trial: "
        << (ranked_metric(*trial) ? format_double(*ranked_metric(*trial)) : "-") << " at " << trial->timesteps
        << " steps\n";
  }
  return code;
}

}  // namespace rlx
