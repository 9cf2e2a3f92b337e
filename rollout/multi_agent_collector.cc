#include "rollout/multi_agent_collector.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace rlx {

MultiAgentCollector::MultiAgentCollector(std::vector<std::unique_ptr<MultiAgentEnv>> envs, const PolicyMap& map,
                                         std::vector<RolloutPolicy*> policies, int fragment_length, uint64_t seed)
    : envs_(std::move(envs)), map_(map), policies_(std::move(policies)), fragment_length_(fragment_length), mapping_rng_(seed) {
  if (fragment_length < 1) throw std::invalid_argument("fragment length must be at least 1, got " + std::to_string(fragment_length));
  if (envs_.empty()) throw std::invalid_argument("a multi-agent collector needs at least one env");
  if (static_cast<int>(policies_.size()) != map.num_policies()) {
    throw std::invalid_argument("a multi-agent collector got " + std::to_string(policies_.size()) + " policies for " +
                                std::to_string(map.num_policies()));
  }
  const MultiAgentEnv& first = *envs_[0];
  for (int p = 0; p < map.num_policies(); ++p) {
    const RolloutPolicy* policy = policies_[static_cast<size_t>(p)];
    const EnvSpec& spec = map.policy_env_spec(p);
    if (!policy) throw std::invalid_argument("policy '" + map.policy_names()[static_cast<size_t>(p)] + "' is missing");
    const ObservationLayout& layout = first.observation_layout(map.agents_of(p)[0]);
    if (policy->observation_layout().float_slots != layout.float_slots ||
        policy->observation_layout().byte_slots != layout.byte_slots || policy->config().action_space != spec.action_space) {
      throw std::invalid_argument("policy (observations " + policy->config().input_space().to_string() + ", action " +
                                  policy->config().action_space.to_string() + ") does not fit " + spec.to_string());
    }
    action_starts_.push_back(action_starts(spec.action_space));
  }
  const auto k = envs_.size();
  const auto agents = static_cast<size_t>(first.num_agents());
  const auto num_policies = static_cast<size_t>(map.num_policies());
  lanes_.resize(k * agents * num_policies);
  ready_.resize(num_policies);
  ready_transitions_.assign(num_policies, 0);
  steps_.resize(num_policies);
  policy_agent_steps_.assign(num_policies, 0);
  policy_of_.resize(k);
  agent_states_.resize(k * agents);
  returns_.resize(k);
  for (size_t e = 0; e < k; ++e) start_episode(static_cast<int>(e), seed + e);
}

void MultiAgentCollector::set_policy(int policy, RolloutPolicy* acting) {
  RolloutPolicy*& slot = policies_.at(static_cast<size_t>(policy));
  if (!acting || acting->observation_layout().float_slots != slot->observation_layout().float_slots ||
      acting->observation_layout().byte_slots != slot->observation_layout().byte_slots ||
      acting->config().action_space != slot->config().action_space) {
    throw std::invalid_argument("MultiAgentCollector::set_policy: the new policy does not fit the agents of policy '" +
                                map_.policy_names()[static_cast<size_t>(policy)] + "'");
  }
  slot = acting;
  const auto agents = static_cast<size_t>(envs_[0]->num_agents());
  for (size_t e = 0; e < envs_.size(); ++e) {
    for (size_t a = 0; a < agents; ++a) {
      if (policy_of_[e][a] == policy) agent_states_[e * agents + a].assign(static_cast<size_t>(acting->state_size()), 0.0f);
    }
  }
}

size_t MultiAgentCollector::lane_index(int env, int agent, int policy) const {
  const auto agents = static_cast<size_t>(envs_[0]->num_agents());
  return (static_cast<size_t>(env) * agents + static_cast<size_t>(agent)) * static_cast<size_t>(map_.num_policies()) +
         static_cast<size_t>(policy);
}

