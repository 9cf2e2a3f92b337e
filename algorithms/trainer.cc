#include "algorithms/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <stdexcept>

#include "algorithms/algorithm.h"
#include "algorithms/local_sampler.h"
#include "algorithms/remote_sampler.h"
#include "algorithms/training_checkpoint.h"
#include "algorithms/trial_dir.h"
#include "core/atomic_file.h"
#include "core/byte_size_text.h"
#include "core/child_process.h"
#include "core/config_error.h"
#include "core/rlx_program.h"
#include "core/checkpoint_dir.h"
#include "core/error_text.h"
#include "core/guarded_temp_dir.h"
#include "core/log.h"
#include "core/non_finite_error.h"
#include "core/results.h"
#include "core/space_json.h"
#include "core/stop_signal.h"
#include "core/version.h"
#include "envs/plugin_loader.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "transport/curve.h"
#include "transport/sockets.h"
#include "watch/renderable_envs.h"
#include "watch/tensorboard_logger.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

// Counters that a checkpoint carries and a resumed run continues from.
struct Progress {
  int64_t iteration = 0;
  int64_t timesteps = 0;
  int64_t episodes = 0;
  double time_s = 0.0;
};

// The live line: one line rewritten in place on a terminal, a line every few seconds otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), tty_(::isatty(2)) {}
  void show(const std::string& algorithm, const std::string& env, const Progress& p, double return_mean,
            double steps_per_s) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (!tty_ && now - last_ < std::chrono::seconds(5)) return;
    last_ = now;
    std::ostringstream line;
    line << "[" << algorithm << " " << env << "] iter " << p.iteration << "  steps " << p.timesteps << "  return "
         << (std::isnan(return_mean) ? std::string("-") : format(return_mean)) << "  " << std::fixed
         << std::setprecision(0) << steps_per_s << " steps/s  " << std::setprecision(1) << p.time_s << " s";
    std::cerr << (tty_ ? "\r\033[K" : "") << line.str() << (tty_ ? "" : "\n") << std::flush;
    shown_ = true;
  }
  void finish() {
    if (enabled_ && tty_ && shown_) std::cerr << "\n";
  }

 private:
  static std::string format(double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v;
    return s.str();
  }
  bool enabled_, tty_;
  bool shown_ = false;
  Clock::time_point last_{};
};

// The reason a run should stop now, or "" to go on.
std::string stop_reason(const StopCriteria& stop, const Progress& p, double return_mean, size_t window) {
  if (stop.episode_return_mean && window >= kEpisodeWindow && return_mean >= *stop.episode_return_mean) {
    return "episode_return_mean";
  }
  if (stop.timesteps_total && p.timesteps >= *stop.timesteps_total) return "timesteps_total";
  if (stop.time_total_s && p.time_s >= *stop.time_total_s) return "time_total_s";
  if (stop.training_iteration && p.iteration >= *stop.training_iteration) return "training_iteration";
  return "";
}

double counter_value(const Progress& p, const std::string& name) {
  if (name == "training_iteration") return static_cast<double>(p.iteration);
  if (name == "timesteps_total") return static_cast<double>(p.timesteps);
  if (name == "time_total_s") return p.time_s;
  throw std::invalid_argument("unknown pause counter '" + name + "'");
}

}  // namespace

const std::vector<std::string>& pause_counter_names() {
  static const std::vector<std::string> names = {"training_iteration", "timesteps_total", "time_total_s"};
  return names;
}

