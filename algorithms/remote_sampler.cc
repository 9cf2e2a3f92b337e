#include "algorithms/remote_sampler.h"

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "envs/registry.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

ExpectedEnv expected_env(const std::string& env_id) {
  const EnvSpec& spec = global_env_registry().spec(env_id);
  ExpectedEnv env;
  env.env_id = spec.id;
  env.obs_size = spec.observation_space.size();
  env.action_size = spec.action_space.is_discrete() ? 0 : spec.action_space.size();
  env.num_actions = spec.action_space.is_discrete() ? spec.action_space.n : 0;
  return env;
}

}  // namespace

RemoteSampler::RemoteSampler(RemoteSamplerOptions options) : options_(std::move(options)), context_(1) {
  if (options_.worker_program.empty()) options_.worker_program = std::filesystem::read_symlink("/proc/self/exe");
  ReceiverOptions receiver_options;
  receiver_options.endpoint = options_.bind_endpoint;
  receiver_options.env = expected_env(options_.setup.env_id);
  receiver_options.credits_per_worker = options_.credits_per_worker;
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
  const std::string endpoint = receiver_->endpoint();
  const RemoteSamplerOptions& o = options_;
  pool_ = std::make_unique<WorkerPool>(
      WorkerPoolOptions{o.num_local_workers, o.max_worker_restarts, std::chrono::milliseconds(3000)},
      [&o, endpoint](int i) {
        std::vector<std::string> argv = {o.worker_program, "worker", "--connect", endpoint, "--worker-id",
                                         std::to_string(i + 1), "--learner-timeout", "60"};
        for (const std::string& plugin : o.env_plugins) {
          argv.push_back("--env-plugin");
          argv.push_back(plugin);
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

std::vector<SampleBatch> RemoteSampler::collect(int64_t min_transitions) {
  std::vector<SampleBatch> batches;
  int64_t transitions = 0;
  auto last_fragment = Clock::now();
  while (transitions < min_transitions) {
    pool_->poll();
    std::optional<SampleBatch> batch = receiver_->pop(std::chrono::milliseconds(100));
    if (!batch) {
      if (options_.num_local_workers > 0 && pool_->num_running() == 0 && receiver_->stats().workers_active == 0) {
        throw std::runtime_error("every local worker died and the restart budget (max_worker_restarts = " +
                                 std::to_string(options_.max_worker_restarts) + ") is spent; see the workers' errors above");
      }
      if (Clock::now() - last_fragment > options_.sample_timeout) {
        throw std::runtime_error("no samples for " + std::to_string(options_.sample_timeout.count()) +
                                 " s: " + std::to_string(pool_->num_running()) + " local workers running, " +
                                 std::to_string(pool_->restarts()) + " restarts used");
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
  s.messages_rejected = r.messages_rejected;
  s.worker_restarts = static_cast<uint64_t>(pool_->restarts());
  s.workers_active = r.workers_active;
  return s;
}

}  // namespace rlx