MultiAgentCollector::Lane* MultiAgentCollector::lane(int env, int agent, int policy) {
  if (!map_.trains(policy)) return nullptr;
  std::unique_ptr<Lane>& slot = lanes_[lane_index(env, agent, policy)];
  if (!slot) {
    slot = std::make_unique<Lane>();
    const RolloutPolicy& p = *policies_[static_cast<size_t>(policy)];
    slot->column.state_size = p.state_size();
    slot->column.resize(fragment_length_, 1, p.observation_layout().float_slots, p.action_size(), p.has_policy_outputs(),
                        p.observation_layout().byte_slots, p.action_components());
    if (!p.has_values()) slot->column.values.clear();
  }
  return slot.get();
}

void MultiAgentCollector::start_episode(int env, std::optional<uint64_t> seed) {
  MultiAgentEnv& e = *envs_[static_cast<size_t>(env)];
  map_.choose(mapping_rng_, policy_of_[static_cast<size_t>(env)]);
  e.reset(seed);
  returns_[static_cast<size_t>(env)].assign(static_cast<size_t>(e.num_agents()), 0.0);
  for (int a = 0; a < e.num_agents(); ++a) {
    const int policy = policy_of_[static_cast<size_t>(env)][static_cast<size_t>(a)];
    const auto size = static_cast<size_t>(policies_[static_cast<size_t>(policy)]->state_size());
    agent_states_[static_cast<size_t>(env) * static_cast<size_t>(e.num_agents()) + static_cast<size_t>(a)].assign(size, 0.0f);
  }
}

void MultiAgentCollector::step() {
  for (PolicyStep& rows : steps_) {
    rows.envs.clear();
    rows.agents.clear();
  }
  for (size_t e = 0; e < envs_.size(); ++e) {
    for (int a : envs_[e]->acting()) {
      PolicyStep& rows = steps_[static_cast<size_t>(policy_of_[e][static_cast<size_t>(a)])];
      rows.envs.push_back(static_cast<int>(e));
      rows.agents.push_back(a);
    }
  }
  std::vector<std::vector<AgentAction>> actions(envs_.size());
  for (size_t p = 0; p < steps_.size(); ++p) {
    PolicyStep& rows = steps_[p];
    if (rows.envs.empty()) continue;
    act(static_cast<int>(p), rows);
    const RolloutPolicy& policy = *policies_[p];
    const auto d = static_cast<size_t>(policy.action_components());
    const auto width = static_cast<size_t>(policy.action_size());
    for (size_t r = 0; r < rows.envs.size(); ++r) {
      record_action(rows.envs[r], rows.agents[r], static_cast<int>(p), rows, r);
      AgentAction action{rows.agents[r], {}};
      if (width > 0) {
        action.action.values = rows.clipped.data() + r * width;
      } else if (d == 1 && policy.config().action_space.is_discrete()) {
        action.action.index = rows.env_indices[r];
      } else {
        action.action.indices = rows.env_indices.data() + r * d;
      }
      actions[static_cast<size_t>(rows.envs[r])].push_back(action);
    }
  }
  for (size_t e = 0; e < envs_.size(); ++e) {
    MultiAgentEnv& env = *envs_[e];
    env.step(actions[e]);
    record_outcomes(static_cast<int>(e));
    if (!env.episode_done()) continue;
    MultiAgentEpisode episode;
    episode.length = env.elapsed_steps();
    episode.agent_returns = returns_[e];
    episode.agent_policies = policy_of_[e];
    for (int a = 0; a < env.num_agents(); ++a) {
      episode.agent_entered.push_back(env.agent_entered(a));
      episode.total_return += returns_[e][static_cast<size_t>(a)];
    }
    finished_.push_back(std::move(episode));
    start_episode(static_cast<int>(e), std::nullopt);
  }
  env_steps_ += static_cast<int64_t>(envs_.size());
}

