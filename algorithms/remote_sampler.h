// RemoteSampler: a SampleReceiver on the learner plus N local `rlx worker` processes (restarted
// when they crash, killed with the learner); remote workers may join the same endpoint.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/sampler.h"
#include "rollout/worker_pool.h"
#include "rollout/worker_setup.h"
#include "transport/sample_receiver.h"

namespace rlx {

struct RemoteSamplerOptions {
  WorkerSetup setup;                      // worker_index is filled per worker
  int num_local_workers = 2;
  std::string worker_program;             // the rlx binary (default: this process's own)
  std::vector<std::string> env_plugins;   // passed on to local workers
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  int credits_per_worker = 2;
  uint64_t max_policy_lag = 1;
  int max_worker_restarts = 10;
  std::chrono::seconds sample_timeout{120};  // collect() fails when no fragment came for this long
  std::optional<CurveKeyPair> curve_server;  // with keys: only authorized workers join
  std::vector<std::string> authorized_client_keys;
  std::string local_worker_key_dir;          // --auth-keys for the local workers (when keys are on)
};

class RemoteSampler : public Sampler {
 public:
  // Binds, starts the local workers; throws on a bind or spawn failure.
  explicit RemoteSampler(RemoteSamplerOptions options);
  // Stops every worker (local ones are reaped).
  ~RemoteSampler() override;

  void publish(std::shared_ptr<const Weights> weights) override;
  // Throws std::runtime_error when no fragment arrives for sample_timeout (e.g. every worker
  // keeps crashing).
  std::vector<SampleBatch> collect(int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override;
  SamplerStats stats() const override;

  const std::string& endpoint() const { return receiver_->endpoint(); }

 private:
  RemoteSamplerOptions options_;
  zmq::context_t context_;
  std::unique_ptr<SampleReceiver> receiver_;
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace rlx