namespace {

// Where a line for the user goes: stderr (and the log) when the run shows its progress, else
// the log file only (`rlx train -q`).
spdlog::logger& progress_logger(bool progress) { return progress ? logger() : file_logger(); }

// The local workers' key pair with --auth-keys goes into `keys`, a temporary directory removed
// however the run ends (on the signal paths too).
std::unique_ptr<Sampler> make_sampler(const TrainOptions& options, const Algorithm& algorithm,
                                      const std::filesystem::path& trial_dir, std::unique_ptr<GuardedTempDir>& keys) {
  const Experiment& e = options.experiment;
  const CommonConfig& config = e.config.common();
  const int64_t workers = config.num_workers;
  // num_workers: 0 samples in this process, unless workers are to connect (--bind): then every
  // worker is remote (a fleet started elsewhere, e.g. by srun).
  if (workers == 0 && options.bind_endpoint.empty()) return std::make_unique<LocalSampler>(algorithm.worker_setup());
  RemoteSamplerOptions o;
  o.setup = algorithm.worker_setup();
  o.num_local_workers = static_cast<int>(workers);
  o.worker_program = options.worker_program;
  o.env_plugins = plugin_paths(e.plugins);
  o.python_path = e.python_path;
  o.bind_endpoint = options.bind_endpoint;
  o.max_policy_lag = static_cast<uint64_t>(config.max_policy_lag);
  o.credits_per_worker = algorithm.worker_credits(workers);
  o.max_worker_restarts = static_cast<int>(config.max_worker_restarts);
  o.max_workers = static_cast<size_t>(config.max_workers);
  o.worker_learner_timeout_s = config.worker_learner_timeout_s;
  o.log_dir = trial_dir / kLogsDirName;
  o.launcher = options.launcher;
  if (options.auth_keys) {
    o.curve_server = load_server_keys(*options.auth_keys);
    o.authorized_client_keys = load_client_keys(*options.auth_keys);
    // The local workers get a key pair of their own for this run, authorized alongside.
    keys = std::make_unique<GuardedTempDir>("rlx-local-worker-keys-");
    const CurveKeyPair local = generate_curve_keypair();
    save_curve_keypair(keys->path() / "client", local);
    save_curve_public_key(keys->path() / "server.pub", o.curve_server->public_key);
    keys->guard_contents();
    o.authorized_client_keys.push_back(local.public_key);
    o.local_worker_key_dir = keys->path().string();
  }
  auto sampler = std::make_unique<RemoteSampler>(o);
  const uint64_t per_worker = sampler->queued_bytes_bound() / o.max_workers;
  progress_logger(options.progress)
      .info("workers connect to {} ({} local, at most {} at once); their logs: {}", sampler->endpoint(), workers,
            o.max_workers, o.log_dir.string());
  progress_logger(options.progress)
      .info("queued fragments: a bound of {} a worker (credits x the largest fragment), {} with the local workers, "
            "{} with max_workers {}: memory is taken only as fragments arrive",
            byte_size_text(per_worker), byte_size_text(per_worker * static_cast<uint64_t>(workers)),
            byte_size_text(sampler->queued_bytes_bound()), o.max_workers);
  if (sampler->endpoint().rfind("tcp://", 0) == 0) {
    const std::filesystem::path file =
        options.endpoint_file.empty() ? trial_dir / kEndpointFileName : options.endpoint_file;
    const std::string reachable = reachable_endpoint(sampler->endpoint(), local_host_name());
    write_file_atomic(file, reachable + "\n");
    progress_logger(options.progress).info("wrote {} to {} (rlx worker --connect-file)", reachable, file.string());
  }
  if (workers == 0) progress_logger(options.progress).info("no local workers: every worker connects from elsewhere");
  return sampler;
}

// One `rlx train` run: the state the loop carries, its checkpoints, and what a failure leaves.
class TrainingRun {
 public:
  explicit TrainingRun(const TrainOptions& options) : options_(options), experiment_(options.experiment) {}

  TrainOutcome run() {
    if (!options_.make_algorithm) throw std::logic_error("run_training: TrainOptions::make_algorithm is not set");
    spec_ = check_experiment_env(experiment_);
    if (experiment_.config.common().record_video_every > 0) {
      bool filmable = false;
      try {
        filmable = can_film_env(experiment_.env);
      } catch (const EnvContractError& error) {
        throw ConfigError(std::string("record_video_every: ") + error.what() + "; or set record_video_every: 0");
      }
      if (!filmable) {
        throw ConfigError("record_video_every: env '" + experiment_.env +
                          "' cannot be filmed: rlx has no renderer for it and its render() draws nothing (give it one: "
                          "docs/envs.md, docs/python.md), or set record_video_every: 0");
      }
    }
    record_plugin_hashes(experiment_.plugins);
    if (options_.pause_at) counter_value(progress_, options_.pause_at->first);  // rejects an unknown counter early
    make_trial_dir();
    log_file_ = std::make_unique<LogFile>(outcome_.trial_dir / kLogsDirName / kDriverLogName);
    try {
      return run_in_trial();
    } catch (const std::exception& error) {
      file_logger().error("the run ends with an error: {}", error_text(error));
      throw;
    }
  }

