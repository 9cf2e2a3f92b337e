#include "algorithms/remote_multi_agent_sampler.h"

#include <algorithm>
#include <stdexcept>

#include "envs/registry.h"

namespace rlx {

RemoteMultiAgentSampler::RemoteMultiAgentSampler(RemoteSamplerOptions options, const PolicyMap& map)
    : map_(map), max_policy_lag_(options.max_policy_lag) {
  if (!options.setup.multi_agent || options.policies.size() != static_cast<size_t>(map.num_policies())) {
    throw std::logic_error("RemoteMultiAgentSampler needs a multi-agent setup and every policy's expectation");
  }
  std::vector<std::string> agent_ids;
  for (const AgentSpec& agent : global_env_registry().multi_agent_spec(options.setup.env_id).agents) {
    agent_ids.push_back(agent.id);
  }
  options.num_agents = static_cast<int>(agent_ids.size());
  account_ = std::make_unique<MultiAgentEpisodeAccount>(map, std::move(agent_ids));
  waiting_.resize(static_cast<size_t>(map.num_policies()));
  policy_agent_steps_.assign(static_cast<size_t>(map.num_policies()), 0);
  remote_ = std::make_unique<RemoteSampler>(std::move(options));
}

void RemoteMultiAgentSampler::publish_policy(int policy, std::shared_ptr<const Weights> weights) {
  auto named = std::make_shared<Weights>(*weights);
  named->policy_index = policy;
  std::vector<SampleBatch>& waiting = waiting_.at(static_cast<size_t>(policy));
  const uint64_t version = named->policy_version;
  waiting.erase(std::remove_if(waiting.begin(), waiting.end(),
                               [&](const SampleBatch& lane) {
                                 return version > lane.policy_version && version - lane.policy_version > max_policy_lag_;
                               }),
                waiting.end());
  remote_->publish(std::move(named));
}

void RemoteMultiAgentSampler::replace_policy(int policy, std::unique_ptr<RolloutPolicy>) {
  // The workers' own copy of the policy takes the weights publish_policy sends next.
  if (map_.trains(policy)) throw std::logic_error("RemoteMultiAgentSampler: a policy that trains cannot be replaced");
}

void RemoteMultiAgentSampler::play_scripted(int policy, const std::string& rule, uint64_t) {
  if (map_.trains(policy)) throw std::logic_error("RemoteMultiAgentSampler: a policy that trains cannot play a scripted rule");
  auto weights = std::make_shared<Weights>();
  weights->policy_index = policy;
  weights->scripted = rule;
  remote_->publish(std::move(weights));
}

void RemoteMultiAgentSampler::route(std::vector<SampleBatch> fragments) {
  for (SampleBatch& lane : fragments) {
    // The receiver let through only lanes of the policies that train (transport/sample_receiver.h).
    const auto policy = static_cast<size_t>(lane.policy_index);
    const auto key = std::make_pair(lane.worker_id, lane.lane);
    const auto stream = streams_.emplace(key, streams_.size()).first->second;
    lane.worker_id = stream;
    waiting_.at(policy).push_back(std::move(lane));
  }
}

std::vector<SampleBatch> RemoteMultiAgentSampler::collect_policy(int policy, int64_t min_transitions) {
  std::vector<SampleBatch>& waiting = waiting_.at(static_cast<size_t>(policy));
  const auto ready = [&] {
    int64_t transitions = 0;
    for (const SampleBatch& lane : waiting) transitions += lane.num_transitions();
    return transitions;
  };
  while (ready() < min_transitions) {
    route(remote_->collect(1));
    account_episodes();
  }
  account_episodes();
  std::vector<SampleBatch> taken;
  taken.swap(waiting);
  return taken;
}

void RemoteMultiAgentSampler::account_episodes() {
  const EpisodeReport report = remote_->take_episode_report();
  env_steps_ += report.env_steps;
  for (size_t p = 0; p < report.policy_agent_steps.size() && p < policy_agent_steps_.size(); ++p) {
    policy_agent_steps_[p] += report.policy_agent_steps[p];
  }
  const auto agents = static_cast<size_t>(report.num_agents);
  if (agents != account_->num_agents()) return;  // none yet: a report of no episodes
  for (size_t e = 0; e < report.returns.size(); ++e) {
    MultiAgentEpisode episode;
    episode.length = report.lengths[e];
    episode.total_return = report.returns[e];
    for (size_t a = 0; a < agents; ++a) {
      const int32_t policy = report.agent_policies[e * agents + a];
      episode.agent_returns.push_back(report.agent_returns[e * agents + a]);
      episode.agent_policies.push_back(std::max(policy, 0));
      episode.agent_entered.push_back(policy >= 0);
    }
    account_->add(episode);
  }
}

std::vector<FinishedEpisode> RemoteMultiAgentSampler::take_episodes() {
  account_episodes();
  return account_->take_episodes();
}

std::vector<MultiAgentEpisode> RemoteMultiAgentSampler::take_agent_episodes() {
  account_episodes();
  return account_->take_agent_episodes();
}

int64_t RemoteMultiAgentSampler::agent_steps() const {
  int64_t total = 0;
  for (const int64_t steps : policy_agent_steps_) total += steps;
  return total;
}

nlohmann::json RemoteMultiAgentSampler::result_columns() const { return account_->result_columns(policy_agent_steps_); }

}  // namespace rlx