void MultiAgentCollector::act(int policy_index, PolicyStep& rows) {
  RolloutPolicy& policy = *policies_[static_cast<size_t>(policy_index)];
  const size_t n = rows.envs.size();
  const auto o = static_cast<size_t>(policy.observation_layout().float_slots);
  const auto b = static_cast<size_t>(policy.observation_layout().byte_slots);
  const auto s = static_cast<size_t>(policy.state_size());
  const auto agents = static_cast<size_t>(envs_[0]->num_agents());
  rows.obs.resize(n * o);
  rows.obs_bytes.resize(n * b);
  rows.states.resize(n * s);
  for (size_t r = 0; r < n; ++r) {
    const ObsRow row = envs_[static_cast<size_t>(rows.envs[r])]->observation(rows.agents[r]);
    std::copy(row.floats, row.floats + o, rows.obs.begin() + static_cast<std::ptrdiff_t>(r * o));
    if (b > 0) std::copy(row.bytes, row.bytes + b, rows.obs_bytes.begin() + static_cast<std::ptrdiff_t>(r * b));
    if (s > 0) {
      const std::vector<float>& state = agent_states_[static_cast<size_t>(rows.envs[r]) * agents + static_cast<size_t>(rows.agents[r])];
      std::copy(state.begin(), state.end(), rows.states.begin() + static_cast<std::ptrdiff_t>(r * s));
    }
  }
  if (s > 0) policy.set_states(rows.states, static_cast<int>(n));
  ActOutput out;
  const auto d = static_cast<size_t>(policy.action_components());
  const auto width = static_cast<size_t>(policy.action_size());
  if (width == 0) {
    rows.action_indices.resize(n * d);
    out.action_indices = rows.action_indices.data();
  } else {
    rows.action_values.resize(n * width);
    out.action_values = rows.action_values.data();
  }
  if (policy.has_policy_outputs()) {
    rows.log_probs.resize(n);
    rows.values.resize(n);
    out.log_probs = rows.log_probs.data();
    out.values = policy.has_values() ? rows.values.data() : nullptr;
  }
  policy.act(ObsBatch(rows.obs.data(), b > 0 ? rows.obs_bytes.data() : nullptr), static_cast<int>(n), out);
  if (s > 0) {
    const std::vector<float>& advanced = policy.states();
    for (size_t r = 0; r < n; ++r) {
      std::vector<float>& state = agent_states_[static_cast<size_t>(rows.envs[r]) * agents + static_cast<size_t>(rows.agents[r])];
      std::copy(advanced.begin() + static_cast<std::ptrdiff_t>(r * s), advanced.begin() + static_cast<std::ptrdiff_t>((r + 1) * s),
                state.begin());
    }
  }
  if (width == 0) {
    const std::vector<int64_t>& starts = action_starts_[static_cast<size_t>(policy_index)];
    rows.env_indices.resize(n * d);
    for (size_t i = 0; i < n * d; ++i) rows.env_indices[i] = rows.action_indices[i] + starts[i % d];
  } else {
    const Space& space = policy.config().action_space;
    rows.clipped.resize(n * width);
    for (size_t i = 0; i < n * width; ++i) {
      const size_t j = i % width;
      rows.clipped[i] = std::min(std::max(rows.action_values[i], space.low[j]), space.high[j]);
    }
  }
  policy_agent_steps_[static_cast<size_t>(policy_index)] += static_cast<int64_t>(n);
  agent_steps_ += static_cast<int64_t>(n);
}

void MultiAgentCollector::record_action(int env, int agent, int policy_index, const PolicyStep& rows, size_t row) {
  Lane* l = lane(env, agent, policy_index);
  if (!l) return;  // a frozen policy records nothing
  if (l->open) throw std::logic_error("MultiAgentCollector: an agent acted before its last action's outcome");
  const RolloutPolicy& policy = *policies_[static_cast<size_t>(policy_index)];
  SampleBatch& c = l->column;
  const auto t = static_cast<size_t>(l->filled);
  const auto o = static_cast<size_t>(c.obs_size);
  const auto b = static_cast<size_t>(c.obs_byte_size);
  const auto s = static_cast<size_t>(c.state_size);
  if (t == 0) {
    c.policy_version = policy.version();
    std::copy(rows.states.begin() + static_cast<std::ptrdiff_t>(row * s), rows.states.begin() + static_cast<std::ptrdiff_t>((row + 1) * s),
              c.initial_states.begin());
  }
  std::copy(rows.obs.begin() + static_cast<std::ptrdiff_t>(row * o), rows.obs.begin() + static_cast<std::ptrdiff_t>((row + 1) * o),
            c.obs.begin() + static_cast<std::ptrdiff_t>(t * o));
  std::copy(rows.obs_bytes.begin() + static_cast<std::ptrdiff_t>(row * b),
            rows.obs_bytes.begin() + static_cast<std::ptrdiff_t>((row + 1) * b), c.obs_u8.begin() + static_cast<std::ptrdiff_t>(t * b));
  if (c.discrete()) {
    const auto d = static_cast<size_t>(c.action_components);
    std::copy(rows.action_indices.begin() + static_cast<std::ptrdiff_t>(row * d),
              rows.action_indices.begin() + static_cast<std::ptrdiff_t>((row + 1) * d),
              c.action_indices.begin() + static_cast<std::ptrdiff_t>(t * d));
  } else {
    const auto a = static_cast<size_t>(c.action_size);
    std::copy(rows.action_values.begin() + static_cast<std::ptrdiff_t>(row * a),
              rows.action_values.begin() + static_cast<std::ptrdiff_t>((row + 1) * a),
              c.action_values.begin() + static_cast<std::ptrdiff_t>(t * a));
  }
  if (!c.log_probs.empty()) c.log_probs[t] = rows.log_probs[row];
  if (!c.values.empty()) c.values[t] = rows.values[row];
  c.rewards[t] = 0.0f;
  c.terminated[t] = 0;
  c.truncated[t] = 0;
  l->open = true;
}