 private:
  TrainOutcome run_in_trial() {
    file_logger().info("rlx {} train, pid {} on {}: {} ({} on {}) in {}{}", kRlxVersion, ::getpid(), local_host_name(),
                       experiment_.name,
                       algorithm_name(experiment_.algorithm), experiment_.env, outcome_.trial_dir.string(),
                       resumed_ ? ", resuming " + resumed_->path.string() : std::string());
    DataParallelOptions data_parallel;
    data_parallel.program = options_.worker_program;
    data_parallel.log_dir = outcome_.trial_dir / kLogsDirName;
    data_parallel.launcher = options_.launcher;
    data_parallel.placement = options_.placement;
    algorithm_ = options_.make_algorithm(experiment_, data_parallel);
    open_trial();
    if (resumed_) {
      // A run resumed at or past its stop criterion (or pause point) trains nothing more.
      if (const std::string reason = stop_or_pause_reason(); !reason.empty()) {
        outcome_.stopped_by = reason;
        outcome_.last_checkpoint = resumed_->path;
        describe_held_weights();
        progress_logger(options_.progress).info("the checkpoint already meets {}; nothing to train", reason);
        return finish();
      }
    }
    try {
      train();
    } catch (const std::exception& error) {
      if (!stop_requested()) {
        record_failure(error);
        throw;
      }
      record_interrupted_stop(error);  // e.g. workers killed by the same signal, or StopRequested
    }
    return finish();
  }

 private:
  // ConfigError naming the first setting that shapes the learner (algorithm, env, network) and
  // differs between the checkpoint and this run: its weights cannot be loaded into another shape.
  void check_resume_compatible(const Checkpoint& checkpoint) const {
    const Experiment saved = experiment_from_json(checkpoint.manifest.at("experiment"),
                                                  (checkpoint.path / kCheckpointManifestName).string());
    const auto refuse = [&](const std::string& key, const std::string& there, const std::string& here) {
      throw ConfigError("--resume " + checkpoint.path.string() + ": " + key + " is " + here + " here but " + there +
                        " in the checkpoint; the learner's shape must match to resume (start a new run to change it)");
    };
    if (saved.algorithm != experiment_.algorithm) {
      refuse("algorithm", algorithm_name(saved.algorithm), algorithm_name(experiment_.algorithm));
    }
    if (saved.env != experiment_.env) refuse("env", saved.env, experiment_.env);
    for (const char* key : {"hidden_sizes", "activation", "vf_share_layers", "dueling"}) {
      if (!find_key(key)->applies_to(experiment_.algorithm)) continue;
      if (saved.config.get(key) != experiment_.config.get(key)) {
        refuse(key, format_value(saved.config.get(key)), format_value(experiment_.config.get(key)));
      }
    }
  }

  // The trial directory (a fresh one must hold no results yet; its logs/ may stay from an
  // attempt that failed before training) with its logs/ folder. A resumed run's checkpoint is
  // read (and so checked) first.
  void make_trial_dir() {
    if (options_.resume) {
      resumed_ = read_checkpoint_dir(*options_.resume);
      outcome_.trial_dir = std::filesystem::absolute(*options_.resume).parent_path().parent_path();
    } else if (options_.trial_name.empty()) {
      outcome_.trial_dir = claim_trial_dir(options_.output_root / experiment_.name,
                                           default_trial_name(experiment_, std::time(nullptr)));
    } else {
      outcome_.trial_dir = options_.output_root / experiment_.name / options_.trial_name;
      if (trial_holds_results(outcome_.trial_dir)) {
        throw std::runtime_error("trial directory '" + outcome_.trial_dir.string() +
                                 "' exists already; pick another --trial-name, or --resume one of its checkpoints");
      }
    }
    std::filesystem::create_directories(outcome_.trial_dir / kLogsDirName);
  }


