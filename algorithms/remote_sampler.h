// RemoteSampler: a SampleReceiver on the learner plus N local `rlx worker` processes (restarted
// when they crash, killed with the learner); remote workers may join the same endpoint.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/sampler.h"
#include "core/config_error.h"
#include "core/guarded_temp_dir.h"
#include "rollout/worker_pool.h"
#include "rollout/worker_setup.h"
#include "transport/sample_receiver.h"

namespace rlx {

// K a worker may announce (rlx worker --envs K) when the learner's setup asks for fewer.
constexpr int kDefaultMaxEnvsPerWorker = 64;

struct RemoteSamplerOptions {
  WorkerSetup setup;                      // worker_index is filled per worker
  int num_local_workers = 2;
  std::string worker_program;             // the rlx binary (default: rlx_program_path(), the torch-free `rlx`)
  std::vector<std::string> env_plugins;   // passed on to local workers
  std::vector<std::string> python_path;   // passed on to local workers (--python-path)
  std::string bind_endpoint;              // empty: a private ipc:// socket only this user can reach
  int credits_per_worker = 2;
  uint64_t max_policy_lag = 1;
  int max_worker_restarts = 10;
  size_t max_workers = 1024;                 // workers served at once (local and remote)
  std::chrono::seconds sample_timeout{120};  // collect() fails when no fragment came for this long
  std::optional<CurveKeyPair> curve_server;  // with keys: only authorized workers join
  std::vector<std::string> authorized_client_keys;
  std::string local_worker_key_dir;          // --auth-keys for the local workers (when keys are on)
  std::filesystem::path log_dir;             // local worker i logs to log_dir/worker_<i + 1>.log; empty: inherit
  ProcessLauncher* launcher = nullptr;       // starts the local workers (null: local fork/exec); outlives this
  double worker_learner_timeout_s = 60.0;    // local workers exit after the learner is silent this long
  // A multi-agent env (setup.multi_agent set): each policy's fragment contract and the env's
  // agents (ReceiverOptions::policies); a worker has setup.num_envs x num_agents lanes.
  std::vector<PolicyExpectation> policies;
  int num_agents = 0;
};

// A local worker failed on bad input (exit status 2: an env that breaks its contract, a plugin
// that does not load): `rlx train` exits with status 2.
class WorkerInputError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

class RemoteSampler : public Sampler {
 public:
  // Binds, starts the local workers; throws on a bind or spawn failure.
  explicit RemoteSampler(RemoteSamplerOptions options);
  // Stops every worker (local ones are reaped).
  ~RemoteSampler() override;

  void publish(std::shared_ptr<const Weights> weights) override;
  // Throws std::runtime_error when no fragment arrives for sample_timeout or every local worker
  // died with the restart budget spent, and WorkerInputError when a local worker failed on bad
  // input (exit status 2, e.g. its env broke the contract); each names the workers and quotes
  // the last lines of their logs. Every worker exit is logged (a warning) as it happens.
  std::vector<SampleBatch> collect(int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override;
  // The episodes finished since the last call as the receiver has them (a multi-agent run's with
  // each agent's return and the env steps its workers reported).
  EpisodeReport take_episode_report() { return receiver_->take_episodes(); }
  SamplerStats stats() const override;
  std::vector<std::string> worker_failure_summary() const override;

  const std::string& endpoint() const { return receiver_->endpoint(); }
  // The most memory the receiver's queued fragments can take (max_workers x credits x largest).
  uint64_t queued_bytes_bound() const { return receiver_->stats().queued_bytes_bound; }

 private:
  // Logs the exits poll() found; throws WorkerInputError on a bad-input exit.
  void watch_workers();
  // "worker 2 (pid 4242, CartPole-v1) exited: ...; last lines of LOG:\n    | ..." for one exit.
  std::string describe(const WorkerExitReport& report) const;

  // Logs why each peer the receiver dropped was dropped.
  void report_notices();

  RemoteSamplerOptions options_;
  // Holds the private ipc socket; removed after the receiver closes (and on the signal paths).
  std::unique_ptr<GuardedTempDir> socket_dir_;
  zmq::context_t context_;
  std::unique_ptr<SampleReceiver> receiver_;
  std::unique_ptr<WorkerPool> pool_;
  std::vector<WorkerExitReport> exits_;  // every exit so far, for the final error
  int notices_printed_ = 0;
};

}  // namespace rlx
