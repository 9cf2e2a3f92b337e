// RemoteMultiAgentSampler: a multi-agent run's fragments from `rlx worker` processes (num_workers
// > 0, or workers that connect to --bind). The workers step the envs and send each trained
// policy's lanes ([T, 1] fragments naming their policy); this sorts them by policy, gives each
// lane its own stream (so per-column learner state, the reward scaler's, follows one agent), and
// keeps the returns per policy and agent from the workers' episode reports.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "algorithms/multi_agent_sampler.h"
#include "algorithms/remote_sampler.h"

namespace rlx {

class RemoteMultiAgentSampler : public MultiAgentSampler {
 public:
  // options.setup.multi_agent and options.policies must be set (one per policy of `map`, which is
  // borrowed); starts the local workers as RemoteSampler does.
  RemoteMultiAgentSampler(RemoteSamplerOptions options, const PolicyMap& map);

  // Sent to every worker, named with the policy's index; drops what waits of the policy's lanes
  // that became stale with it.
  void publish_policy(int policy, std::shared_ptr<const Weights> weights) override;
  // The workers build their own acting policies: a model policy takes new weights through
  // publish_policy (a self-play snapshot); a scripted one cannot be swapped in (std::logic_error).
  void replace_policy(int policy, std::unique_ptr<RolloutPolicy> acting) override;
  // Sent to every worker as weights that name the rule instead of parameters; the workers build
  // the scripted player themselves (its actions from their own seeds, not `seed`).
  void play_scripted(int policy, const std::string& rule, uint64_t seed) override;
  // Policy p's lanes, at least min_transitions transitions; other policies' lanes that arrive
  // meanwhile wait for their turn. Throws as RemoteSampler::collect does.
  std::vector<SampleBatch> collect_policy(int policy, int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override;
  SamplerStats stats() const override { return remote_->stats(); }
  // Env steps and agent steps (every policy's, frozen ones too) as the workers reported them.
  int64_t env_steps() const override { return env_steps_; }
  int64_t agent_steps() const override;
  std::vector<MultiAgentEpisode> take_agent_episodes() override;
  nlohmann::json result_columns() const override;

  const RemoteSampler& remote() const { return *remote_; }

 private:
  // Moves the receiver's episode reports into the account.
  void account_episodes();
  // Sorts fragments into the policies' queues, each lane its own stream id.
  void route(std::vector<SampleBatch> fragments);

  const PolicyMap& map_;
  uint64_t max_policy_lag_;
  std::unique_ptr<RemoteSampler> remote_;
  std::unique_ptr<MultiAgentEpisodeAccount> account_;
  std::vector<std::vector<SampleBatch>> waiting_;  // per policy
  std::vector<int64_t> policy_agent_steps_;        // per policy, as reported
  std::map<std::pair<uint64_t, int32_t>, uint64_t> streams_;  // (worker, lane) -> stream id
  int64_t env_steps_ = 0;
};

}  // namespace rlx
