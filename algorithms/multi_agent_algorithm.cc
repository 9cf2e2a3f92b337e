#include "algorithms/multi_agent_algorithm.h"

#include <algorithm>
#include <stdexcept>

#include "algorithms/model_from_config.h"
#include "algorithms/training_checkpoint.h"
#include "core/config_error.h"
#include "core/named_registry.h"
#include "core/space_json.h"
#include "envs/registry.h"
#include "models/model_spec_json.h"
#include "algorithms/remote_multi_agent_sampler.h"
#include "models/network_layout.h"
#include "rollout/policy_factory.h"
#include "rollout/scripted_policy.h"

namespace rlx {

namespace {

const std::string kFilePrefix = "policy.";

std::string label(const Experiment& experiment) {
  return experiment.source + ": experiment '" + experiment.name + "' on multi-agent env '" + experiment.env + "'";
}

// What several agents cannot do yet, refused by name before anything starts.
void refuse_unbuilt(const Experiment& experiment) {
  const CommonConfig& common = experiment.config.common();
  const auto refuse = [&](const std::string& what) { throw ConfigError(label(experiment) + ": " + what); };
  if (experiment.algorithm != AlgorithmKind::kPPO && experiment.algorithm != AlgorithmKind::kAPPO) {
    refuse(std::string("multi-agent runs train with PPO or APPO so far, not ") + algorithm_name(experiment.algorithm));
  }
  if (common.frame_stack != 1) refuse("frame_stack must be 1 for a multi-agent run so far");
  if (common.record_video_every != 0) refuse("record_video_every must be 0: multi-agent envs are not filmed");
}

// The multi-agent env's spec as JSON: its id, limits and each agent's spaces.
nlohmann::json multi_agent_spec_json(const MultiAgentEnvSpec& spec, const PolicyMap& map) {
  nlohmann::json agents = nlohmann::json::array();
  for (const AgentSpec& agent : spec.agents) {
    agents.push_back({{"id", agent.id},
                      {"observation_space", space_to_json(agent.observation_space)},
                      {"action_space", space_to_json(agent.action_space)},
                      {"action_mask", agent.action_mask}});
  }
  nlohmann::json json = {{"id", spec.id}, {"multi_agent", true}, {"max_episode_steps", spec.max_episode_steps},
                         {"agents", agents}, {"policies", map.policy_names()}};
  json["reward_threshold"] = spec.reward_threshold ? nlohmann::json(*spec.reward_threshold) : nlohmann::json();
  return json;
}

}  // namespace

bool is_multi_agent_experiment(const Experiment& experiment) {
  return !experiment.policy_env_spec && global_env_registry().find_multi_agent(experiment.env).has_value();
}

Experiment policy_experiment(const Experiment& experiment, const PolicyMap& map, int policy) {
  const std::string& name = map.policy_names().at(static_cast<size_t>(policy));
  Experiment one = experiment;
  one.config = policy_config(experiment.config, experiment.multi_agent, name);
  one.multi_agent = {};
  one.policy_env_spec = map.policy_env_spec(policy);
  return one;
}

nlohmann::json check_multi_agent_experiment(const Experiment& experiment) {
  refuse_unbuilt(experiment);
  const MultiAgentEnvSpec& spec = global_env_registry().multi_agent_spec(experiment.env);
  global_env_registry().make_multi_agent(experiment.env);  // an instance must carry the registered spec
  std::unique_ptr<PolicyMap> map;
  try {
    map = std::make_unique<PolicyMap>(spec, experiment.multi_agent);
  } catch (const ConfigError& error) {
    throw ConfigError(label(experiment) + ": " + error.what());
  }
  for (int p = 0; p < map->num_policies(); ++p) {
    const std::string& name = map->policy_names()[static_cast<size_t>(p)];
    if (const std::string rule = experiment.multi_agent.scripted(name); !rule.empty()) {
      try {
        make_scripted_policy(rule, map->policy_env_spec(p), 0);
      } catch (const ConfigError& error) {
        throw ConfigError(label(experiment) + ": policy '" + name + "': " + error.what());
      }
      continue;
    }
    const Experiment one = policy_experiment(experiment, *map, p);
    try {
      model_from_config(one, *one.policy_env_spec);
    } catch (const ConfigError& error) {
      throw ConfigError("policy '" + map->policy_names()[static_cast<size_t>(p)] + "': " + error.what());
    }
  }
  return multi_agent_spec_json(spec, *map);
}

MultiAgentAlgorithm::MultiAgentAlgorithm(const Experiment& experiment, const DataParallelOptions& options,
                                         const AlgorithmFactory& make_policy_algorithm)
    : experiment_(experiment) {
  refuse_unbuilt(experiment);
  map_ = std::make_unique<PolicyMap>(global_env_registry().multi_agent_spec(experiment.env), experiment.multi_agent);
  count_agent_steps_ = experiment.config.common().count_steps_by == "agent_steps";
  for (int p = 0; p < map_->num_policies(); ++p) {
    scripted_.push_back(experiment.multi_agent.scripted(map_->policy_names()[static_cast<size_t>(p)]));
    DataParallelOptions own = options;
    own.policy = p;
    policies_.push_back(scripted_.back().empty() ? make_policy_algorithm(policy_experiment(experiment, *map_, p), own)
                                                 : nullptr);
  }
  const SelfPlaySetup& play = experiment.multi_agent.self_play;
  if (play.enabled()) {
    self_play_policy_ = *map_->policy_index(play.policy);
    opponent_ = *map_->policy_index(play.opponent);
    if (policies_[static_cast<size_t>(opponent_)]->model_json() != policies_[static_cast<size_t>(self_play_policy_)]->model_json()) {
      throw ConfigError(label(experiment) + ": self_play: opponent '" + play.opponent + "' has another model than '" +
                        play.policy + "', so it cannot play its snapshots: give both the same model keys");
    }
    for (const std::string& rule : play.league) make_scripted_policy(rule, map_->policy_env_spec(opponent_), 0);  // it suits
    pool_ = std::make_unique<SelfPlayPool>(play);
    pool_->add(0, policies_[static_cast<size_t>(self_play_policy_)]->current_weights());
  }
}

void MultiAgentAlgorithm::start_self_play_iteration(MultiAgentSampler& sampler) {
  const uint64_t seed = static_cast<uint64_t>(experiment_.config.common().seed) * 1'000'003ULL + static_cast<uint64_t>(iterations_);
  Rng rng(seed);
  playing_ = pool_->choose(rng);
  const SelfPlayPool::Snapshot& snapshot = pool_->at(playing_);
  const EnvSpec& spec = map_->policy_env_spec(opponent_);
  if (!snapshot.scripted.empty()) {
    sampler.play_scripted(opponent_, snapshot.scripted, seed);
    return;
  }
  WorkerSetup setup = policies_[static_cast<size_t>(opponent_)]->worker_setup();
  setup.seed = seed;
  sampler.replace_policy(opponent_, make_rollout_policy(setup, spec));
  sampler.publish_policy(opponent_, snapshot.weights);
}

nlohmann::json MultiAgentAlgorithm::finish_self_play_iteration(const std::vector<MultiAgentEpisode>& episodes) {
  int64_t wins = 0, draws = 0, games = 0;
  for (const MultiAgentEpisode& episode : episodes) {
    double own = 0, theirs = 0;
    bool both = false, mine = false;
    for (size_t a = 0; a < episode.agent_policies.size(); ++a) {
      if (!episode.agent_entered[a]) continue;
      if (episode.agent_policies[a] == self_play_policy_) {
        own += episode.agent_returns[a];
        mine = true;
      } else if (episode.agent_policies[a] == opponent_) {
        theirs += episode.agent_returns[a];
        both = true;
      }
    }
    if (!mine || !both) continue;  // a game without both sides scores nothing
    const double outcome = own - theirs;
    pool_->record(playing_, outcome);
    ++games;
    wins += outcome > 0 ? 1 : 0;
    draws += outcome == 0 ? 1 : 0;
  }
  const SelfPlayPool::Snapshot& played = pool_->at(playing_);
  nlohmann::json columns = {{"pool_size", pool_->size()},
                            {"opponent", played.scripted.empty() ? "iteration " + std::to_string(played.iteration) : played.scripted},
                            {"opponent_iteration", played.scripted.empty() ? nlohmann::json(played.iteration) : nlohmann::json()},
                            {"games", games},
                            {"win_rate", games > 0 ? nlohmann::json(static_cast<double>(wins) / static_cast<double>(games)) : nlohmann::json()},
                            {"draw_rate", games > 0 ? nlohmann::json(static_cast<double>(draws) / static_cast<double>(games)) : nlohmann::json()}};
  if (iterations_ % experiment_.multi_agent.self_play.snapshot_every == 0) {
    pool_->add(iterations_, policies_[static_cast<size_t>(self_play_policy_)]->current_weights());
  }
  return columns;
}

WorkerSetup MultiAgentAlgorithm::worker_setup() const {
  throw std::logic_error("a multi-agent algorithm has one worker setup per policy");
}

std::shared_ptr<Weights> MultiAgentAlgorithm::current_weights() const {
  throw std::logic_error("a multi-agent algorithm has weights per policy (publish_weights)");
}

std::unique_ptr<RolloutPolicy> MultiAgentAlgorithm::policy_evaluation_policy(int policy, bool deterministic, uint64_t seed) const {
  const auto p = static_cast<size_t>(policy);
  if (!scripted_.at(p).empty()) return make_scripted_policy(scripted_[p], map_->policy_env_spec(policy), seed);
  return policies_[p]->evaluation_policy(deterministic, seed);
}

std::unique_ptr<MultiAgentSampler> MultiAgentAlgorithm::make_local_sampler() const {
  std::vector<std::unique_ptr<RolloutPolicy>> acting;
  WorkerSetup envs;
  for (size_t p = 0; p < policies_.size(); ++p) {
    // Each policy samples its actions from a stream of its own.
    const uint64_t seed = static_cast<uint64_t>(experiment_.config.common().seed) + 7919ULL * p;
    if (!policies_[p]) {
      acting.push_back(make_scripted_policy(scripted_[p], map_->policy_env_spec(static_cast<int>(p)), seed));
      continue;
    }
    WorkerSetup setup = policies_[p]->worker_setup();
    envs = setup;
    setup.seed = seed;
    acting.push_back(make_rollout_policy(setup, map_->policy_env_spec(static_cast<int>(p))));
  }
  return std::make_unique<LocalMultiAgentSampler>(std::move(acting), *map_, envs);
}

std::unique_ptr<MultiAgentSampler> MultiAgentAlgorithm::make_remote_sampler(RemoteSamplerOptions options) const {
  auto multi = std::make_shared<MultiAgentWorkerSetup>();
  multi->setup = experiment_.multi_agent.to_json();
  // A worker needs each policy's name and scripted rule; its model and how it acts come per policy.
  if (multi->setup.contains("policies")) {
    for (auto& [name, keys] : multi->setup["policies"].items()) {
      keys = keys.contains("scripted") ? nlohmann::json{{"scripted", keys["scripted"]}} : nlohmann::json::object();
    }
  }
  bool have_base = false;  // the env, envs, fragments and seed: the first policy with a model's
  for (size_t p = 0; p < policies_.size(); ++p) {
    const EnvSpec& spec = map_->policy_env_spec(static_cast<int>(p));
    PolicyExpectation expected;
    expected.env = ExpectedEnv::of(spec);
    expected.trains = policies_[p] && map_->trains(static_cast<int>(p));
    if (policies_[p]) {
      const WorkerSetup setup = policies_[p]->worker_setup();
      if (!have_base) options.setup = setup;
      have_base = true;
      multi->policies.push_back(setup);
      expected.policy_outputs = setup.model.kind == ModelKind::kActorCritic;
      if (setup.model.recurrent()) expected.state_size = actor_critic_layout(setup.model).state_size;
    } else {
      multi->policies.emplace_back();
    }
    options.policies.push_back(expected);
  }
  if (!have_base) throw ConfigError(label(experiment_) + ": worker processes need a policy with a model");
  options.setup.multi_agent = multi;
  return std::make_unique<RemoteMultiAgentSampler>(std::move(options), *map_);
}

int MultiAgentAlgorithm::worker_credits(int64_t num_workers) const {
  int credits = kDefaultWorkerCredits;
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (policies_[p] && map_->trains(static_cast<int>(p))) credits = std::max(credits, policies_[p]->worker_credits(num_workers));
  }
  return credits * map_->num_agents();
}

