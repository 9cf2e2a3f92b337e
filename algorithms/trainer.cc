#include "algorithms/trainer.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "algorithms/algorithm.h"
#include "algorithms/episode_window.h"
#include "algorithms/make_sampler.h"
#include "algorithms/progress_line.h"
#include "algorithms/training_checkpoint.h"
#include "algorithms/training_counters.h"
#include "algorithms/training_resume.h"
#include "algorithms/training_video.h"
#include "algorithms/trial_dir.h"
#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_schema.h"
#include "core/error_text.h"
#include "core/guarded_temp_dir.h"
#include "native/replay_segments.h"
#include "core/log.h"
#include "core/plugin_refs.h"
#include "core/results.h"
#include "core/stop_signal.h"
#include "core/version.h"
#include "transport/sockets.h"
#include "watch/tensorboard_logger.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

// One `rlx train` run: the state the loop carries, its checkpoints, and what a failure leaves.
class TrainingRun {
 public:
  explicit TrainingRun(const TrainOptions& options) : options_(options), experiment_(options.experiment) {}

  TrainOutcome run() {
    if (!options_.make_algorithm) throw std::logic_error("run_training: TrainOptions::make_algorithm is not set");
    spec_ = check_experiment_env(experiment_);
    check_filmable(experiment_);
    record_plugin_hashes(experiment_.plugins);
    if (options_.pause_at) counter_value(counters_, options_.pause_at->first);  // rejects an unknown counter early
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
        // Not the trial's last row: a PBT exploit may have replaced the weights since that row
        // (exploit_checkpoint keeps the trial's counters and brings the donor's episode window,
        // which scored the weights now held).
        held_weights_ = held_weights_json(*resumed_, counters_json(counters_, window_, sampler_stats()));
        // Said even with -q: a resubmitted job of a finished trial ends at once, and says why.
        logger().warn("{} already meets {}; nothing to train", resumed_->path.string(), reason);
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

  // The trial directory (a fresh one must hold no results yet; its logs/ may stay from an
  // attempt that failed before training) with its logs/ folder. A resumed run's checkpoint is
  // read (and so checked) first.
  void make_trial_dir() {
    if (options_.resume) {
      resumed_ = read_checkpoint_dir(*options_.resume);
      outcome_.trial_dir = trial_dir_of_checkpoint(*options_.resume);
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

  // The learner's state, counters and episode window of a resumed run; the results file (cut
  // back to the checkpoint's iteration on a resume) and TensorBoard.
  void open_trial() {
    if (resumed_) {
      ResumePoint point = restore_training(*resumed_, experiment_, *algorithm_, options_.resume->string());
      counters_ = point.counters;
      ++counters_.attempt;
      earlier_sampling_ = point.earlier_sampling;
      window_ = std::move(point.window);
      // What a killed run left half-written: checkpoint_*.tmp-* directories, temp result files.
      recover_interrupted_writes(outcome_.trial_dir / "checkpoints");
      recover_interrupted_writes(outcome_.trial_dir);
      outcome_.last_checkpoint = resumed_->path;
      last_checkpoint_iteration_ = counters_.iteration;
    }
    std::filesystem::create_directories(outcome_.trial_dir);
    results_.emplace(outcome_.trial_dir);
    results_->write_params(experiment_to_yaml(experiment_));
    if (resumed_) results_->truncate_after(counters_.iteration);
    if (experiment_.config.common().tensorboard) {
      tensorboard_.emplace(outcome_.trial_dir, resumed_ ? std::optional<int64_t>(counters_.timesteps) : std::nullopt);
      tensorboard_->log_text("hyperparameters", markdown_table(experiment_to_json(experiment_)), counters_.timesteps);
    }
  }

  void train() {
    sampler_ = make_sampler(options_, *algorithm_, outcome_.trial_dir, local_worker_keys_);
    if (resumed_) restore_sampler(*resumed_, experiment_, *sampler_);
    algorithm_->publish_weights(*sampler_);
    const int64_t checkpoint_freq = experiment_.config.common().checkpoint_freq;
    const int64_t record_video_every = experiment_.config.common().record_video_every;
    ProgressLine line(options_.progress);
    const auto start = Clock::now();
    const double time_offset = counters_.time_s;
    for (;;) {
      if (stop_requested()) {  // between iterations: the last one is complete and in the results
        outcome_.stopped_by = kStoppedBySignal;
        break;
      }
      const auto iteration_start = Clock::now();
      const IterationResult r = algorithm_->train_iteration(*sampler_, counters_.timesteps);
      const double iteration_s = std::chrono::duration<double>(Clock::now() - iteration_start).count();
      ++counters_.iteration;
      counters_.timesteps += r.env_steps;
      counters_.time_s = time_offset + std::chrono::duration<double>(Clock::now() - start).count();
      take_episodes();
      const double steps_per_s = iteration_s > 0 ? r.env_steps / iteration_s : 0.0;
      nlohmann::json row = counters_json(counters_, window_, sampler_stats());
      row["time_this_iter_s"] = iteration_s;
      row["env_steps_per_s"] = steps_per_s;
      if (!r.learner.is_null()) row["learner"] = r.learner;  // a multi-agent run's are per policy, in its columns
      merge_columns(row, r.columns);
      results_->append(row);
      if (tensorboard_) tensorboard_->log_row(row);
      file_logger().info("iteration {}: timesteps_total {}, episode_return_mean {:.2f}, {:.0f} env steps/s",
                         counters_.iteration, counters_.timesteps, window_.return_mean(), steps_per_s);
      logger().debug("iteration {}: learner {}, sampler {}", counters_.iteration, r.learner.dump(),
                     row["sampler"].dump());
      line.show(algorithm_name(experiment_.algorithm), experiment_.env, counters_, window_.return_mean(), steps_per_s);
      outcome_.stopped_by = stop_or_pause_reason();
      if (checkpoint_freq > 0 && counters_.iteration % checkpoint_freq == 0) write_checkpoint(true);
      if (record_video_every > 0 && counters_.iteration % record_video_every == 0) film_iteration();
      if (!outcome_.stopped_by.empty()) break;
    }
    line.finish();
    // (a fresh run stopped before its first iteration has learned nothing worth a checkpoint)
    if (counters_.iteration > 0 && last_checkpoint_iteration_ != counters_.iteration) write_checkpoint(true);
  }

  void take_episodes() {
    if (!sampler_) return;
    for (const FinishedEpisode& episode : sampler_->take_episodes()) {
      ++counters_.episodes;
      window_.add(episode);
    }
  }

  // The sampler's counts over every attempt of the trial (this one's added to the checkpoint's).
  SamplerStats sampler_stats() const { return sampler_totals(this_attempt_sampling(), earlier_sampling_); }
  SamplerStats this_attempt_sampling() const { return sampler_ ? sampler_->stats() : SamplerStats{}; }

  // The reason the run ends now ("" to go on): a stop criterion, or the pause point.
  std::string stop_or_pause_reason() {
    std::string reason = stop_reason(experiment_.stop, counters_, window_);
    if (reason.empty() && options_.pause_at &&
        counter_value(counters_, options_.pause_at->first) >= options_.pause_at->second) {
      outcome_.paused = true;
      reason = "pause_at " + options_.pause_at->first;
    }
    return reason;
  }

  // Writes checkpoint_<iteration>; never of non-finite weights (NonFiniteLearnerError naming
  // the last good checkpoint instead).
  void write_checkpoint(bool with_sampler_state) {
    nlohmann::json manifest =
        training_manifest(experiment_, spec_, *algorithm_, counters_, sampler_stats(), window_,
                          with_sampler_state && sampler_ ? sampler_->checkpoint_state() : nlohmann::json());
    const std::filesystem::path dir = checkpoint_path(outcome_.trial_dir, counters_.iteration);
    const std::filesystem::path replay_dir = outcome_.trial_dir / kReplayDirName;
    const nlohmann::json replay = algorithm_->write_replay_segments(replay_dir);
    if (!replay.is_null()) manifest["replay"] = replay;
    write_training_checkpoint(dir, manifest, algorithm_->checkpoint_files(), algorithm_->non_finite_weights(),
                              outcome_.last_checkpoint);
    if (!replay.is_null()) remove_unlisted_replay_segments(outcome_.trial_dir);
    outcome_.last_checkpoint = dir;
    last_checkpoint_iteration_ = counters_.iteration;
    file_logger().info("wrote {}", dir.string());
  }

  // The video of this iteration, filmed from its checkpoint (written now if there is none).
  void film_iteration() {
    if (last_checkpoint_iteration_ != counters_.iteration) write_checkpoint(true);
    record_video(outcome_.trial_dir, *outcome_.last_checkpoint, counters_.iteration);
  }

  // After an iteration that threw: a final checkpoint when the learner's state is sound and newer
  // than the last one. Returns a note on it for result.json ("" when none was due).
  std::string checkpoint_after_interruption(const std::string& what) {
    const std::optional<int64_t> steps = algorithm_->steps_of_failed_iteration();
    if (!steps) return "no final checkpoint: the " + what + " left the learner mid-update";
    // (a run that stopped before learning anything has nothing worth a checkpoint)
    if (*steps == 0 && (counters_.iteration == 0 || counters_.iteration == last_checkpoint_iteration_)) return "";
    counters_.timesteps += *steps;  // what the learner took in from the unfinished iteration
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
    interruption_ = counters_json(counters_, window_, sampler_stats());  // with the steps the checkpoint counted
    interruption_["interrupted"] = error_text(error);
    if (!note.empty()) interruption_["checkpoint_note"] = note;
  }

  // After a failure: a final checkpoint when the learner's state is sound and newer than the
  // last one, result.json with the error and the counters, and where to find them on stderr.
  void record_failure(const std::exception& error) {
    const std::string checkpoint_note = checkpoint_after_interruption("failure");
    nlohmann::json extra = counters_json(counters_, window_, sampler_stats());
    extra["stopped_by"] = "error";
    extra["error"] = error_text(error);
    if (!checkpoint_note.empty()) extra["checkpoint_note"] = checkpoint_note;
    try {
      results_->write_final(false, outcome_.last_checkpoint, extra);
    } catch (const std::exception& write_error) {
      logger().error("cannot write result.json: {}", write_error.what());
    }
    logger().error("the run failed in iteration {} (after {} complete, {} timesteps); results: {}; last checkpoint: {}{}; logs: {}",
                   counters_.iteration + 1, counters_.iteration, counters_.timesteps, outcome_.trial_dir.string(),
                   outcome_.last_checkpoint ? outcome_.last_checkpoint->string() : std::string("none"),
                   checkpoint_note.empty() ? "" : " (" + checkpoint_note + ")",
                   (outcome_.trial_dir / kLogsDirName).string());
    report_worker_failures();
  }

  // The end of a run's record on stderr: why workers failed in this attempt, a line per distinct
  // reason (their counts are in the results' sampler.worker_failures).
  void report_worker_failures() const {
    if (!sampler_) return;
    const std::vector<std::string> reasons = sampler_->worker_failure_summary();
    if (reasons.empty()) return;
    const uint64_t failed = this_attempt_sampling().workers_failed;
    logger().warn("{} worker{} failed in this run, for {} distinct reason{}:", failed, failed == 1 ? "" : "s",
                  reasons.size(), reasons.size() == 1 ? "" : "s");
    for (const std::string& reason : reasons) logger().warn("  {}", reason);
  }

  TrainOutcome finish() {
    outcome_.reward_reached = outcome_.stopped_by == "episode_return_mean";
    outcome_.final_row = results_->last_row();
    if (!outcome_.final_row.is_object()) outcome_.final_row = nlohmann::json::object();
    nlohmann::json extra = interruption_;
    for (const auto& [key, value] : held_weights_.items()) outcome_.final_row[key] = extra[key] = value;
    extra["stopped_by"] = outcome_.stopped_by;
    extra["paused"] = outcome_.paused;
    extra["sampler_this_attempt"] = sampler_json(this_attempt_sampling());
    if (outcome_.stopped_by == kStoppedBySignal) {
      outcome_.stop_signal = stop_signal();
      extra["signal"] = stop_signal_name(outcome_.stop_signal);
    }
    results_->write_final(outcome_.reward_reached, outcome_.last_checkpoint, extra);
    file_logger().info("stopped by {} at iteration {} ({} timesteps)",
                       outcome_.stopped_by == kStoppedBySignal ? stop_signal_name(outcome_.stop_signal) : outcome_.stopped_by,
                       counters_.iteration, counters_.timesteps);
    report_worker_failures();
    sampler_.reset();
    return outcome_;
  }

  const TrainOptions& options_;
  std::unique_ptr<LogFile> log_file_;  // first: open until every other member is gone
  Experiment experiment_;  // options_.experiment with its plugins' hashes recorded
  nlohmann::json spec_;  // the env's spec as checkpoints record it
  std::unique_ptr<Algorithm> algorithm_;
  std::optional<Checkpoint> resumed_;
  TrainingCounters counters_;
  SamplerStats earlier_sampling_;  // a resumed trial's counts from its earlier attempts
  EpisodeWindow window_;
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
