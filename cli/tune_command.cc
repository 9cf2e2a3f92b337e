// `rlx tune FILE.yaml`: run the trials of an experiment's tune: section (search space, FIFO,
// ASHA or PBT) as `rlx train` processes; `--resume DIR` continues an interrupted run and
// `--replay TRIAL_DIR` retrains one trial along its PBT lineage. The experiment (env id, plugins,
// spaces) is checked here once, before any trial starts.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "cli/command.h"
#include "core/config_error.h"
#include "core/log.h"
#include "core/rlx_program.h"
#include "core/stop_signal.h"
#include "envs/experiment_envs.h"
#include "tune/replay.h"
#include "tune/tuner.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// Puts dirs in front of this process's PYTHONPATH, which every child process inherits.
void prepend_to_pythonpath(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return;
  std::string value;
  for (const std::string& dir : dirs) value += (value.empty() ? "" : ":") + dir;
  const char* current = std::getenv("PYTHONPATH");
  if (current != nullptr && *current != '\0') value += std::string(":") + current;
  if (::setenv("PYTHONPATH", value.c_str(), 1) != 0) throw std::runtime_error("cannot set PYTHONPATH");
}

// The check before any trial starts: the experiment's plugins load (a bad one is an input error
// here, exit status 2, like the env id) and its env id resolves and suits the algorithm.
void check_tune_experiment(const Experiment& experiment) {
  try {
    load_experiment_envs(experiment);
  } catch (const EnvPluginError& e) {
    throw EnvPluginError("experiment '" + experiment.name + "' (" + experiment.source + "): " + e.what());
  } catch (const ConfigError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw ConfigError("experiment '" + experiment.name + "' (" + experiment.source + "): " + e.what());
  }
  check_experiment_env(experiment);
}

}  // namespace

int run_tune_command(const std::vector<std::string>& args) {
  po::options_description options("rlx tune FILE.yaml: tune an experiment's hyperparameters (tune: section)");
  options.add_options()("help,h", "show this help")("file", po::value<std::string>(), "experiment file")(
      "experiment", po::value<std::string>(), "which experiment of the file (needed when it holds several)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a base config key: --set num_workers=0 (repeatable)")(
      "output", po::value<std::string>()->default_value("runs"), "results root: OUTPUT/<experiment>/<trial>/")(
      "resume", po::value<std::string>(), "continue the tuning run in OUTPUT/<experiment> after a crash or kill")(
      "replay", po::value<std::string>(), "retrain the trial in TRIAL_DIR on its logged PBT hyperparameter schedule")(
      "quiet,q", "no live status table")(
      "launch-prefix", po::value<std::string>(),
      "start each trial segment through this command, e.g. \"srun --exact -N1 -n1 -c2\": one Slurm job step "
      "per trial inside the allocation (default: a local process)");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("file", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx tune FILE.yaml [--output DIR] [--set key=value ...] [--experiment NAME] [--env-plugin PATH ...]\n"
                 "       rlx tune --resume OUTPUT/EXPERIMENT [--env-plugin PATH ...]\n"
                 "       rlx tune --replay OUTPUT/EXPERIMENT/TRIAL [--env-plugin PATH ...]\n\n"
              << options << "\nThe tune: section is described in docs/tune.md. exit status: 0 when every trial finished,\n"
                            "1 when some trial failed beyond max_failures or on errors, 2 on bad input, 6 when SIGTERM\n"
                            "or SIGINT stopped it: the running trials get SIGTERM, each finishes its iteration with a\n"
                            "checkpoint, and --resume continues the run (a second signal stops at once).\n";
    return kExitOk;
  }
  const std::chrono::seconds grace = stop_grace_from_env();
  const StopSignals stop_signals(grace, "stopping the running trials (each finishes its iteration with a checkpoint), "
                                        "then saving the run's state");
  // The trials take the stop this process passes on as the same stop (a scheduler may signal
  // them too), and have a little less grace, so that they end before this process's deadline.
  const std::vector<std::pair<std::string, std::string>> segment_env = {
      {kStopSupervisorEnv, std::to_string(::getpid())},
      {kStopGraceEnv, std::to_string(std::max<int64_t>(1, grace.count() - 5))}};
  set_log_role("tune", "rlx tune");
  const std::string self = rlx_program_path();
  const int modes = static_cast<int>(values.count("file") + values.count("resume") + values.count("replay"));
  if (modes != 1) throw UsageError("give exactly one of FILE.yaml, --resume DIR, --replay TRIAL_DIR");
  std::vector<std::string> env_plugins;
  if (values.count("env-plugin")) env_plugins = values["env-plugin"].as<std::vector<std::string>>();
  // Trials are `rlx train` processes: --python-path reaches them (and their workers) through PYTHONPATH.
  prepend_to_pythonpath(python_path_from(values));
  if (values.count("replay")) {
    ReplayOptions replay;
    replay.trial_dir = values["replay"].as<std::string>();
    replay.rlx_program = self;
    replay.env_plugins = env_plugins;
    replay.check_experiment = check_tune_experiment;
    replay.env = segment_env;
    const int code = run_replay(replay, std::cout);
    return code == kExitPaused ? kExitError : code;
  }
  TunerOptions tune;
  std::unique_ptr<CommandPrefixLauncher> prefix_launcher;
  if (values.count("launch-prefix")) {
    try {
      prefix_launcher = std::make_unique<CommandPrefixLauncher>(split_command_prefix(values["launch-prefix"].as<std::string>()));
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--launch-prefix: ") + error.what());
    }
    tune.launcher = prefix_launcher.get();
    logger().info("trial segments start through: {}", values["launch-prefix"].as<std::string>());
  }
  tune.rlx_program = self;
  tune.env_plugins = env_plugins;
  tune.check_experiment = check_tune_experiment;
  tune.env = segment_env;
  tune.table = !values.count("quiet");
  tune.output_root = values["output"].as<std::string>();
  if (values.count("resume")) {
    if (values.count("set") || values.count("experiment")) throw UsageError("--resume takes the experiment from the run; no --set or --experiment");
    tune.resume = values["resume"].as<std::string>();
  } else {
    tune.experiment_file = values["file"].as<std::string>();
    if (values.count("experiment")) tune.experiment_name = values["experiment"].as<std::string>();
    if (values.count("set")) tune.overrides = values["set"].as<std::vector<std::string>>();
  }
  const TuneOutcome outcome = run_tuner(tune, std::cout);
  if (outcome.stop_signal) return kExitStopped;
  return outcome.errored_trials > 0 ? kExitError : kExitOk;
}

}  // namespace rlx::cli