void MultiAgentAlgorithm::publish_weights(Sampler& sampler) const {
  auto& multi = dynamic_cast<MultiAgentSampler&>(sampler);
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (policies_[p]) multi.publish_policy(static_cast<int>(p), policies_[p]->current_weights());
  }
}

IterationResult MultiAgentAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  auto* multi = dynamic_cast<MultiAgentSampler*>(&sampler);
  if (!multi) throw std::logic_error("a multi-agent algorithm trains from a MultiAgentSampler");
  const int64_t env_steps_before = multi->env_steps(), agent_steps_before = multi->agent_steps();
  if (pool_) start_self_play_iteration(*multi);
  IterationResult result;
  result.columns = {{"policy", nlohmann::json::object()}};
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (!map_->trains(static_cast<int>(p))) continue;
    PolicySampler share(*multi, static_cast<int>(p));
    const IterationResult own = policies_[p]->train_iteration(share, timesteps_done);
    result.columns["policy"][map_->policy_names()[p]]["learner"] = own.learner;
  }
  ++iterations_;
  const std::vector<MultiAgentEpisode> episodes = multi->take_agent_episodes();
  if (pool_) result.columns["self_play"] = finish_self_play_iteration(episodes);
  const int64_t env_steps = multi->env_steps() - env_steps_before;
  const int64_t agent_steps = multi->agent_steps() - agent_steps_before;
  env_steps_total_ += env_steps;
  agent_steps_total_ += agent_steps;
  result.env_steps = count_agent_steps_ ? agent_steps : env_steps;
  merge_columns(result.columns, multi->result_columns());
  result.columns["num_env_steps_sampled"] = env_steps_total_;
  result.columns["num_agent_steps_sampled"] = agent_steps_total_;
  return result;
}