  void open_trial() {
    if (resumed_) {
      check_resume_compatible(*resumed_);
      algorithm_->restore(*resumed_);
      if (const auto bad = non_finite_weight(*algorithm_->current_weights())) {
        throw CheckpointRefused(resumed_->path.string() + " holds non-finite weights (" + *bad +
                                "); resume from an earlier checkpoint");
      }
      const nlohmann::json& counters = resumed_->manifest.at("counters");
      progress_.iteration = counters.at("training_iteration").get<int64_t>();
      progress_.timesteps = counters.at("timesteps_total").get<int64_t>();
      progress_.episodes = counters.at("episodes_total").get<int64_t>();
      progress_.time_s = counters.at("time_total_s").get<double>();
      // The episode window travels with the checkpoint, so the reward criterion and the metric
      // continue across resumes (a tuner's segments) instead of starting empty.
      if (const auto window = resumed_->manifest.find("episode_window"); window != resumed_->manifest.end()) {
        for (const auto& value : window->at("returns")) window_returns_.push_back(value.get<double>());
        for (const auto& value : window->at("lengths")) window_lengths_.push_back(value.get<double>());
        if (window_returns_.size() != window_lengths_.size() || window_returns_.size() > kEpisodeWindow) {
          throw CheckpointRefused(options_.resume->string() + ": episode_window holds mismatched or too many episodes");
        }
      }
      // What a killed run left half-written: checkpoint_*.tmp-* directories, temp result files.
      recover_interrupted_writes(outcome_.trial_dir / "checkpoints");
      recover_interrupted_writes(outcome_.trial_dir);
      outcome_.last_checkpoint = resumed_->path;
      last_checkpoint_iteration_ = progress_.iteration;
    }
    std::filesystem::create_directories(outcome_.trial_dir);
    results_.emplace(outcome_.trial_dir);
    results_->write_params(experiment_to_yaml(experiment_));
    if (resumed_) results_->truncate_after(progress_.iteration);
    if (experiment_.config.common().tensorboard) {
      tensorboard_.emplace(outcome_.trial_dir, resumed_ ? std::optional<int64_t>(progress_.timesteps) : std::nullopt);
      tensorboard_->log_text("hyperparameters", markdown_table(experiment_to_json(experiment_)), progress_.timesteps);
    }
  }

  void train() {
    sampler_ = make_sampler(options_, *algorithm_, outcome_.trial_dir, local_worker_keys_);
    restore_sampler();
    sampler_->publish(algorithm_->current_weights());
    const int64_t checkpoint_freq = experiment_.config.common().checkpoint_freq;
    const int64_t record_video_every = experiment_.config.common().record_video_every;
    ProgressLine line(options_.progress);
    const auto start = Clock::now();
    const double time_offset = progress_.time_s;
    for (;;) {
      if (stop_requested()) {  // between iterations: the last one is complete and in the results
        outcome_.stopped_by = kStoppedBySignal;
        break;
      }
      const auto iteration_start = Clock::now();
      const IterationResult r = algorithm_->train_iteration(*sampler_, progress_.timesteps);
      const double iteration_s = std::chrono::duration<double>(Clock::now() - iteration_start).count();
      ++progress_.iteration;
      progress_.timesteps += r.env_steps;
      progress_.time_s = time_offset + std::chrono::duration<double>(Clock::now() - start).count();
      take_episodes();
      const double steps_per_s = iteration_s > 0 ? r.env_steps / iteration_s : 0.0;
      nlohmann::json row = counters_json();
      row["time_this_iter_s"] = iteration_s;
      row["env_steps_per_s"] = steps_per_s;
      row["learner"] = r.learner;
      results_->append(row);
      if (tensorboard_) tensorboard_->log_row(row);
      file_logger().info("iteration {}: timesteps_total {}, episode_return_mean {:.2f}, {:.0f} env steps/s",
                         progress_.iteration, progress_.timesteps, return_mean(), steps_per_s);
      logger().debug("iteration {}: learner {}, sampler {}", progress_.iteration, r.learner.dump(),
                     row["sampler"].dump());
      line.show(algorithm_name(experiment_.algorithm), experiment_.env, progress_, return_mean(), steps_per_s);
      outcome_.stopped_by = stop_or_pause_reason();
      if (checkpoint_freq > 0 && progress_.iteration % checkpoint_freq == 0) write_checkpoint(true);
      if (record_video_every > 0 && progress_.iteration % record_video_every == 0) record_video();
      if (!outcome_.stopped_by.empty()) break;
    }
    line.finish();
    // (a fresh run stopped before its first iteration has learned nothing worth a checkpoint)
    if (progress_.iteration > 0 && last_checkpoint_iteration_ != progress_.iteration) write_checkpoint(true);
  }

