#include "rollout/multi_agent_worker_sampling.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/config_error.h"
#include "core/multi_agent_config.h"
#include "core/named_registry.h"
#include "envs/registry.h"
#include "rollout/policy_factory.h"
#include "rollout/scripted_policy.h"

namespace rlx {

namespace {

constexpr const char* kWhere = "worker setup: multi_agent";
// Policy p's actions come from a stream of its own, as in the learner's process.
constexpr uint64_t kPolicySeedStride = 7919;

std::invalid_argument bad_setup(const std::string& what) { return std::invalid_argument(std::string(kWhere) + ": " + what); }

// The experiment's multi-agent keys as the learner sent them; network input, so a ConfigError
// becomes std::invalid_argument.
MultiAgentSetup read_setup(const nlohmann::json& keys) {
  const auto field = [&](const char* key) { return keys.contains(key) ? keys.at(key) : nlohmann::json(); };
  try {
    return read_multi_agent_setup(field("policies"), field("policy_mapping"), field("policies_to_train"),
                                  field("self_play"), AlgorithmKind::kPPO,
                                  [](const std::string&) { return std::string(kWhere); });
  } catch (const ConfigError& error) {
    throw std::invalid_argument(error.what());  // names kWhere already
  } catch (const nlohmann::json::exception& error) {
    throw bad_setup(std::string("setup: ") + error.what());
  }
}

}  // namespace

MultiAgentWorkerSampling::MultiAgentWorkerSampling(const WorkerSetup& setup)
    : env_id_(setup.env_id), num_envs_(setup.num_envs) {
  if (!setup.multi_agent) throw std::logic_error("MultiAgentWorkerSampling: the setup has no multi_agent part");
  const MultiAgentWorkerSetup& multi = *setup.multi_agent;
  if (setup.frame_stack != 1) throw bad_setup("frame_stack is " + std::to_string(setup.frame_stack) + ", it must be 1");
  const MultiAgentEnvSpec& spec = global_env_registry().multi_agent_spec(setup.env_id);
  const MultiAgentSetup keys = read_setup(multi.setup);
  try {
    map_ = std::make_unique<PolicyMap>(spec, keys);
  } catch (const ConfigError& error) {
    throw bad_setup(error.what());
  }
  const int num_policies = map_->num_policies();
  if (static_cast<int64_t>(multi.policies.size()) != num_policies) {
    throw bad_setup("'policies' has " + std::to_string(multi.policies.size()) + " entries, the run has " +
                    std::to_string(num_policies) + " policies (" + joined_names(map_->policy_names()) + ")");
  }
  num_agents_ = static_cast<int>(spec.agents.size());
  lanes_ = int64_t{num_envs_} * num_agents_;
  // The collector numbers lanes by env, agent and policy; the wire carries them as int32.
  if (lanes_ * num_policies > std::numeric_limits<int32_t>::max()) {
    throw bad_setup(std::to_string(num_envs_) + " envs of " + std::to_string(num_agents_) + " agents and " +
                    std::to_string(num_policies) + " policies are more lanes than a fragment can name");
  }
  // A report's env steps, and so each policy's agent steps (at most one per agent and env step),
  // stay within the learner's bound of fragment_length x lanes.
  report_bound_ = int64_t{setup.fragment_length} * num_envs_;

  for (int p = 0; p < num_policies; ++p) {
    const std::string& name = map_->policy_names()[static_cast<size_t>(p)];
    const std::string rule = keys.scripted(name);
    const std::optional<WorkerSetup>& own = multi.policies[static_cast<size_t>(p)];
    const uint64_t seed = setup.worker_seed() + kPolicySeedStride * static_cast<uint64_t>(p);
    seeds_.push_back(seed);
    if (!rule.empty()) {
      if (own) throw bad_setup("policy '" + name + "' plays by the scripted rule '" + rule + "', but 'policies' gives it a model");
      try {
        policies_.push_back(make_scripted_policy(rule, map_->policy_env_spec(p), seed));
      } catch (const ConfigError& error) {
        throw bad_setup(error.what());
      }
      has_model_.push_back(false);
      weight_delays_.emplace_back(0);
      continue;
    }
    if (!own) throw bad_setup("policy '" + name + "' has a model, but 'policies' gives it none (null is for scripted ones)");
    WorkerSetup acting = *own;
    acting.worker_index = setup.worker_index;
    acting.num_workers = setup.num_workers;
    acting.seed = setup.seed + kPolicySeedStride * static_cast<uint64_t>(p);  // its worker_seed() is `seed`
    try {
      policies_.push_back(make_rollout_policy(acting, map_->policy_env_spec(p)));
    } catch (const std::invalid_argument& error) {
      throw bad_setup("policy '" + name + "': " + error.what());
    }
    has_model_.push_back(true);
    weight_delays_.emplace_back(acting.weight_delay);
  }
  have_weights_.assign(static_cast<size_t>(num_policies), false);
  league_.resize(static_cast<size_t>(num_policies));

  std::vector<std::unique_ptr<MultiAgentEnv>> envs;
  for (int e = 0; e < num_envs_; ++e) envs.push_back(global_env_registry().make_multi_agent(setup.env_id));
  std::vector<RolloutPolicy*> borrowed;
  for (const auto& policy : policies_) borrowed.push_back(policy.get());
  try {
    collector_ = std::make_unique<MultiAgentCollector>(std::move(envs), *map_, std::move(borrowed), setup.fragment_length,
                                                       setup.worker_seed());
  } catch (const std::invalid_argument& error) {
    throw bad_setup(error.what());
  }
}

MultiAgentWorkerSampling::~MultiAgentWorkerSampling() = default;

void MultiAgentWorkerSampling::fill_hello(Hello& hello) const {
  hello.env_id = env_id_;
  hello.num_envs = lanes_;
  // The learner compares only the env id and the lanes; these keep the hello valid to decode.
  set_hello_spaces(hello, map_->policy_env_spec(0));
}

WeightsOutcome MultiAgentWorkerSampling::apply(std::shared_ptr<Weights> weights) {
  const int32_t p = weights->policy_index;
  const int num_policies = map_->num_policies();
  WeightsOutcome outcome;
  if (p < 0) {
    outcome.rejection = "weights that name no policy, but this worker acts with " + std::to_string(num_policies) +
                        " policies of a multi-agent env";
    return outcome;
  }
  if (p >= num_policies) {
    outcome.rejection = "weights for policy index " + std::to_string(p) + ", but the run has " +
                        std::to_string(num_policies) + " policies";
    return outcome;
  }
  const auto index = static_cast<size_t>(p);
  if (!has_model_[index]) {
    outcome.rejection = "weights for policy '" + map_->policy_names()[index] + "' (index " + std::to_string(p) +
                        "), which is a scripted player";
    return outcome;
  }
  if (!weights->scripted.empty()) return play_scripted(p, weights->scripted);
  if (league_[index]) {  // back to its model
    collector_->set_policy(p, policies_[index].get());
    league_[index].reset();
  }
  const std::shared_ptr<const Weights> act_with = weight_delays_[index].push(std::move(weights));
  apply_weights(*policies_[index], *act_with);
  have_weights_[index] = true;
  outcome.accepted = true;
  outcome.acting_version = act_with->policy_version;
  outcome.params = act_with->params.size();
  return outcome;
}

WeightsOutcome MultiAgentWorkerSampling::play_scripted(int policy, const std::string& rule) {
  const auto index = static_cast<size_t>(policy);
  WeightsOutcome outcome;
  if (map_->trains(policy)) {
    outcome.rejection = "a scripted rule for policy '" + map_->policy_names()[index] + "', which trains";
    return outcome;
  }
  std::unique_ptr<RolloutPolicy> player;
  try {
    player = make_scripted_policy(rule, map_->policy_env_spec(policy), seeds_[index]);
  } catch (const ConfigError& error) {
    outcome.rejection = std::string("a scripted rule that does not fit: ") + error.what();
    return outcome;
  }
  collector_->set_policy(policy, player.get());
  league_[index] = std::move(player);
  have_weights_[index] = true;
  outcome.accepted = true;
  return outcome;
}

bool MultiAgentWorkerSampling::ready() const {
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (has_model_[p] && !have_weights_[p]) return false;
  }
  return true;
}