std::vector<CheckpointFile> MultiAgentAlgorithm::checkpoint_files() const {
  std::vector<CheckpointFile> files;
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (!policies_[p]) continue;  // scripted: nothing to keep
    for (CheckpointFile& file : policies_[p]->checkpoint_files()) {
      files.push_back({kFilePrefix + map_->policy_names()[p] + "." + file.name, std::move(file.bytes)});
    }
  }
  if (pool_) {
    for (CheckpointFile& file : pool_->checkpoint_files()) files.push_back(std::move(file));
  }
  return files;
}

nlohmann::json MultiAgentAlgorithm::checkpoint_state() const {
  nlohmann::json state = {{"policies", nlohmann::json::object()},
                          {"env_steps_total", env_steps_total_},
                          {"agent_steps_total", agent_steps_total_},
                          {"iterations", iterations_}};
  if (pool_) state["self_play"] = pool_->checkpoint_state();
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (policies_[p]) state["policies"][map_->policy_names()[p]] = policies_[p]->checkpoint_state();
  }
  return state;
}

nlohmann::json MultiAgentAlgorithm::model_json() const {
  nlohmann::json models = nlohmann::json::object();
  for (size_t p = 0; p < policies_.size(); ++p) {
    models[map_->policy_names()[p]] = policies_[p] ? policies_[p]->model_json() : nlohmann::json{{"scripted", scripted_[p]}};
  }
  return {{"policies", models}};
}

