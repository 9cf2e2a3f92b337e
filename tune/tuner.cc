// The tuning controller: a single-threaded loop over segment processes.
#include "tune/tuner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/experiment.h"
#include "core/file_lines.h"
#include "core/json_fields.h"
#include "core/results.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "tune/exploit.h"
#include "tune/scheduler.h"
#include "tune/segment.h"
#include "tune/status_table.h"
#include "tune/tune_spec.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kMaxRetryWait{30000};  // the longest wait before a crashed trial's next try

// The last complete row of result.jsonl (for the live table), read from the file's tail only.
std::optional<nlohmann::json> last_row(const fs::path& trial_dir) {
  constexpr std::streamoff kTailBytes = 64 * 1024;  // rows are a few KiB at most
  std::ifstream in(trial_dir / "result.jsonl", std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - kTailBytes);
  std::string tail(static_cast<size_t>(size - start), '\0');
  in.seekg(start);
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  const size_t end = tail.rfind('\n');  // rows end with '\n'; a row still being written does not
  if (end == std::string::npos) return std::nullopt;
  const size_t previous = end == 0 ? std::string::npos : tail.rfind('\n', end - 1);
  const size_t begin = previous == std::string::npos ? 0 : previous + 1;
  nlohmann::json row = nlohmann::json::parse(tail.substr(begin, end - begin), nullptr, false);
  if (row.is_discarded()) return std::nullopt;
  return row;
}

std::string log_tail(const fs::path& log) {
  std::string last;  // the last line that is not empty, at most 600 bytes of its end
  for_each_line_backwards(log, [&](const std::string& line, uintmax_t) {
    last = line.substr(line.size() > 600 ? line.size() - 600 : 0);
    return last.empty();
  });
  return last;
}

class Tuner {
 public:
  Tuner(const TunerOptions& options, std::ostream& out) : options_(options), out_(out) {}

  TuneOutcome run() {
    if (options_.resume) {
      load_state(*options_.resume);
    } else {
      start_fresh();
    }
    log_file_ = std::make_unique<LogFile>(dir_ / "logs" / kTuneLogName);
    file_logger().info("rlx tune, pid {}: {} trials of '{}' in {}{}", ::getpid(), trials_.size(), experiment_.name,
                       dir_.string(), options_.resume ? " (resumed)" : "");
    write_state();
    loop();
    finished_ = !stopping_;
    if (!write_state()) throw *state_error_;  // the previous state stays: --resume continues from it
    if (options_.table) table_.print(std::cerr, trials_, spec_, stopping_ ? "stopped" : "finished");
    TuneOutcome outcome = report();
    if (stopping_) {
      outcome.stop_signal = stop_signal();
      out_ << "rlx tune: stopped by " << stop_signal_name(outcome.stop_signal) << "; continue with: rlx tune --resume "
           << dir_.string() << "\n";
    }
    return outcome;
  }

 private:
  // A fresh run: everything is checked (experiment, env, plugins, every trial's config) before
  // the experiment's directory is made, so a mistake costs no trial.
  void start_fresh() {
    experiment_ = load_experiment(options_.experiment_file, options_.experiment_name, options_.overrides);
    spec_ = parse_tune_spec(experiment_);
    experiment_.plugins =
        plugins_at(run_plugins(plugin_paths(experiment_.plugins), options_.env_plugins, /*fresh=*/true), experiment_.plugins);
    if (options_.check_experiment) options_.check_experiment(experiment_);
    const std::vector<nlohmann::json> params = initial_trial_params(spec_);
    for (size_t i = 0; i < params.size(); ++i) {
      Trial trial;
      std::ostringstream name;
      name << "trial_" << std::setw(5) << std::setfill('0') << i;
      trial.name = name.str();
      trial.initial_params = trial.params = params[i];
      validate_trial_config(trial);
      trials_.push_back(std::move(trial));
    }
    dir_ = fs::absolute(options_.output_root / experiment_.name).lexically_normal();
    if (fs::exists(dir_ / kExperimentStateName)) {
      throw std::runtime_error("'" + dir_.string() + "' holds a tuning run already; continue it with --resume " +
                               dir_.string() + ", or choose another --output");
    }
    fs::create_directories(dir_);
    write_file_atomic(dir_ / kTunedExperimentName, experiment_to_yaml(experiment_));
    scheduler_ = make_scheduler(spec_);
    out_ << "rlx tune: " << trials_.size() << " trials of '" << experiment_.name << "' in " << dir_.string() << "\n";
  }

