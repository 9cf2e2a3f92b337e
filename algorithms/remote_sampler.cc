#include "algorithms/remote_sampler.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "core/config_schema.h"
#include "core/fd_limit.h"
#include "core/log.h"
#include "core/rlx_program.h"
#include "core/stop_signal.h"
#include "envs/registry.h"
#include "models/network_layout.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxNoticesPrinted = 20;  // dropped peers named in the log; the rest are counted

// Descriptors beyond one per local worker's connection: the receiver's own sockets, ZeroMQ's,
// the log files, remote workers.
constexpr uint64_t kFdSlack = 256;

// Unix socket paths must fit sockaddr_un (108 bytes): short names in /tmp when TMPDIR is long.
constexpr size_t kMaxIpcPathBytes = 100;

// A directory of mode 0700 for the run's ipc socket: other users cannot connect to it.
std::unique_ptr<GuardedTempDir> make_socket_dir() {
  auto dir = std::make_unique<GuardedTempDir>("rlx-run-");
  if ((*dir / "learner").string().size() > kMaxIpcPathBytes) dir = std::make_unique<GuardedTempDir>("rlx-run-", "/tmp");
  return dir;
}

}  // namespace

RemoteSampler::RemoteSampler(RemoteSamplerOptions options) : options_(std::move(options)), context_(1) {
  if (options_.worker_program.empty()) options_.worker_program = rlx_program_path();
  // The receiver holds a descriptor per connected worker: 1,000 workers pass the usual soft limit.
  require_fd_limit(static_cast<uint64_t>(std::max(options_.num_local_workers, 0)) + kFdSlack,
                   "a sampler with " + std::to_string(options_.num_local_workers) + " local workers");
  ReceiverOptions receiver_options;
  if (options_.bind_endpoint.empty()) {
    socket_dir_ = make_socket_dir();
    receiver_options.endpoint = "ipc://" + (socket_dir_->path() / "learner").string();
  } else {
    receiver_options.endpoint = options_.bind_endpoint;
  }
  const bool multi_agent = !options_.policies.empty();
  if (multi_agent) {
    receiver_options.env.env_id = options_.setup.env_id;
    receiver_options.policies = options_.policies;
    receiver_options.num_agents = options_.num_agents;
  } else {
    receiver_options.env = ExpectedEnv::of(options_.setup.env_spec());
  }
  receiver_options.fragment_length = options_.setup.fragment_length;
  // A worker may run more envs than the learner's setup asks (rlx worker --envs K); a multi-agent
  // worker announces its lanes.
  receiver_options.max_envs_per_worker =
      std::max(options_.setup.num_envs * std::max(options_.num_agents, 1), kDefaultMaxEnvsPerWorker);
  receiver_options.policy_outputs = options_.setup.model.kind == ModelKind::kActorCritic;
  if (options_.setup.model.recurrent()) receiver_options.state_size = actor_critic_layout(options_.setup.model).state_size;
  receiver_options.credits_per_worker = options_.credits_per_worker;
  receiver_options.max_workers = options_.max_workers;
  receiver_options.max_policy_lag = options_.max_policy_lag;
  receiver_options.curve_server = options_.curve_server;
  receiver_options.authorized_client_keys = options_.authorized_client_keys;
  const WorkerSetup setup = options_.setup;
  receiver_options.make_welcome = [setup](int index) {
    WorkerSetup for_worker = setup;
    for_worker.worker_index = index;
    return for_worker.to_json();
  };
  receiver_ = std::make_unique<SampleReceiver>(context_, receiver_options);
  if (socket_dir_) socket_dir_->guard_contents();  // the socket, now that it exists
  const std::string endpoint = receiver_->endpoint();
  const RemoteSamplerOptions& o = options_;
  WorkerPoolOptions pool_options;
  pool_options.num_workers = o.num_local_workers;
  pool_options.max_restarts = o.max_worker_restarts;
  pool_options.stop_grace = std::chrono::milliseconds(3000);
  pool_options.log_dir = o.log_dir;
  if (!o.log_dir.empty()) pool_options.env = {{kLogFormatEnv, kLogFormatDetailed}};  // their stderr is their log
  pool_options.launcher = o.launcher;
  const std::vector<std::string> log_level = log_level_args();
  pool_ = std::make_unique<WorkerPool>(
      pool_options,
      [&o, endpoint, log_level](int i) {
        std::vector<std::string> argv = {o.worker_program, "worker", "--connect", endpoint, "--worker-id",
                                         std::to_string(i + 1), "--learner-timeout",
                                         format_double(o.worker_learner_timeout_s)};
        argv.insert(argv.end(), log_level.begin(), log_level.end());
        for (const std::string& plugin : o.env_plugins) {
          argv.push_back("--env-plugin");
          argv.push_back(plugin);
        }
        for (const std::string& dir : o.python_path) {
          argv.push_back("--python-path");
          argv.push_back(dir);
        }
        if (!o.local_worker_key_dir.empty()) {
          argv.push_back("--auth-keys");
          argv.push_back(o.local_worker_key_dir);
        }
        return argv;
      });
}

