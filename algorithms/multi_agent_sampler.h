// MultiAgentSampler: where a multi-agent run's fragments come from, policy by policy, with the
// returns per policy and per agent. LocalMultiAgentSampler steps the envs in the learner's own
// process (num_workers: 0), synchronously, so a seed fixes the run; RemoteMultiAgentSampler
// (algorithms/remote_multi_agent_sampler.h) takes them from worker processes. PolicySampler shows
// one policy's share as a plain Sampler, which is what each policy's own algorithm iterates over.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/episode_window.h"
#include "algorithms/sampler.h"
#include "rollout/multi_agent_collector.h"
#include "rollout/worker_setup.h"

namespace rlx {

class MultiAgentSampler : public Sampler {
 public:
  // Policy p's workers act with these weights from now on.
  virtual void publish_policy(int policy, std::shared_ptr<const Weights> weights) = 0;
  // Policy p (a frozen one) acts with `acting` from now on.
  virtual void replace_policy(int policy, std::unique_ptr<RolloutPolicy> acting) = 0;
  // Policy p (a frozen one with a model) plays the scripted rule from now on, its actions drawn
  // from `seed`, until publish_policy gives it weights again.
  virtual void play_scripted(int policy, const std::string& rule, uint64_t seed) = 0;
  // Policy p's fragments, at least min_transitions transitions; throws like Sampler::collect.
  virtual std::vector<SampleBatch> collect_policy(int policy, int64_t min_transitions) = 0;
  // Env steps and agent steps taken so far.
  virtual int64_t env_steps() const = 0;
  virtual int64_t agent_steps() const = 0;
  // The episodes finished since the last call, every agent's return and policy in each; clears them.
  virtual std::vector<MultiAgentEpisode> take_agent_episodes() = 0;
  // {"policy": {NAME: {episode_return_mean, episode_len_mean, episodes_total}}, "agent": {ID:
  // {episode_return_mean}}} over each one's last kEpisodeWindow episodes (null means while none).
  virtual nlohmann::json result_columns() const = 0;

  // A multi-agent sampler serves policies by index: these throw std::logic_error.
  void publish(std::shared_ptr<const Weights> weights) override;
  std::vector<SampleBatch> collect(int64_t min_transitions) override;
};

// The finished episodes of a multi-agent sampler: the queues its take_* calls empty, and each
// policy's and agent's window of returns for the result columns.
class MultiAgentEpisodeAccount {
 public:
  // Borrows the map (it must outlive this); agent_ids in the env spec's order.
  MultiAgentEpisodeAccount(const PolicyMap& map, std::vector<std::string> agent_ids);

  // One finished episode.
  void add(const MultiAgentEpisode& episode);
  std::vector<FinishedEpisode> take_episodes();
  std::vector<MultiAgentEpisode> take_agent_episodes();
  // MultiAgentSampler::result_columns, with each policy's agent steps so far.
  nlohmann::json result_columns(const std::vector<int64_t>& policy_agent_steps) const;
  size_t num_agents() const { return agent_ids_.size(); }

 private:
  const PolicyMap& map_;
  std::vector<std::string> agent_ids_;
  std::vector<EpisodeWindow> policy_windows_, agent_windows_;
  std::vector<int64_t> policy_episodes_;
  std::vector<FinishedEpisode> finished_;
  std::vector<MultiAgentEpisode> agent_episodes_;
};

class LocalMultiAgentSampler : public MultiAgentSampler {
 public:
  // policies[p] acts for map's policy p; the envs are setup's env_id, num_envs of them, seeded from
  // its worker seed, cut into fragments of its fragment_length.
  LocalMultiAgentSampler(std::vector<std::unique_ptr<RolloutPolicy>> policies, const PolicyMap& map, const WorkerSetup& setup);

  static constexpr const char* kName = "in-process multi-agent sampler (num_workers: 0)";

  void publish_policy(int policy, std::shared_ptr<const Weights> weights) override;
  void replace_policy(int policy, std::unique_ptr<RolloutPolicy> acting) override;
  void play_scripted(int policy, const std::string& rule, uint64_t seed) override;
  // Steps every env until policy p has min_transitions ready; throws StopRequested once a stop is
  // overdue, and the envs' errors named with this sampler.
  std::vector<SampleBatch> collect_policy(int policy, int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override { return account_->take_episodes(); }
  SamplerStats stats() const override { return {}; }
  int64_t env_steps() const override { return collector_->env_steps(); }
  int64_t agent_steps() const override { return collector_->agent_steps(); }
  nlohmann::json result_columns() const override;
  std::vector<MultiAgentEpisode> take_agent_episodes() override { return account_->take_agent_episodes(); }

 private:
  const PolicyMap& map_;
  std::vector<std::unique_ptr<RolloutPolicy>> policies_;
  std::unique_ptr<MultiAgentCollector> collector_;
  std::unique_ptr<MultiAgentEpisodeAccount> account_;
};

// One policy's share of a MultiAgentSampler as a Sampler (borrows it).
class PolicySampler : public Sampler {
 public:
  PolicySampler(MultiAgentSampler& sampler, int policy) : sampler_(sampler), policy_(policy) {}
  void publish(std::shared_ptr<const Weights> weights) override { sampler_.publish_policy(policy_, std::move(weights)); }
  std::vector<SampleBatch> collect(int64_t min_transitions) override { return sampler_.collect_policy(policy_, min_transitions); }
  // The episodes are the whole sampler's: none here.
  std::vector<FinishedEpisode> take_episodes() override { return {}; }
  SamplerStats stats() const override { return sampler_.stats(); }

 private:
  MultiAgentSampler& sampler_;
  int policy_;
};

}  // namespace rlx
