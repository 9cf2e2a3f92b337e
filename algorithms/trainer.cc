#include "algorithms/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "algorithms/algorithm.h"
#include "algorithms/local_sampler.h"
#include "algorithms/remote_sampler.h"
#include "core/checkpoint_dir.h"
#include "core/results.h"
#include "core/space_json.h"
#include "envs/plugin_loader.h"
#include "envs/registry.h"
#include "rollout/rollout_policy.h"
#include "transport/curve.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

std::string default_trial_name(const Experiment& e) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::ostringstream name;
  name << algorithm_name(e.algorithm) << "_" << e.env << "_seed" << e.config.get_int("seed") << "_"
       << std::put_time(&local, "%Y%m%d-%H%M%S");
  return name.str();
}

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

std::unique_ptr<Sampler> make_sampler(const TrainOptions& options, const Algorithm& algorithm,
                                      std::optional<std::filesystem::path>& temp_key_dir) {
  const Experiment& e = options.experiment;
  const int64_t workers = e.config.get_int("num_workers");
  if (workers == 0) return std::make_unique<LocalSampler>(algorithm.worker_setup());
  RemoteSamplerOptions o;
  o.setup = algorithm.worker_setup();
  o.num_local_workers = static_cast<int>(workers);
  o.worker_program = options.worker_program;
  o.env_plugins = e.plugins;
  o.bind_endpoint = options.bind_endpoint;
  o.max_policy_lag = static_cast<uint64_t>(e.config.get_int("max_policy_lag"));
  o.max_worker_restarts = static_cast<int>(e.config.get_int("max_worker_restarts"));
  if (options.auth_keys) {
    o.curve_server = load_server_keys(*options.auth_keys);
    o.authorized_client_keys = load_client_keys(*options.auth_keys);
    // The local workers get a key pair of their own for this run, authorized alongside.
    char pattern[] = "/tmp/rlx-local-worker-keys-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("cannot create a temporary key directory in /tmp");
    temp_key_dir = pattern;
    const CurveKeyPair local = generate_curve_keypair();
    save_curve_keypair(*temp_key_dir / "client", local);
    save_curve_public_key(*temp_key_dir / "server.pub", o.curve_server->public_key);
    o.authorized_client_keys.push_back(local.public_key);
    o.local_worker_key_dir = temp_key_dir->string();
  }
  auto sampler = std::make_unique<RemoteSampler>(o);
  if (options.progress) std::cerr << "rlx train: workers connect to " << sampler->endpoint() << "\n";
  return sampler;
}

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