  // A synchronous run continues its envs, observations and action sampling exactly where the
  // checkpoint left them, when the checkpoint holds them for the same setup.
  void restore_sampler() {
    if (!resumed_) return;
    const auto state = resumed_->manifest.find("sampler_state");
    if (state == resumed_->manifest.end() || state->is_null() || experiment_.config.common().num_workers != 0) return;
    try {
      sampler_->restore(*state);
    } catch (const std::invalid_argument& error) {
      logger().info("note: the envs start afresh ({})", error.what());
    }
  }

  void take_episodes() {
    if (!sampler_) return;
    for (const FinishedEpisode& episode : sampler_->take_episodes()) {
      ++progress_.episodes;
      window_returns_.push_back(episode.episode_return);
      window_lengths_.push_back(episode.length);
      if (window_returns_.size() > kEpisodeWindow) {
        window_returns_.pop_front();
        window_lengths_.pop_front();
      }
    }
  }

  double return_mean() const { return window_mean(window_returns_); }

  static double window_mean(const std::deque<double>& values) {
    if (values.empty()) return NAN;
    double mean = 0.0;
    for (double v : values) mean += v / static_cast<double>(values.size());
    return mean;
  }

  // The counters and episode statistics every row and result.json carry.
  nlohmann::json counters_json() const {
    const auto or_null = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
    const SamplerStats sampling = sampler_ ? sampler_->stats() : SamplerStats{};
    return {{"training_iteration", progress_.iteration},
            {"timesteps_total", progress_.timesteps},
            {"time_total_s", progress_.time_s},
            {"episodes_total", progress_.episodes},
            {"episode_return_mean", or_null(return_mean())},
            {"episode_len_mean", or_null(window_mean(window_lengths_))},
            {"sampler",
             {{"fragments_dropped_stale", sampling.fragments_dropped_stale},
              {"fragments_dropped_other", sampling.fragments_dropped_other},
              {"fragments_refused", sampling.fragments_refused},
              {"messages_rejected", sampling.messages_rejected},
              {"worker_restarts", sampling.worker_restarts},
              {"workers_active", sampling.workers_active},
              {"episodes_dropped_nonfinite", sampling.episodes_dropped_nonfinite},
              {"fragments_received", sampling.fragments_received},
              {"fragments_consumed", sampling.fragments_consumed},
              {"fragments_queued", sampling.fragments_queued},
              {"workers_joined", sampling.workers_joined},
              {"workers_lost", sampling.workers_lost},
              {"workers_rejoined", sampling.workers_rejoined},
              {"handshakes_refused", sampling.handshakes_refused},
              {"worker_idle_share", sampling.worker_ready_s > 0 ? nlohmann::json(sampling.worker_idle_s / sampling.worker_ready_s)
                                                                : nlohmann::json()}}}};
  }

  // The reason the run ends now ("" to go on): a stop criterion, or the pause point.
  std::string stop_or_pause_reason() {
    std::string reason = stop_reason(experiment_.stop, progress_, return_mean(), window_returns_.size());
    if (reason.empty() && options_.pause_at &&
        counter_value(progress_, options_.pause_at->first) >= options_.pause_at->second) {
      outcome_.paused = true;
      reason = "pause_at " + options_.pause_at->first;
    }
    return reason;
  }