  void load_state(const fs::path& dir) {
    dir_ = fs::absolute(dir).lexically_normal();
    std::optional<ExperimentState> state = read_experiment_state(dir_);
    if (!state) throw ConfigError("'" + dir_.string() + "' has no readable " + kExperimentStateName + " (not a tuning run)");
    experiment_ = load_experiment(dir_ / kTunedExperimentName, state->experiment, {});
    spec_ = parse_tune_spec(experiment_);
    const std::vector<std::string> plugins = run_plugins(plugin_paths(experiment_.plugins), options_.env_plugins, /*fresh=*/false);
    const bool new_plugins = plugins != plugin_paths(experiment_.plugins);
    experiment_.plugins = plugins_at(plugins, experiment_.plugins);
    if (options_.check_experiment) options_.check_experiment(experiment_);
    // Segments that start from scratch read experiment.yaml: it lists the plugins given now.
    if (new_plugins) {
      write_file_atomic(dir_ / kTunedExperimentName, experiment_to_yaml(experiment_));
      std::string listed;
      for (const auto& plugin : experiment_.plugins) listed += " " + plugin.path;
      out_ << "rlx tune: the run's env plugins are now:" << listed << "\n";
    }
    scheduler_ = make_scheduler(spec_);
    try {
      scheduler_->load_state(state->scheduler_state);
    } catch (const JsonFieldError& error) {
      throw experiment_state_error(dir_, "scheduler_state", error.what());
    }
    trials_ = std::move(state->trials);
    int recovered = 0;
    for (Trial& trial : trials_) {
      if (trial.status == TrialStatus::kRunning) {
        recover_running(trial);  // its process died with the old tuner
        ++recovered;
      }
    }
    for (Trial& trial : trials_) {
      if (trial.pending) finish_exploit(trial);
    }
    out_ << "rlx tune: resuming " << trials_.size() << " trials of '" << experiment_.name << "' in " << dir_.string()
         << " (" << recovered << " were running)\n";
  }

  // The trial's experiment (the base with its params) passes validate_experiment, so a drawn
  // value that cannot run with the rest of the config stops the run before any trial starts.
  void validate_trial_config(const Trial& trial) const {
    Experiment experiment = experiment_;
    for (const auto& [key, value] : trial.params.items()) {
      set_tunable_key(experiment, key, value);
      std::string origin = "tune";
      for (const char* section : {"tune.param_space.", "tune.scheduler.hyperparam_mutations."}) {
        if (const auto it = experiment_.origins.find(section + key); it != experiment_.origins.end()) {
          origin = it->second + " " + section + key;
          break;
        }
      }
      experiment.origins[key] = origin + ", drawn for " + trial.name;
    }
    validate_experiment(experiment);
  }

  fs::path trial_dir(const Trial& trial) const { return dir_ / trial.name; }
  fs::path log_path(const Trial& trial) const { return dir_ / "logs" / (trial.name + ".log"); }
  size_t index_of(const Trial& trial) const { return static_cast<size_t>(&trial - trials_.data()); }

  // A trial whose segment process was lost: finished segments are taken as they ended (their
  // result.json is newer than what the state knows), others restart from the latest checkpoint.
  void recover_running(Trial& trial) {
    const auto result = read_json_file(trial_dir(trial) / "result.json");
    const auto latest = latest_checkpoint(trial_dir(trial));
    const std::string stopped_by = result ? result->value("stopped_by", "") : "";
    const bool resumable = stopped_by == kStoppedBySignalName || stopped_by == "error";
    if (result && latest && !resumable && result->value("training_iteration", int64_t{0}) > trial.iteration &&
        result->at("last_checkpoint").is_string() && fs::path(result->at("last_checkpoint").get<std::string>()) == *latest &&
        result->contains("stopped_by")) {
      const bool paused = result->value("paused", false);
      segment_ended(trial, paused ? kTrainPaused : kTrainBudgetSpent, *result);
      return;
    }
    trial.status = latest ? TrialStatus::kPaused : TrialStatus::kPending;
    trial.awaiting_decision = false;
  }