void MultiAgentWorkerSampling::step() {
  if (collector_->env_steps() - env_steps_reported_ + num_envs_ > report_bound_) closed_reports_.push_back(close_report());
  collector_->step();
  for (MultiAgentEpisode& episode : collector_->take_finished_episodes()) finished_.push_back(std::move(episode));
  for (int p = 0; p < map_->num_policies(); ++p) {
    if (!map_->trains(p) || collector_->ready_transitions(p) == 0) continue;
    for (SampleBatch& fragment : collector_->take_fragments(p)) {
      fragment.policy_index = p;
      ready_.push_back(std::move(fragment));
    }
  }
}

void MultiAgentWorkerSampling::next_fragment(SampleBatch& batch) {
  while (ready_.empty()) step();
  SampleBatch& next = ready_.front();
  // The collector gives each fragment its lane's number as worker_id.
  const uint64_t lane = next.worker_id;
  if (lane > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    throw std::logic_error("MultiAgentWorkerSampling: lane " + std::to_string(lane) + " does not fit the wire's int32");
  }
  batch = std::move(next);
  ready_.pop_front();
  batch.lane = static_cast<int32_t>(lane);
}

EpisodeStats MultiAgentWorkerSampling::close_report() {
  EpisodeStats report;
  report.num_agents = num_agents_;
  for (const MultiAgentEpisode& episode : finished_) {
    report.returns.push_back(episode.total_return);
    report.lengths.push_back(episode.length);
    for (size_t a = 0; a < static_cast<size_t>(num_agents_); ++a) {
      report.agent_returns.push_back(episode.agent_returns[a]);
      report.agent_policies.push_back(episode.agent_entered[a] ? episode.agent_policies[a] : -1);
    }
  }
  finished_.clear();
  report.env_steps = collector_->env_steps() - env_steps_reported_;
  env_steps_reported_ = collector_->env_steps();
  agent_steps_reported_.resize(static_cast<size_t>(map_->num_policies()), 0);
  for (int p = 0; p < map_->num_policies(); ++p) {
    const auto at = static_cast<size_t>(p);
    report.policy_agent_steps.push_back(collector_->agent_steps(p) - agent_steps_reported_[at]);
    agent_steps_reported_[at] = collector_->agent_steps(p);
  }
  return report;
}

std::vector<EpisodeStats> MultiAgentWorkerSampling::take_reports() {
  std::vector<EpisodeStats> reports;
  reports.swap(closed_reports_);
  if (!finished_.empty() || collector_->env_steps() > env_steps_reported_) reports.push_back(close_report());
  return reports;
}

std::string MultiAgentWorkerSampling::describe() const {
  return env_id_ + " x " + std::to_string(num_envs_) + " envs of " + std::to_string(num_agents_) + " agents (" +
         std::to_string(lanes_) + " lanes)";
}

}  // namespace rlx
