#include "algorithms/multi_agent_sampler.h"

#include <cmath>
#include <stdexcept>

#include "core/stop_signal.h"
#include "envs/registry.h"
#include "rollout/policy_factory.h"
#include "rollout/scripted_policy.h"

namespace rlx {

namespace {

nlohmann::json mean_or_null(double value) { return std::isnan(value) ? nlohmann::json() : nlohmann::json(value); }

}  // namespace

void MultiAgentSampler::publish(std::shared_ptr<const Weights>) {
  throw std::logic_error("a multi-agent sampler takes weights per policy (publish_policy)");
}

std::vector<SampleBatch> MultiAgentSampler::collect(int64_t) {
  throw std::logic_error("a multi-agent sampler collects per policy (collect_policy)");
}

MultiAgentEpisodeAccount::MultiAgentEpisodeAccount(const PolicyMap& map, std::vector<std::string> agent_ids)
    : map_(map), agent_ids_(std::move(agent_ids)) {
  policy_windows_.resize(static_cast<size_t>(map.num_policies()));
  policy_episodes_.assign(static_cast<size_t>(map.num_policies()), 0);
  agent_windows_.resize(agent_ids_.size());
}

void MultiAgentEpisodeAccount::add(const MultiAgentEpisode& episode) {
  finished_.push_back({episode.total_return, episode.length});
  for (size_t a = 0; a < agent_ids_.size(); ++a) {
    if (!episode.agent_entered[a]) continue;
    const FinishedEpisode own{episode.agent_returns[a], episode.length};
    agent_windows_[a].add(own);
    const auto p = static_cast<size_t>(episode.agent_policies[a]);
    policy_windows_[p].add(own);
    ++policy_episodes_[p];
  }
  agent_episodes_.push_back(episode);
}

std::vector<MultiAgentEpisode> MultiAgentEpisodeAccount::take_agent_episodes() {
  std::vector<MultiAgentEpisode> taken;
  taken.swap(agent_episodes_);
  return taken;
}

std::vector<FinishedEpisode> MultiAgentEpisodeAccount::take_episodes() {
  std::vector<FinishedEpisode> taken;
  taken.swap(finished_);
  return taken;
}

nlohmann::json MultiAgentEpisodeAccount::result_columns(const std::vector<int64_t>& policy_agent_steps) const {
  nlohmann::json columns = {{"policy", nlohmann::json::object()}, {"agent", nlohmann::json::object()}};
  for (int p = 0; p < map_.num_policies(); ++p) {
    const EpisodeWindow& window = policy_windows_[static_cast<size_t>(p)];
    columns["policy"][map_.policy_names()[static_cast<size_t>(p)]] = {
        {"episode_return_mean", mean_or_null(window.return_mean())},
        {"episode_len_mean", mean_or_null(window.length_mean())},
        {"agent_episodes_total", policy_episodes_[static_cast<size_t>(p)]},
        {"agent_steps_sampled", policy_agent_steps.at(static_cast<size_t>(p))}};
  }
  for (size_t a = 0; a < agent_ids_.size(); ++a) {
    columns["agent"][agent_ids_[a]] = {{"episode_return_mean", mean_or_null(agent_windows_[a].return_mean())}};
  }
  return columns;
}

LocalMultiAgentSampler::LocalMultiAgentSampler(std::vector<std::unique_ptr<RolloutPolicy>> policies, const PolicyMap& map,
                                               const WorkerSetup& setup)
    : map_(map), policies_(std::move(policies)) {
  std::vector<RolloutPolicy*> borrowed;
  for (const auto& policy : policies_) borrowed.push_back(policy.get());
  std::vector<std::unique_ptr<MultiAgentEnv>> envs;
  for (int e = 0; e < setup.num_envs; ++e) envs.push_back(global_env_registry().make_multi_agent(setup.env_id));
  std::vector<std::string> agent_ids;
  for (const AgentSpec& agent : envs[0]->spec().agents) agent_ids.push_back(agent.id);
  account_ = std::make_unique<MultiAgentEpisodeAccount>(map, std::move(agent_ids));
  try {
    collector_ = std::make_unique<MultiAgentCollector>(std::move(envs), map, std::move(borrowed), setup.fragment_length,
                                                       setup.worker_seed());
  } catch (const EnvOutputError& error) {
    throw EnvOutputError(error, kName);
  }
}

void LocalMultiAgentSampler::publish_policy(int policy, std::shared_ptr<const Weights> weights) {
  apply_weights(*policies_.at(static_cast<size_t>(policy)), *weights);
}

void LocalMultiAgentSampler::replace_policy(int policy, std::unique_ptr<RolloutPolicy> acting) {
  collector_->set_policy(policy, acting.get());
  policies_.at(static_cast<size_t>(policy)) = std::move(acting);
}

void LocalMultiAgentSampler::play_scripted(int policy, const std::string& rule, uint64_t seed) {
  replace_policy(policy, make_scripted_policy(rule, map_.policy_env_spec(policy), seed));
}

std::vector<SampleBatch> LocalMultiAgentSampler::collect_policy(int policy, int64_t min_transitions) {
  while (collector_->ready_transitions(policy) < min_transitions) {
    if (stop_overdue()) throw StopRequested(std::string(kName) + ": sampling abandoned, the stop is overdue");
    try {
      collector_->step();
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, kName);
    }
    for (const MultiAgentEpisode& episode : collector_->take_finished_episodes()) account_->add(episode);
  }
  return collector_->take_fragments(policy);
}

nlohmann::json LocalMultiAgentSampler::result_columns() const {
  std::vector<int64_t> agent_steps;
  for (int p = 0; p < map_.num_policies(); ++p) agent_steps.push_back(collector_->agent_steps(p));
  return account_->result_columns(agent_steps);
}

}  // namespace rlx
