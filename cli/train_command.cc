// `rlx train FILE.yaml`: train an experiment until its stop criterion; exit 0 when the reward
// criterion was reached, 3 when another criterion (the budget) ended the run first, 6 when
// SIGTERM or SIGINT stopped it (after the current iteration, with a checkpoint).
#include "cli/train_command.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/trainer.h"
#include "algorithms/trial_dir.h"
#include "cli/command.h"
#include "core/checkpoint_dir.h"
#include "core/config_schema.h"
#include "core/log.h"
#include "core/rank_placement.h"
#include "core/stop_signal.h"
#include "core/temp_dir_owner.h"
#include "core/version.h"
#include "transport/sockets.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// `--resume auto`: the newest checkpoint of OUTPUT/<experiment>/<--trial-name> that verifies
// (each damaged one skipped, and said so), read; nullopt when there is none yet. A trial directory
// that holds results but no usable checkpoint (a run stopped before its first one) is moved
// aside to TRIAL.abandoned-<time>, so that the fresh run's counters start clean.
std::optional<Checkpoint> auto_resume_checkpoint(const po::variables_map& values,
                                                 const std::vector<std::string>& overrides) {
  if (!values.count("file") || !values.count("trial-name")) {
    throw UsageError("--resume auto needs the experiment FILE.yaml and --trial-name NAME: it continues "
                     "OUTPUT/<experiment>/NAME from its newest checkpoint, or starts it");
  }
  const std::string name = values.count("experiment") ? values["experiment"].as<std::string>() : "";
  const Experiment experiment = load_experiment(values["file"].as<std::string>(), name, overrides);
  const std::filesystem::path trial_dir = std::filesystem::path(values["output"].as<std::string>()) / experiment.name /
                                          values["trial-name"].as<std::string>();
  std::vector<SkippedCheckpoint> skipped;
  std::optional<Checkpoint> newest = newest_valid_checkpoint(trial_dir, skipped);
  for (const SkippedCheckpoint& bad : skipped) {
    logger().warn("--resume auto: skipping {}: {}", bad.path.string(), bad.reason);
  }
  if (newest) {
    logger().info("--resume auto: continuing from {}", newest->path.string());
    return newest;
  }
  if (trial_holds_results(trial_dir)) {
    const std::filesystem::path aside = trial_dir.string() + ".abandoned-" + std::to_string(::time(nullptr));
    std::filesystem::rename(trial_dir, aside);
    logger().warn("--resume auto: {} has no usable checkpoint; moved it to {} and starting afresh", trial_dir.string(),
                  aside.string());
  } else {
    logger().info("--resume auto: {} has no checkpoint yet; starting it", trial_dir.string());
  }
  return std::nullopt;
}

// The experiment to run: from the file, or from the checkpoint when resuming; then overrides.
Experiment resolve_experiment(const po::variables_map& values, const std::optional<Checkpoint>& resume,
                              const std::vector<std::string>& overrides) {
  if (resume) {
    const Checkpoint& checkpoint = *resume;
    Experiment experiment =
        experiment_from_json(checkpoint.manifest.at("experiment"), (checkpoint.path / kCheckpointManifestName).string());
    apply_overrides(experiment, overrides);
    validate_experiment(experiment);
    return experiment;
  }
  if (!values.count("file")) throw UsageError("missing experiment FILE.yaml (or --resume CHECKPOINT)");
  const std::string name = values.count("experiment") ? values["experiment"].as<std::string>() : "";
  return load_experiment(values["file"].as<std::string>(), name, overrides);
}

// "timesteps_total=50000" as (counter, value); UsageError naming what is accepted otherwise.
std::pair<std::string, double> parse_pause_at(const std::string& text) {
  const size_t equals = text.find('=');
  const std::string counter = text.substr(0, equals);
  const auto& names = pause_counter_names();
  if (equals == std::string::npos || std::find(names.begin(), names.end(), counter) == names.end()) {
    throw UsageError("--pause-at " + text + ": expected COUNTER=VALUE with COUNTER one of training_iteration, "
                     "timesteps_total, time_total_s");
  }
  const auto value = parse_value(ConfigType::kFloat, text.substr(equals + 1));
  if (!value || !(std::get<double>(*value) > 0)) {
    throw UsageError("--pause-at " + text + ": expected a positive number after '='");
  }
  return {counter, std::get<double>(*value)};
}