RemoteSampler::~RemoteSampler() {
  receiver_->stop_workers();
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (pool_->num_running() > 0 && Clock::now() < deadline) {
    pool_->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pool_.reset();  // SIGTERM, then SIGKILL, whatever still runs
}

void RemoteSampler::publish(std::shared_ptr<const Weights> weights) { receiver_->publish_weights(std::move(weights)); }

std::string RemoteSampler::describe(const WorkerExitReport& report) const {
  std::string text = "worker " + std::to_string(report.worker_index + 1) + " (pid " + std::to_string(report.pid) + ", " +
                     options_.setup.env_id + ") exited: " + report.exit.describe();
  if (report.restarted) {
    text += "; restarted (restart " + std::to_string(report.restarts_used) + " of " +
            std::to_string(options_.max_worker_restarts) + ")";
  } else if (!report.exit.clean() && !(report.exit.code == kWorkerExitBadInput && !report.exit.signaled)) {
    text += "; not restarted: the restart budget (max_worker_restarts = " + std::to_string(options_.max_worker_restarts) +
            ") is spent";
  }
  if (report.log.empty()) return text;
  if (report.last_lines.empty()) return text + "; it wrote nothing to " + report.log.string();
  text += "; its last lines in " + report.log.string() + ":";
  for (const std::string& line : report.last_lines) text += "\n    | " + line;
  return text;
}

void RemoteSampler::report_notices() {
  for (const std::string& notice : receiver_->take_notices()) {
    // A flood of hostile peers must not flood the log as well.
    if (notices_printed_ == kMaxNoticesPrinted) {
      logger().warn("more workers were dropped; from now on they are only counted (sampler/fragments_refused, "
                    "sampler/messages_rejected)");
    }
    if (notices_printed_++ >= kMaxNoticesPrinted) continue;
    logger().warn("{}", notice);
  }
  // The reasons workers gave for stopping, once each (the receiver bounds them): a failure is
  // worth a warning wherever the worker ran; a signal is a scheduler's doing.
  for (const StopNotice& notice : receiver_->take_stop_notices()) {
    if (notice.cause == StopCause::kSignal) {
      logger().info("{}", notice.text);
    } else {
      logger().warn("{}", notice.text);
    }
  }
}

std::vector<std::string> RemoteSampler::worker_failure_summary() const { return receiver_->worker_failure_summary(); }

void RemoteSampler::watch_workers() {
  for (WorkerExitReport& report : pool_->poll()) {
    if (report.exit.clean()) {  // told to stop
      logger().debug("worker {} (pid {}) exited: {}", report.worker_index + 1, report.pid, report.exit.describe());
      continue;
    }
    const std::string text = describe(report);
    if (!report.exit.signaled && report.exit.code == kWorkerExitBadInput) {
      throw WorkerInputError(text + "\n  (exit status 2: bad input, e.g. an env that breaks the env API's contract; not restarted)");
    }
    logger().warn("{}", text);
    exits_.push_back(std::move(report));
  }
}

namespace {
// With remote workers only, a stop abandons sampling after this long without a fragment.
constexpr std::chrono::seconds kFleetQuietAtStop{2};
}  // namespace

std::vector<SampleBatch> RemoteSampler::collect(int64_t min_transitions) {
  std::vector<SampleBatch> batches;
  int64_t transitions = 0;
  auto last_fragment = Clock::now();
  while (transitions < min_transitions) {
    watch_workers();
    report_notices();
    std::optional<SampleBatch> batch = receiver_->pop(std::chrono::milliseconds(100));
    if (!batch) {
      // A stop (SIGTERM/SIGINT) that waited half its grace period, or whose signal took the
      // workers down too, ends sampling; the trainer checkpoints the last sound state.
      const bool workers_gone = options_.num_local_workers > 0 && pool_->num_running() == 0 &&
                                receiver_->stats().workers_active == 0;
      // Remote workers only (a fleet in the same Slurm job): the signal reached them too, so
      // a pause in their fragments means they are going.
      const bool fleet_quiet = options_.num_local_workers == 0 && Clock::now() - last_fragment > kFleetQuietAtStop;
      if (stop_overdue() || (stop_requested() && (workers_gone || fleet_quiet))) {
        throw StopRequested("sampling abandoned: the stop is overdue or its workers are gone");
      }
      if (workers_gone) {
        std::string message = "every local worker died and the restart budget (max_worker_restarts = " +
                              std::to_string(options_.max_worker_restarts) + ") is spent";
        if (!exits_.empty()) {
          const WorkerExitReport& last = exits_.back();
          message += "; the last: worker " + std::to_string(last.worker_index + 1) + " " + last.exit.describe() +
                     (last.log.empty() ? "" : ", see " + last.log.string());
        }
        throw std::runtime_error(message);
      }
      if (Clock::now() - last_fragment > options_.sample_timeout) {
        std::string message = "no samples for " + std::to_string(options_.sample_timeout.count()) + " s: " +
                              std::to_string(pool_->num_running()) + " local workers running, " +
                              std::to_string(pool_->restarts()) + " restarts used";
        if (!options_.log_dir.empty()) message += "; the workers' logs are in " + options_.log_dir.string();
        throw std::runtime_error(message);
      }
      continue;
    }
    last_fragment = Clock::now();
    transitions += batch->num_transitions();
    batches.push_back(std::move(*batch));
  }
  return batches;
}

std::vector<FinishedEpisode> RemoteSampler::take_episodes() {
  EpisodeReport report = receiver_->take_episodes();
  std::vector<FinishedEpisode> episodes(report.returns.size());
  for (size_t i = 0; i < episodes.size(); ++i) episodes[i] = {report.returns[i], report.lengths[i]};
  return episodes;
}

SamplerStats RemoteSampler::stats() const {
  const ReceiverStats r = receiver_->stats();
  SamplerStats s;
  s.fragments_dropped_stale = r.dropped_stale;
  s.fragments_dropped_other = r.dropped_unknown_worker + r.dropped_at_stop;
  s.fragments_refused = r.refused;
  s.messages_rejected = r.messages_rejected;
  s.worker_restarts = static_cast<uint64_t>(pool_->restarts());
  s.workers_active = r.workers_active;
  s.episodes_dropped_nonfinite = r.episodes_dropped;
  s.fragments_received = r.fragments_received;
  s.fragments_consumed = r.fragments_consumed;
  s.fragments_queued = r.queued;
  s.workers_joined = r.workers_joined;
  s.workers_lost = r.workers_lost;
  s.workers_left = r.workers_left;
  s.workers_failed = r.workers_failed;
  s.worker_failures = r.worker_failures;
  s.workers_rejoined = r.workers_restarted;
  s.handshakes_refused = r.handshakes_refused;
  s.worker_ready_s = r.worker_ready_s;
  s.worker_idle_s = r.worker_starved_s;
  return s;
}

}  // namespace rlx