TrainOutcome run_training(const TrainOptions& options) {
  const Experiment& experiment = options.experiment;
  // Small networks: LibTorch's intra-op threads only add overhead (and nondeterminism).
  set_inference_threads(1);
  check_experiment_env(experiment);
  DataParallelOptions data_parallel;
  data_parallel.program = options.worker_program;
  std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment, data_parallel);

  Progress progress;
  TrainOutcome outcome;
  if (options.pause_at) counter_value(progress, options.pause_at->first);  // rejects an unknown counter early
  std::optional<Checkpoint> resumed;
  std::deque<double> window_returns, window_lengths;
  if (options.resume) {
    resumed = read_checkpoint_dir(*options.resume);
    algorithm->restore(*resumed);
    const nlohmann::json& counters = resumed->manifest.at("counters");
    progress.iteration = counters.at("training_iteration").get<int64_t>();
    progress.timesteps = counters.at("timesteps_total").get<int64_t>();
    progress.episodes = counters.at("episodes_total").get<int64_t>();
    progress.time_s = counters.at("time_total_s").get<double>();
    // The episode window travels with the checkpoint, so the reward criterion and the metric
    // continue across resumes (a tuner's segments) instead of starting empty.
    if (const auto window = resumed->manifest.find("episode_window"); window != resumed->manifest.end()) {
      for (const auto& value : window->at("returns")) window_returns.push_back(value.get<double>());
      for (const auto& value : window->at("lengths")) window_lengths.push_back(value.get<double>());
      if (window_returns.size() != window_lengths.size() || window_returns.size() > kEpisodeWindow) {
        throw CheckpointError(options.resume->string() + ": episode_window holds mismatched or too many episodes");
      }
    }
    outcome.trial_dir = std::filesystem::absolute(*options.resume).parent_path().parent_path();
  } else {
    outcome.trial_dir = options.output_root / experiment.name /
                        (options.trial_name.empty() ? default_trial_name(experiment) : options.trial_name);
    if (std::filesystem::exists(outcome.trial_dir) && !std::filesystem::is_empty(outcome.trial_dir)) {
      throw std::runtime_error("trial directory '" + outcome.trial_dir.string() +
                               "' exists already; pick another --trial-name, or --resume one of its checkpoints");
    }
  }
  std::filesystem::create_directories(outcome.trial_dir);
  ResultsWriter results(outcome.trial_dir);
  results.write_params(experiment_to_yaml(experiment));
  if (resumed) results.truncate_after(progress.iteration);

  std::optional<std::filesystem::path> temp_key_dir;
  std::unique_ptr<Sampler> sampler = make_sampler(options, *algorithm, temp_key_dir);
  sampler->publish(algorithm->current_weights());

  const EnvSpec& spec = global_env_registry().spec(experiment.env);
  const int64_t checkpoint_freq = experiment.config.get_int("checkpoint_freq");
  const auto write_checkpoint = [&]() {
    nlohmann::json manifest = {
        {"algorithm", algorithm_name(experiment.algorithm)},
        {"env_spec", env_spec_to_json(spec)},
        {"experiment", experiment_to_json(experiment)},
        {"counters",
         {{"training_iteration", progress.iteration},
          {"timesteps_total", progress.timesteps},
          {"episodes_total", progress.episodes},
          {"time_total_s", progress.time_s}}},
        {"episode_window", {{"returns", window_returns}, {"lengths", window_lengths}}},
        {"algorithm_state", algorithm->checkpoint_state()}};
    const std::filesystem::path dir = checkpoint_path(outcome.trial_dir, progress.iteration);
    write_checkpoint_dir(dir, manifest, algorithm->checkpoint_files());
    outcome.last_checkpoint = dir;
  };

  ProgressLine line(options.progress);
  const auto start = Clock::now();
  const double time_offset = progress.time_s;
  int64_t last_checkpoint_iteration = -1;
  for (;;) {
    const auto iteration_start = Clock::now();
    const IterationResult r = algorithm->train_iteration(*sampler, progress.timesteps);
    const double iteration_s = std::chrono::duration<double>(Clock::now() - iteration_start).count();
    ++progress.iteration;
    progress.timesteps += r.env_steps;
    progress.time_s = time_offset + std::chrono::duration<double>(Clock::now() - start).count();
    for (const FinishedEpisode& episode : sampler->take_episodes()) {
      ++progress.episodes;
      window_returns.push_back(episode.episode_return);
      window_lengths.push_back(episode.length);
      if (window_returns.size() > kEpisodeWindow) {
        window_returns.pop_front();
        window_lengths.pop_front();
      }
    }
    double return_mean = NAN, len_mean = NAN;
    if (!window_returns.empty()) {
      return_mean = len_mean = 0;
      for (size_t i = 0; i < window_returns.size(); ++i) {
        return_mean += window_returns[i] / window_returns.size();
        len_mean += window_lengths[i] / window_lengths.size();
      }
    }
    const double steps_per_s = iteration_s > 0 ? r.env_steps / iteration_s : 0.0;
    const SamplerStats sampling = sampler->stats();
    nlohmann::json row = {{"training_iteration", progress.iteration},
                          {"timesteps_total", progress.timesteps},
                          {"time_total_s", progress.time_s},
                          {"time_this_iter_s", iteration_s},
                          {"episodes_total", progress.episodes},
                          {"episode_return_mean", std::isnan(return_mean) ? nlohmann::json() : nlohmann::json(return_mean)},
                          {"episode_len_mean", std::isnan(len_mean) ? nlohmann::json() : nlohmann::json(len_mean)},
                          {"env_steps_per_s", steps_per_s},
                          {"learner", r.learner},
                          {"sampler",
                           {{"fragments_dropped_stale", sampling.fragments_dropped_stale},
                            {"fragments_dropped_other", sampling.fragments_dropped_other},
                            {"messages_rejected", sampling.messages_rejected},
                            {"worker_restarts", sampling.worker_restarts},
                            {"workers_active", sampling.workers_active}}}};
    results.append(row);
    line.show(algorithm_name(experiment.algorithm), experiment.env, progress, return_mean, steps_per_s);
    outcome.stopped_by = stop_reason(experiment.stop, progress, return_mean, window_returns.size());
    if (outcome.stopped_by.empty() && options.pause_at &&
        counter_value(progress, options.pause_at->first) >= options.pause_at->second) {
      outcome.paused = true;
      outcome.stopped_by = "pause_at " + options.pause_at->first;
    }
    if (checkpoint_freq > 0 && progress.iteration % checkpoint_freq == 0) {
      write_checkpoint();
      last_checkpoint_iteration = progress.iteration;
    }
    if (!outcome.stopped_by.empty()) {
      outcome.final_row = row;
      break;
    }
  }
  line.finish();
  if (last_checkpoint_iteration != progress.iteration) write_checkpoint();
  outcome.reward_reached = outcome.stopped_by == "episode_return_mean";
  results.write_final(outcome.reward_reached, outcome.last_checkpoint,
                      {{"stopped_by", outcome.stopped_by}, {"paused", outcome.paused}});
  sampler.reset();
  if (temp_key_dir) std::filesystem::remove_all(*temp_key_dir);
  return outcome;
}

}  // namespace rlx