// The flags that place this process in a data-parallel group (they win over the environment's).
RankFlags rank_flags(const po::variables_map& values) {
  RankFlags flags;
  if (values.count("rank")) flags.rank = values["rank"].as<int>();
  if (values.count("world-size")) flags.world_size = values["world-size"].as<int>();
  if (values.count("local-rank")) flags.local_rank = values["local-rank"].as<int>();
  if (values.count("master-addr")) flags.master_addr = values["master-addr"].as<std::string>();
  if (values.count("master-port")) flags.master_port = values["master-port"].as<int>();
  return flags;
}


// The --env-plugin files given.
std::vector<std::string> env_plugins_from(const po::variables_map& values) {
  if (!values.count("env-plugin")) return {};
  return values["env-plugin"].as<std::vector<std::string>>();
}

// Adds the --python-path directories to the experiment's python_path, each once.
void add_command_line_python_path(Experiment& experiment, const po::variables_map& values) {
  for (const std::string& dir : python_path_from(values)) {
    std::vector<std::string>& recorded = experiment.python_path;
    if (std::find(recorded.begin(), recorded.end(), dir) == recorded.end()) recorded.push_back(dir);
  }
}

// A copy of the experiment with the command line's env plugins (on a resume: the checkpoint's,
// pointed at the given files where they moved) and Python path added, as the run will have them,
// so that deciding who trains it (which may load its env: the encoder follows the observation
// space) finds the same env.
Experiment with_command_line_envs(Experiment experiment, const po::variables_map& values, bool resuming) {
  if (resuming) {
    relocate_plugins(experiment.plugins, env_plugins_from(values));  // its warnings are said once, later
  } else {
    for (const std::string& plugin : env_plugins_from(values)) {
      experiment.plugins.push_back({std::filesystem::absolute(plugin).lexically_normal().string(), ""});
    }
  }
  add_command_line_python_path(experiment, values);
  return experiment;
}

}  // namespace