  // Writes experiment_state.json and trials.csv (atomically). A write that fails (a full disk) keeps
  // the previous files, is said once per outage, and is retried at the next change: false then.
  bool write_state() {
    nlohmann::json trials = nlohmann::json::array();
    for (const Trial& trial : trials_) trials.push_back(trial_to_json(trial));
    const nlohmann::json state = {{"format_version", 1},
                                  {"experiment", experiment_.name},
                                  {"experiment_file", kTunedExperimentName},
                                  {"metric", spec_.metric},
                                  {"mode", spec_.mode},
                                  {"time_attr", spec_.time_attr()},
                                  {"finished", finished_},
                                  {"scheduler_state", scheduler_->state()},
                                  {"trials", trials}};
    dirty_ = true;
    try {
      write_file_atomic(dir_ / kExperimentStateName, state.dump(2) + "\n");
      write_file_atomic(dir_ / kTrialsCsvName, trials_csv(trials_, spec_.metric));
    } catch (const std::system_error& error) {
      if (!state_error_) {  // stderr and the log: a SIGKILL may follow, stdout is buffered
        logger().warn("{}; the previous state stays, and the tuner retries at the next change", error.what());
      }
      state_error_ = error;
      return false;
    }
    if (state_error_) {
      logger().info("the state is written again");
      state_error_.reset();
    }
    return true;
  }