Checkpoint MultiAgentAlgorithm::policy_checkpoint(const Checkpoint& checkpoint, int policy) const {
  const std::string& name = map_->policy_names()[static_cast<size_t>(policy)];
  const auto refuse = [&](const std::string& what) {
    return CheckpointRefused(checkpoint.path.string() + ": policy '" + name + "': " + what);
  };
  Checkpoint own;
  own.path = checkpoint.path;
  own.manifest = checkpoint.manifest;
  const nlohmann::json& state = checkpoint.manifest.at("algorithm_state");
  if (!state.contains("policies") || !state["policies"].contains(name)) {
    throw refuse("the checkpoint holds no state of it (a checkpoint of another run's policies?)");
  }
  own.manifest["algorithm_state"] = state["policies"][name];
  const nlohmann::json& model = checkpoint.manifest.value("model", nlohmann::json());
  if (model.is_object() && model.contains("policies") && model["policies"].contains(name)) {
    own.manifest["model"] = model["policies"][name];
  } else {
    own.manifest.erase("model");
  }
  const std::string prefix = kFilePrefix + name + ".";
  for (const auto& [file, bytes] : checkpoint.files) {
    if (file.rfind(prefix, 0) == 0) own.files[file.substr(prefix.size())] = bytes;
  }
  return own;
}