int run_train(const std::vector<std::string>& args, const TrainBackend& backend) {
  po::options_description options("rlx train FILE.yaml: train an experiment until its stop criterion");
  options.add_options()("help,h", "show this help")("file", po::value<std::string>(), "experiment file")(
      "experiment", po::value<std::string>(), "which experiment of the file (needed when it holds several)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set lr=1e-3 (repeatable)")(
      "output", po::value<std::string>()->default_value("runs"), "results root: OUTPUT/<experiment>/<trial>/")(
      "seed", po::value<int64_t>(), "same as --set seed=S")("workers", po::value<int64_t>(),
                                                              "same as --set num_workers=N (0: sample in-process)")(
      "learners", po::value<int64_t>(), "same as --set num_learners=M (data-parallel learner processes)")(
      "device", po::value<std::string>(), "same as --set device=D (cpu, cuda, cuda:N; learner rank r on cuda:N+r)")(
      "resume", po::value<std::string>(),
      "continue from this checkpoint directory (a trial directory or its checkpoints/: the newest), with the same "
      "counters; `auto` (with --trial-name): from the "
      "trial's newest valid checkpoint, or start the trial when it has none (a requeued job)")(
      "trial-name", po::value<std::string>(), "name of the trial directory (default: ALGO_ENV_seedS_TIME)")(
      "bind", po::value<std::string>()->default_value(""),
      "where workers connect (default: a private ipc:// socket in a directory only this user can open); "
      "e.g. tcp://127.0.0.1:* for local `rlx worker`s of other users, or tcp://HOST:PORT with --auth-keys "
      "for other hosts")(
      "auth-keys", po::value<std::string>(), "CURVE key directory (rlx keys init): only authorized workers join")(
      "pause-at", po::value<std::string>(),
      "COUNTER=VALUE: end with a checkpoint (exit status 5) once training_iteration, timesteps_total or "
      "time_total_s reaches VALUE; stop criteria and schedules are unchanged (rlx tune's segments)")(
      "quiet,q", "no progress line (the lines for the user that go with it: only in logs/driver.log)")(
      "endpoint-file", po::value<std::string>(),
      "with a tcp:// --bind: write the address workers reach here (default TRIAL_DIR/endpoint)")(
      "rank", po::value<int>(), "this process's learner rank (default: RANK, else SLURM_PROCID inside srun)")(
      "world-size", po::value<int>(), "learner ranks in all (default: WORLD_SIZE, else SLURM_STEP_NUM_TASKS)")(
      "local-rank", po::value<int>(), "this rank's GPU on its node (default: LOCAL_RANK, else SLURM_LOCALID)")(
      "master-addr", po::value<std::string>(),
      "rank 0's host for the rendezvous (default: MASTER_ADDR, else the srun step's first node)")(
      "master-port", po::value<int>(),
      "the rendezvous port (default: MASTER_PORT, else 20000 + SLURM_JOB_ID % 10000 under srun, else 29500)");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("file", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx train FILE.yaml [--set key=value ...] [--output DIR] [--seed S] [--workers N]\n"
                 "                 [--learners M] [--device cpu|cuda]\n"
                 "                 [--resume CHECKPOINT] [--experiment NAME] [--env-plugin PATH ...]\n\n"
              << options
              << "\nexit status: 0 when stop.episode_return_mean was reached, 3 when another stop criterion\n"
                 "ended the run first, 5 when --pause-at paused it, 6 when SIGTERM or SIGINT stopped it,\n"
                 "1 on errors, 2 on bad input (a bad experiment, a refused checkpoint).\n\n"
                 "SIGTERM or SIGINT (Ctrl-C, a scheduler's preemption): the current iteration finishes, then a\n"
                 "final checkpoint and result.json (\"stopped_by\": \"signal\") are written; resume with\n"
                 "--resume. An iteration (sampling, one learner's update) still running after half the grace\n"
                 "period is given up, and the checkpoint holds the last complete one. A second signal stops at\n"
                 "once; so does the end of the grace period, RLX_STOP_GRACE_S seconds (default 60) after the first.\n";
    return kExitOk;
  }
  // Started by srun or torchrun as one of several learner ranks? Ranks >= 1 follow rank 0.
  const std::optional<RankPlacement> placement = [&]() -> std::optional<RankPlacement> {
    try {
      return rank_placement(process_environment(), rank_flags(values));
    } catch (const PlacementError& error) {
      throw UsageError(std::string("cannot place this learner rank: ") + error.what());
    }
  }();
  const bool placed = placement && placement->world_size > 1;
  if (placed && !backend.follow_placed_rank) return backend.hand_over(args);
  if (placed && placement->rank > 0) return backend.follow_placed_rank(*placement);
  std::vector<std::string> overrides;
  if (values.count("set")) overrides = values["set"].as<std::vector<std::string>>();
  if (values.count("seed")) overrides.push_back("seed=" + std::to_string(values["seed"].as<int64_t>()));
  if (values.count("workers")) overrides.push_back("num_workers=" + std::to_string(values["workers"].as<int64_t>()));
  if (values.count("learners")) overrides.push_back("num_learners=" + std::to_string(values["learners"].as<int64_t>()));
  if (values.count("device")) overrides.push_back("device=" + values["device"].as<std::string>());

  std::optional<Checkpoint> resume;  // read (and so verified) once, here
  const bool resume_auto = values.count("resume") && values["resume"].as<std::string>() == "auto";
  if (values.count("resume") && !resume_auto) {
    resume = read_checkpoint_dir(resolve_checkpoint(values["resume"].as<std::string>()));  // a trial dir: its newest
  }
  // Before anything is written: can this executable run it? (--resume auto: the file's experiment,
  // resolved again once its checkpoint is known.)
  Experiment experiment = resolve_experiment(values, resume, overrides);
  if (backend.runs && !backend.runs(with_command_line_envs(experiment, values, resume.has_value()))) return backend.hand_over(args);
  set_log_role("driver", "rlx train");
  if (resume && !resume_auto) say_checkpoint_taken(values["resume"].as<std::string>(), resume->path);  // past hand-over
  const StopSignals stop_signals(stop_grace_from_env(), "finishing the current iteration, then writing a checkpoint");
  // What runs that died unannounced (SIGKILL, a crash) left: their workers' keys, their sockets.
  const std::vector<std::filesystem::path> swept =
      sweep_dead_temp_dirs({std::filesystem::temp_directory_path(), "/tmp"}, kRunTempDirPrefixes);
  for (const std::filesystem::path& dir : swept) {
    logger().info("removed {}, which a run that died left behind", dir.string());
  }
  if (resume_auto) resume = auto_resume_checkpoint(values, overrides);
  TrainOptions train;
  train.make_algorithm = backend.make_algorithm;
  train.experiment = resume_auto ? resolve_experiment(values, resume, overrides) : std::move(experiment);
  if (placed) {
    const int64_t asked = train.experiment.config.common().num_learners;
    if (asked != 1 && asked != placement->world_size && !resume) {
      throw UsageError("num_learners is " + std::to_string(asked) + " but " + std::to_string(placement->world_size) +
                       " learner ranks were started (" + placement->origin + "); drop num_learners or make them agree");
    }
    apply_overrides(train.experiment, {"num_learners=" + std::to_string(placement->world_size)});
    validate_experiment(train.experiment);
    train.placement = placement;
    logger().info("learner rank 0 of {} on {} ({})", placement->world_size, local_host_name(), placement->origin);
  }
  const std::vector<std::string> env_plugins = env_plugins_from(values);
  if (resume) {
    // The checkpoint's plugins, pointed at the given files where they moved.
    for (const std::string& warning : relocate_plugins(train.experiment.plugins, env_plugins)) {
      logger().warn("{}", warning);
    }
  } else {
    for (const std::string& plugin : env_plugins) {
      train.experiment.plugins.push_back({std::filesystem::absolute(plugin).lexically_normal().string(), ""});
    }
  }
  add_command_line_python_path(train.experiment, values);  // recorded, for resumes, evaluations and workers
  train.output_root = values["output"].as<std::string>();
  if (resume) train.resume = resume->path;
  if (values.count("endpoint-file")) train.endpoint_file = values["endpoint-file"].as<std::string>();
  if (values.count("trial-name")) train.trial_name = values["trial-name"].as<std::string>();
  train.bind_endpoint = values["bind"].as<std::string>();
  if (values.count("auth-keys")) train.auth_keys = values["auth-keys"].as<std::string>();
  train.progress = !values.count("quiet");
  if (values.count("pause-at")) train.pause_at = parse_pause_at(values["pause-at"].as<std::string>());
  if (!train.experiment.tune.is_null() && train.progress) {
    logger().info("note: the experiment's tune: section is for `rlx tune`; rlx train ignores it");
  }

  const TrainOutcome outcome = run_training(train);
  // (no row when a signal stopped a fresh run before its first iteration ended)
  const nlohmann::json row = outcome.final_row.is_object() ? outcome.final_row : nlohmann::json::object();
  const bool signalled = outcome.stopped_by == kStoppedBySignal;
  const nlohmann::json return_mean = row.value("episode_return_mean", nlohmann::json());  // null before any episode ended
  std::cout << "stopped by " << (signalled ? stop_signal_name(outcome.stop_signal) : outcome.stopped_by) << " at iteration " << row.value("training_iteration", 0) << ": "
            << row.value("timesteps_total", 0) << " steps, " << format_readable(row.value("time_total_s", 0.0))
            << " s, episode_return_mean " << (return_mean.is_number() ? format_readable(return_mean.get<double>()) : return_mean.dump()) << "\n"
            << "results: " << outcome.trial_dir.string() << "\n"
            << "checkpoint: " << (outcome.last_checkpoint ? outcome.last_checkpoint->string() : "-") << "\n";
  if (signalled) return kExitStopped;
  if (outcome.paused) return kExitPaused;
  return outcome.reward_reached ? kExitOk : kExitBudgetSpent;
}

}  // namespace rlx::cli