  // Writes checkpoint_<iteration>; never of non-finite weights (NonFiniteLearnerError naming
  // the last good checkpoint instead).
  void write_checkpoint(bool with_sampler_state) {
    nlohmann::json manifest = {
        {"algorithm", algorithm_name(experiment_.algorithm)},
        {"env_spec", env_spec_to_json(spec_)},
        {"experiment", experiment_to_json(experiment_)},
        {"counters",
         {{"training_iteration", progress_.iteration},
          {"timesteps_total", progress_.timesteps},
          {"episodes_total", progress_.episodes},
          {"time_total_s", progress_.time_s}}},
        {"episode_window", {{"returns", window_returns_}, {"lengths", window_lengths_}}},
        {"algorithm_state", algorithm_->checkpoint_state()},
        {"sampler_state", with_sampler_state && sampler_ ? sampler_->checkpoint_state() : nlohmann::json()}};
    const std::filesystem::path dir = checkpoint_path(outcome_.trial_dir, progress_.iteration);
    write_training_checkpoint(dir, manifest, algorithm_->checkpoint_files(), *algorithm_->current_weights(),
                              outcome_.last_checkpoint);
    outcome_.last_checkpoint = dir;
    last_checkpoint_iteration_ = progress_.iteration;
    file_logger().info("wrote {}", dir.string());
  }

  // Films one deterministic episode of this iteration's policy into videos/iteration_NNNNNN.mp4:
  // `rlx evaluate --record` on a checkpoint of this iteration (written now if there is none), in
  // a child process, so training never loads the video libraries. A failed video is a warning
  // naming its log, not the end of the run.
  void record_video() {
    if (last_checkpoint_iteration_ != progress_.iteration) write_checkpoint(true);
    const std::filesystem::path videos = outcome_.trial_dir / "videos";
    std::filesystem::create_directories(videos);
    char name[32];
    std::snprintf(name, sizeof(name), "iteration_%06lld.mp4", static_cast<long long>(progress_.iteration));
    const std::filesystem::path log = outcome_.trial_dir / kLogsDirName / "videos.log";
    ChildProcess evaluate({rlx_program_path(), "evaluate", outcome_.last_checkpoint->string(), "--episodes", "1",
                           "--deterministic", "--record", (videos / name).string()},
                          log, "video of iteration " + std::to_string(progress_.iteration));
    std::optional<ChildExit> exit;
    while (!(exit = evaluate.poll())) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (exit->clean()) {
      file_logger().info("wrote {}", (videos / name).string());
    } else {
      logger().warn("the video of iteration {} failed ({}); see {}", progress_.iteration, exit->describe(), log.string());
    }
  }

  // After an iteration that threw: a final checkpoint when the learner's state is sound and newer
  // than the last one. Returns a note on it for result.json ("" when none was due).
  std::string checkpoint_after_interruption(const std::string& what) {
    const std::optional<int64_t> steps = algorithm_->steps_of_failed_iteration();
    if (!steps) return "no final checkpoint: the " + what + " left the learner mid-update";
    // (a run that stopped before learning anything has nothing worth a checkpoint)
    if (*steps == 0 && (progress_.iteration == 0 || progress_.iteration == last_checkpoint_iteration_)) return "";
    progress_.timesteps += *steps;  // what the learner took in from the unfinished iteration
    take_episodes();
    try {
      write_checkpoint(false);  // a mid-fragment sampler is not a state to continue from exactly
      return "written after the " + what;
    } catch (const std::exception& checkpoint_error) {
      return std::string("no final checkpoint: ") + checkpoint_error.what();
    }
  }

  // A stop signal arrived and the iteration under way threw (its workers died of the same
  // signal, or it gave up with StopRequested): the run ends as stopped by the signal, with the
  // learner's last sound state checkpointed; result.json tells what was cut short.
  void record_interrupted_stop(const std::exception& error) {
    outcome_.stopped_by = kStoppedBySignal;
    const std::string note = checkpoint_after_interruption("stop");
    interruption_ = counters_json();  // with the steps the checkpoint counted
    interruption_["interrupted"] = error_text(error);
    if (!note.empty()) interruption_["checkpoint_note"] = note;
  }