void MultiAgentCollector::record_outcomes(int env) {
  MultiAgentEnv& e = *envs_[static_cast<size_t>(env)];
  for (int a = 0; a < e.num_agents(); ++a) {
    const AgentOutcome& outcome = e.outcome(a);
    const int policy = policy_of_[static_cast<size_t>(env)][static_cast<size_t>(a)];
    returns_[static_cast<size_t>(env)][static_cast<size_t>(a)] += outcome.reward;
    Lane* l = lane(env, a, policy);
    if (!l || !l->open) continue;  // frozen, or not acted yet (a reward before its first action is in no transition)
    l->column.rewards[static_cast<size_t>(l->filled)] += static_cast<float>(outcome.reward);
    if (outcome.terminated || outcome.truncated || outcome.observed) {
      close(*l, policy, outcome.terminated, outcome.truncated && !outcome.terminated, e.observation(a),
            static_cast<int64_t>(lane_index(env, a, policy)));
    }
  }
}

void MultiAgentCollector::close(Lane& lane, int policy, bool terminated, bool truncated, const ObsRow& next, int64_t lane_id) {
  SampleBatch& c = lane.column;
  const auto t = static_cast<size_t>(lane.filled);
  const auto o = static_cast<size_t>(c.obs_size);
  const auto b = static_cast<size_t>(c.obs_byte_size);
  c.terminated[t] = terminated ? 1 : 0;
  c.truncated[t] = truncated ? 1 : 0;
  if (terminated || truncated) {
    c.final_obs_index.push_back(static_cast<int32_t>(t));
    c.final_obs.insert(c.final_obs.end(), next.floats, next.floats + o);
    if (b > 0) c.final_obs_u8.insert(c.final_obs_u8.end(), next.bytes, next.bytes + b);
  }
  lane.open = false;
  if (++lane.filled < fragment_length_) return;
  std::copy(next.floats, next.floats + o, c.bootstrap_obs.begin());
  if (b > 0) std::copy(next.bytes, next.bytes + b, c.bootstrap_obs_u8.begin());
  c.worker_id = static_cast<uint64_t>(lane_id);
  SampleBatch full = c;  // the lane keeps its buffers' sizes for the next column
  ready_[static_cast<size_t>(policy)].push_back(std::move(full));
  ready_transitions_[static_cast<size_t>(policy)] += fragment_length_;
  lane.filled = 0;
  c.final_obs_index.clear();
  c.final_obs.clear();
  c.final_obs_u8.clear();
}

std::vector<SampleBatch> MultiAgentCollector::take_fragments(int policy) {
  std::vector<SampleBatch> taken;
  taken.swap(ready_.at(static_cast<size_t>(policy)));
  ready_transitions_[static_cast<size_t>(policy)] = 0;
  return taken;
}

std::vector<MultiAgentEpisode> MultiAgentCollector::take_finished_episodes() {
  std::vector<MultiAgentEpisode> taken;
  taken.swap(finished_);
  return taken;
}

}  // namespace rlx