  void loop() {
    const size_t max_running = static_cast<size_t>(
        spec_.max_concurrent_trials > 0 ? spec_.max_concurrent_trials : default_max_concurrent_trials(experiment_));
    auto last_table = Clock::now() - std::chrono::hours(1);
    for (;;) {
      if (stop_requested() && !stopping_) {
        stopping_ = true;  // no decisions, no new segments: each running one stops with a checkpoint
        for (const auto& [index, process] : running_) process->terminate();
      }
      bool changed = false;
      for (const Decision& decision : stopping_ ? std::vector<Decision>() : scheduler_->decide(trials_)) {
        apply(decision);
        changed = true;
      }
      if (changed) write_state();
      // Start runnable trials, those furthest behind first (keeps a synchronous population together).
      std::vector<size_t> runnable;
      const auto now = Clock::now();
      for (size_t i = 0; i < trials_.size(); ++i) {
        if (trials_[i].runnable() && now >= trials_[i].retry_at) runnable.push_back(i);
      }
      std::stable_sort(runnable.begin(), runnable.end(), [&](size_t a, size_t b) {
        return trials_[a].time(spec_.time_attr()) < trials_[b].time(spec_.time_attr());
      });
      for (size_t i : runnable) {
        if (stopping_ || running_.size() >= max_running) break;
        start_segment(trials_[i]);
        write_state();
      }
      for (auto it = running_.begin(); it != running_.end();) {
        const auto exit = it->second->poll();
        if (!exit) {
          ++it;
          continue;
        }
        Trial& trial = trials_[it->first];
        it = running_.erase(it);
        handle_exit(trial, *exit);
        write_state();
      }
      if (stopping_ && running_.empty()) break;
      const bool any_waiting = std::any_of(trials_.begin(), trials_.end(), [](const Trial& t) { return t.awaiting_decision; });
      const bool any_runnable = std::any_of(trials_.begin(), trials_.end(), [](const Trial& t) { return t.runnable(); });
      if (running_.empty() && !any_runnable) {
        if (!any_waiting) break;
        if (scheduler_->decide(trials_).empty()) throw std::logic_error("rlx tune: trials await a decision no scheduler gives");
      }
      if (options_.table && (dirty_ || Clock::now() - last_table > std::chrono::seconds(10))) {
        if (Clock::now() - last_table > std::chrono::seconds(2)) {
          refresh_live();
          table_.print(std::cerr, trials_, spec_, "");
          last_table = Clock::now();
          dirty_ = false;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void refresh_live() {
    for (const auto& [index, process] : running_) {
      Trial& trial = trials_[index];
      if (const auto row = last_row(trial_dir(trial))) table_.set_live(trial.name, *row, metric_of(*row, spec_.metric));
    }
  }

  void start_segment(Trial& trial) {
    Segment segment;
    segment.rlx_program = options_.rlx_program;
    if (const auto checkpoint = latest_checkpoint(trial_dir(trial))) {
      segment.resume = *checkpoint;
      // The checkpoint lists the plugins its trial ran with; the run's may have changed since.
      segment.env_plugins = plugins_to_pass(plugin_paths(experiment_.plugins), checkpoint_plugins(*checkpoint));
    } else {
      fs::remove_all(trial_dir(trial));  // a first attempt that crashed before any checkpoint
      segment.experiment_file = dir_ / kTunedExperimentName;  // lists the run's plugins
      segment.experiment_name = experiment_.name;
      segment.output_root = dir_.parent_path();
      segment.trial_name = trial.name;
    }
    segment.params = trial.params;
    trial.pause_at = scheduler_->next_pause(trial);
    if (trial.pause_at) segment.pause_at = std::make_pair(spec_.time_attr(), *trial.pause_at);
    segment.log_level = log_level_name(log_level());
    const std::vector<std::string> argv = segment_argv(segment);
    fs::create_directories(log_path(trial).parent_path());
    try {
      append_line_durable(log_path(trial), "# rlx tune: segment " + std::to_string(trial.segments + 1) + ": " + command_line(argv));
    } catch (const std::system_error& error) {  // the segment still runs (and fails on its own if the disk stays full)
      file_logger().warn("{}: {}", trial.name, error.what());
    }
    running_[index_of(trial)] = launcher_.launch({argv, options_.env, log_path(trial), ""});
    file_logger().info("{}: segment {} started, pid {}: {}", trial.name, trial.segments + 1,
                       running_[index_of(trial)]->pid(), command_line(argv));
    trial.status = TrialStatus::kRunning;
    ++trial.segments;
  }

  void handle_exit(Trial& trial, const ChildExit& exit) {
    file_logger().info("{}: segment {} ended: {}", trial.name, trial.segments, exit.describe());
    table_.clear_live(trial.name);
    const auto result = read_json_file(trial_dir(trial) / "result.json");
    const bool ended = !exit.signaled && (exit.code == kTrainReached || exit.code == kTrainBudgetSpent || exit.code == kTrainPaused);
    if (ended && result) {
      segment_ended(trial, exit.code, *result);
      return;
    }
    // A segment stopped by a signal (ours, forwarded, or its own), or killed while this run
    // stops: resumable from its latest checkpoint, not a failure of the trial.
    if ((!exit.signaled && exit.code == kTrainStopped) || (stopping_ && exit.signaled)) {
      if (result && !exit.signaled) take_progress(trial, *result);
      trial.status = latest_checkpoint(trial_dir(trial)) ? TrialStatus::kPaused : TrialStatus::kPending;
      trial.awaiting_decision = false;
      return;
    }
    trial.error = exit.describe() + ": " + log_tail(log_path(trial));
    file_logger().warn("{} failed: {} (its output: {})", trial.name, trial.error, log_path(trial).string());
    if (!exit.signaled && exit.code == kTrainUsage) {  // a config the trial can never run
      trial.status = TrialStatus::kError;
      return;
    }
    ++trial.failures;
    if (trial.failures > spec_.max_failures) {
      trial.status = TrialStatus::kError;
      return;
    }
    trial.status = latest_checkpoint(trial_dir(trial)) ? TrialStatus::kPaused : TrialStatus::kPending;
    // Crashes in a row wait longer before each try (0.5 s, 1 s, 2 s, ... up to kMaxRetryWait): a
    // cause that lasts (a full disk, a lost host) does not spend max_failures in seconds.
    const int64_t doublings = std::min<int64_t>(trial.failures_in_a_row++, 6);
    trial.retry_at = Clock::now() + std::min(kMaxRetryWait, std::chrono::milliseconds(500) * (int64_t{1} << doublings));
  }

  // Takes what a segment's result.json says: counters, metric, checkpoint.
  void take_progress(Trial& trial, const nlohmann::json& result) {
    trial.iteration = result.value("training_iteration", trial.iteration);
    trial.timesteps = result.value("timesteps_total", trial.timesteps);
    trial.time_s = result.value("time_total_s", trial.time_s);
    trial.metric = metric_of(result, spec_.metric);
    const auto checkpoint = result.find("last_checkpoint");
    if (checkpoint != result.end() && checkpoint->is_string()) {
      trial.checkpoint = checkpoint->get<std::string>();
      trial.checkpoint_metric = trial.metric;
    }
    update_best(trial);
  }

  // Takes a finished segment's outcome: counters, metric, checkpoint; paused or terminated.
  void segment_ended(Trial& trial, int code, const nlohmann::json& result) {
    take_progress(trial, result);
    trial.failures_in_a_row = 0;
    if (code == kTrainPaused) {
      trial.status = TrialStatus::kPaused;
      trial.awaiting_decision = true;
    } else {
      trial.status = TrialStatus::kTerminated;
      trial.stopped_by = result.value("stopped_by", code == kTrainReached ? "episode_return_mean" : "stop");
    }
  }

  void update_best(Trial& trial) {
    const fs::path path = trial_dir(trial) / "result.jsonl";
    if (!fs::exists(path)) return;
    std::ifstream lines(path, std::ios::binary);  // a row at a time: a long trial's rows run to many MB
    std::string line;
    // The latest result counts too: after an exploit it scores the donor's weights, no row's.
    std::optional<double> best = trial.metric;
    while (std::getline(lines, line)) {
      const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
      if (row.is_discarded()) continue;
      const auto value = metric_of(row, spec_.metric);
      if (value && (!best || trial_score(value, spec_.mode) > trial_score(best, spec_.mode))) best = value;
    }
    trial.best_metric = best;
  }

  void apply(const Decision& decision) {
    Trial& trial = trials_[decision.trial];
    trial.awaiting_decision = false;
    ++trial.decisions;
    if (decision.action != Decision::Action::kContinue) {
      file_logger().info("{}: {}{}{}", trial.name, decision.action == Decision::Action::kStop ? "stop" : "exploit",
                         decision.donor ? " " + trials_[*decision.donor].name : "",
                         decision.reason.empty() ? "" : " (" + decision.reason + ")");
    }
    if (decision.action == Decision::Action::kStop) {
      trial.status = TrialStatus::kTerminated;
      trial.stopped_by = decision.reason;
      return;
    }
    if (decision.action != Decision::Action::kExploit) return;
    const Trial& donor = trials_[*decision.donor];
    std::vector<std::string> keys;
    for (const auto& [key, value] : trial.params.items()) keys.push_back(key);
    try {
      // The donor's hyperparameters as its checkpoint holds them, not as the tuner last set them.
      const nlohmann::json donor_params = checkpoint_params(*donor.checkpoint, keys);
      Rng rng = decision_rng(spec_.seed + 1, decision.trial, trial.decisions);
      const nlohmann::json explored = pbt_explore(donor_params, spec_.pbt, rng);
      trial.pending = PendingExploit{trial.name + "@" + std::to_string(trial.decisions), donor.name, *donor.checkpoint,
                                     trial.params, explored, donor.checkpoint_metric};
    } catch (const CheckpointError& e) {
      trial.error = std::string("exploit of ") + donor.name + " skipped: " + e.what();
      file_logger().warn("{}: {}", trial.name, trial.error);
      return;
    }
    // The decision first: a crash from here on redoes this same exploit. Not written, not made.
    if (!write_state()) {
      trial.pending.reset();
      trial.error = std::string("exploit of ") + donor.name + " skipped: the tuner's state could not be written";
      file_logger().warn("{}: {}", trial.name, trial.error);
      return;
    }
    finish_exploit(trial);
  }

  void finish_exploit(Trial& trial) {
    const PendingExploit pending = *trial.pending;
    const auto target = latest_checkpoint(trial_dir(trial));
    try {
      if (!target) throw CheckpointError(trial_dir(trial).string() + " has no checkpoint to replace");
      const ExploitedDonor copied = exploit_checkpoint(pending.donor_checkpoint, *target, pending.new_params, pending.donor);
      const std::string& attr = spec_.time_attr();
      trial.params = pending.new_params;
      file_logger().info("{}: exploited {} ({}); params now {}", trial.name, pending.donor, pending.donor_checkpoint,
                         trial.params.dump());
      // The checkpoint now holds the donor's weights: it scores what the donor's did.
      trial.checkpoint = target->string();
      trial.checkpoint_metric = pending.donor_metric;
      // The checkpoint is replaced whether or not its line reaches the PBT log (a full disk).
      try {
        append_pbt_log(dir_ / kPbtLogName, {{"id", pending.id},
                                            {"trial", trial.name},
                                            {"donor", pending.donor},
                                            {"donor_checkpoint", pending.donor_checkpoint},
                                            {"donor_checkpoint_sha256", copied.fingerprint},
                                            {"donor_training_iteration", copied.counters.at("training_iteration")},
                                            {"donor_timesteps_total", copied.counters.at("timesteps_total")},
                                            {"donor_metric", pending.donor_metric ? nlohmann::json(*pending.donor_metric) : nlohmann::json()},
                                            {"trial_checkpoint", target->string()},
                                            {"time_attr", attr},
                                            {"time", trial.time(attr)},
                                            {"training_iteration", trial.iteration},
                                            {"timesteps_total", trial.timesteps},
                                            {"old_params", pending.old_params},
                                            {"new_params", pending.new_params}});
      } catch (const std::system_error& error) {
        file_logger().warn("{}: the PBT log misses exploit {}: {}", trial.name, pending.id, error.what());
      }
    } catch (const std::runtime_error& e) {  // CheckpointError, or a full disk (std::system_error)
      trial.error = "exploit of " + pending.donor + " failed, trial continues unchanged: " + e.what();
      file_logger().warn("{}: {}", trial.name, trial.error);
    }
    trial.pending.reset();
    write_state();
  }

  TuneOutcome report() {
    TuneOutcome outcome;
    outcome.experiment_dir = dir_;
    for (const Trial& trial : trials_) {
      if (trial.status == TrialStatus::kError) ++outcome.errored_trials;
    }
    const auto best_index = best_trial_index(trials_, spec_.mode);
    const Trial* best = best_index ? &trials_[*best_index] : nullptr;
    out_ << "results: " << dir_.string() << " (" << kTrialsCsvName << ", " << kExperimentStateName << ")\n";
    if (outcome.errored_trials) out_ << outcome.errored_trials << " trial(s) failed; see " << (dir_ / "logs").string() << "\n";
    if (!best) {
      out_ << "no trial has a checkpoint with a value of " << spec_.metric << "\n";
      return outcome;
    }
    outcome.best_trial = best->name;
    outcome.best_metric = ranked_metric(*best);
    outcome.best_params = best->params;
    if (best->checkpoint) outcome.best_checkpoint = *best->checkpoint;
    out_ << "best trial: " << best->name << " (" << spec_.metric << " " << format_readable(*ranked_metric(*best))
         << " at its last checkpoint, the " << spec_.mode << " over trials; " << best->timesteps << " steps)\n"
         << "  params: " << best->params.dump() << "\n"
         << "  config: " << (trial_dir(*best) / "params.yaml").string() << "\n"
         << "  checkpoint: " << (best->checkpoint ? *best->checkpoint : std::string("-")) << "\n";
    return outcome;
  }

  const TunerOptions& options_;
  std::unique_ptr<LogFile> log_file_;  // logs/tune.log, once the run's directory is known
  std::ostream& out_;
  Experiment experiment_;
  TuneSpec spec_;
  fs::path dir_;
  std::vector<Trial> trials_;
  std::unique_ptr<Scheduler> scheduler_;
  ProcessLauncher& launcher_ = launcher_or_local(options_.launcher);
  std::map<size_t, std::unique_ptr<LaunchedProcess>> running_;
  StatusTable table_;
  bool finished_ = false;
  bool stopping_ = false;  // a stop signal came: the running segments are stopping, no new ones start
  bool dirty_ = true;
  std::optional<std::system_error> state_error_;  // the last failed write_state, until one succeeds
};

}  // namespace

TuneOutcome run_tuner(const TunerOptions& options, std::ostream& out) { return Tuner(options, out).run(); }

}  // namespace rlx