  // After a failure: a final checkpoint when the learner's state is sound and newer than the
  // last one, result.json with the error and the counters, and where to find them on stderr.
  void record_failure(const std::exception& error) {
    const std::string checkpoint_note = checkpoint_after_interruption("failure");
    nlohmann::json extra = counters_json();
    extra["stopped_by"] = "error";
    extra["error"] = error_text(error);
    if (!checkpoint_note.empty()) extra["checkpoint_note"] = checkpoint_note;
    try {
      results_->write_final(false, outcome_.last_checkpoint, extra);
    } catch (const std::exception& write_error) {
      logger().error("cannot write result.json: {}", write_error.what());
    }
    logger().error("the run failed at iteration {} ({} timesteps); results: {}; last checkpoint: {}{}; logs: {}",
                   progress_.iteration, progress_.timesteps, outcome_.trial_dir.string(),
                   outcome_.last_checkpoint ? outcome_.last_checkpoint->string() : std::string("none"),
                   checkpoint_note.empty() ? "" : " (" + checkpoint_note + ")",
                   (outcome_.trial_dir / kLogsDirName).string());
  }

  // A run that trains nothing reports what its checkpoint holds, not the trial's last row: a PBT
  // exploit may have replaced the weights since that row (exploit_checkpoint keeps the trial's
  // counters and brings the donor's episode window, which scored the weights now held).
  void describe_held_weights() {
    held_weights_ = counters_json();
    held_weights_.erase("sampler");  // nothing was sampled: the last row's figures stand
    if (const auto from = resumed_->manifest.find("exploited_from"); from != resumed_->manifest.end()) {
      held_weights_["exploited_from"] = {{"trial", from->value("trial", "")}, {"checkpoint", from->value("checkpoint", "")}};
    }
  }

  TrainOutcome finish() {
    outcome_.reward_reached = outcome_.stopped_by == "episode_return_mean";
    outcome_.final_row = results_->last_row();
    if (!outcome_.final_row.is_object()) outcome_.final_row = nlohmann::json::object();
    nlohmann::json extra = interruption_;
    for (const auto& [key, value] : held_weights_.items()) outcome_.final_row[key] = extra[key] = value;
    extra["stopped_by"] = outcome_.stopped_by;
    extra["paused"] = outcome_.paused;
    if (outcome_.stopped_by == kStoppedBySignal) {
      outcome_.stop_signal = stop_signal();
      extra["signal"] = stop_signal_name(outcome_.stop_signal);
    }
    results_->write_final(outcome_.reward_reached, outcome_.last_checkpoint, extra);
    file_logger().info("stopped by {} at iteration {} ({} timesteps)",
                       outcome_.stopped_by == kStoppedBySignal ? stop_signal_name(outcome_.stop_signal) : outcome_.stopped_by,
                       progress_.iteration, progress_.timesteps);
    sampler_.reset();
    return outcome_;
  }

  const TrainOptions& options_;
  std::unique_ptr<LogFile> log_file_;  // first: open until every other member is gone
  Experiment experiment_;  // options_.experiment with its plugins' hashes recorded
  EnvSpec spec_;
  std::unique_ptr<Algorithm> algorithm_;
  std::optional<Checkpoint> resumed_;
  Progress progress_;
  std::deque<double> window_returns_, window_lengths_;
  std::optional<ResultsWriter> results_;
  std::optional<TensorBoardLogger> tensorboard_;  // unset with tensorboard: false
  std::unique_ptr<GuardedTempDir> local_worker_keys_;  // declared before the sampler: removed after its workers stopped
  std::unique_ptr<Sampler> sampler_;
  TrainOutcome outcome_;
  nlohmann::json interruption_ = nlohmann::json::object();  // result.json's account of a cut-short stop
  nlohmann::json held_weights_ = nlohmann::json::object();  // result.json's account of a checkpoint not trained on
  int64_t last_checkpoint_iteration_ = -1;
};

}  // namespace

TrainOutcome run_training(const TrainOptions& options) { return TrainingRun(options).run(); }

}  // namespace rlx