void MultiAgentAlgorithm::check_model_of(const Checkpoint& checkpoint) const {
  const nlohmann::json& model = checkpoint.manifest.value("model", nlohmann::json());
  if (!model.is_object() || !model.contains("policies")) {
    throw CheckpointRefused(checkpoint.path.string() + ": not a checkpoint of a multi-agent run (its model has no policies)");
  }
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (!checkpoint.manifest.contains("algorithm_state")) break;
    if (policies_[p]) policies_[p]->check_model_of(policy_checkpoint(checkpoint, static_cast<int>(p)));
  }
}

void MultiAgentAlgorithm::restore(const Checkpoint& checkpoint) {
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (policies_[p]) policies_[p]->restore(policy_checkpoint(checkpoint, static_cast<int>(p)));
  }
  const nlohmann::json& state = checkpoint.manifest.at("algorithm_state");
  env_steps_total_ = state.value("env_steps_total", int64_t{0});
  agent_steps_total_ = state.value("agent_steps_total", int64_t{0});
  iterations_ = state.value("iterations", int64_t{0});
  if (pool_) {
    try {
      pool_->restore(checkpoint, state.at("self_play"));
    } catch (const std::exception& error) {
      throw CheckpointRefused(checkpoint.path.string() + ": cannot restore the self-play pool: " + error.what());
    }
  }
}

std::optional<std::string> MultiAgentAlgorithm::non_finite_weights() const {
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (!policies_[p]) continue;
    if (auto bad = policies_[p]->non_finite_weights()) return "policy '" + map_->policy_names()[p] + "': " + *bad;
  }
  return std::nullopt;
}

std::unique_ptr<RolloutPolicy> MultiAgentAlgorithm::evaluation_policy(bool, uint64_t) const {
  throw std::logic_error("a multi-agent run's policies act through policy_evaluation_policy");
}

void MultiAgentAlgorithm::follow(const LearnerCommand& command) {
  if (const auto* select = std::get_if<SelectPolicyCommand>(&command.command)) {
    if (select->policy >= map_->num_policies() || !policies_[static_cast<size_t>(select->policy)]) {
      throw RankProtocolError("select_policy " + std::to_string(select->policy) + ": this run has no learner of that policy (" +
                              std::to_string(map_->num_policies()) + " policies: " + joined_names(map_->policy_names()) + ")");
    }
    following_ = static_cast<int>(select->policy);
    return;
  }
  if (following_ < 0) {
    throw RankProtocolError("a multi-agent learner rank got a command (kind " + std::to_string(command.command.index() + 1) +
                            ") without a select_policy before it");
  }
  const int policy = following_;
  following_ = -1;  // each command names its policy
  policies_[static_cast<size_t>(policy)]->follow(command);
}

std::optional<int64_t> MultiAgentAlgorithm::steps_of_failed_iteration() const {
  for (const auto& policy : policies_) {
    if (policy && !policy->steps_of_failed_iteration()) return std::nullopt;
  }
  return 0;
}

}  // namespace rlx
