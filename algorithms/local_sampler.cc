#include "algorithms/local_sampler.h"

#include "core/stop_signal.h"
#include "envs/registry.h"
#include "rollout/policy_factory.h"

namespace rlx {

namespace {

nlohmann::json rng_to_json(const Rng::State& state) {
  return {{"words", {state.words[0], state.words[1], state.words[2], state.words[3]}},
          {"spare_normal", state.spare_normal},
          {"has_spare_normal", state.has_spare_normal}};
}

Rng::State rng_from_json(const nlohmann::json& json) {
  Rng::State state;
  const auto words = json.at("words").get<std::vector<uint64_t>>();
  if (words.size() != 4) throw std::invalid_argument("a generator state needs 4 words");
  for (size_t i = 0; i < 4; ++i) state.words[i] = words[i];
  state.spare_normal = json.at("spare_normal").get<double>();
  state.has_spare_normal = json.at("has_spare_normal").get<bool>();
  return state;
}

}  // namespace

LocalSampler::LocalSampler(const WorkerSetup& setup) : setup_(setup), weight_delay_(setup.weight_delay) {
  auto envs = std::make_unique<VectorEnv>(setup.env_factory(), setup.num_envs,
                                           setup.non_finite_policy());
  policy_ = make_rollout_policy(setup, envs->spec());
  collector_ = std::make_unique<FragmentCollector>(std::move(envs), *policy_, setup.fragment_length,
                                                   setup.worker_seed());
}

void LocalSampler::publish(std::shared_ptr<const Weights> weights) {
  apply_weights(*policy_, *weight_delay_.push(std::move(weights)));
}

std::vector<SampleBatch> LocalSampler::collect(int64_t min_transitions) {
  std::vector<SampleBatch> batches;
  int64_t transitions = 0;
  do {
    // A stop signal lets the iteration finish unless it takes half the grace period.
    if (stop_overdue()) throw StopRequested(std::string(kName) + ": sampling abandoned, the stop is overdue");
    batches.emplace_back();
    try {
      collector_->collect(batches.back());
    } catch (const NonFiniteEnvOutput& error) {
      throw NonFiniteEnvOutput(error, kName);
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, kName);
    }
    transitions += batches.back().num_transitions();
  } while (transitions < min_transitions);
  return batches;
}

std::vector<FinishedEpisode> LocalSampler::take_episodes() {
  stats_.episodes_dropped_nonfinite += static_cast<uint64_t>(collector_->take_episodes_dropped());
  return collector_->take_finished_episodes();
}


nlohmann::json LocalSampler::checkpoint_state() const {
  const std::optional<FragmentCollector::Snapshot> snapshot = collector_->snapshot();
  if (!snapshot) return nullptr;
  nlohmann::json envs = nlohmann::json::array();
  for (const EnvSnapshot& env : snapshot->envs.envs) {
    envs.push_back({{"rng", rng_to_json(env.rng)},
                    {"seeded", env.seeded},
                    {"elapsed_steps", env.elapsed_steps},
                    {"state", env.exact_state}});
  }
  return {{"env_id", setup_.env_id},
          {"num_envs", setup_.num_envs},
          {"envs", envs},
          {"running_returns", snapshot->envs.running_returns},
          {"last_obs", snapshot->envs.last_obs},
          {"current_obs", snapshot->current_obs},
          {"last_obs_u8", snapshot->envs.last_obs_bytes},
          {"current_obs_u8", snapshot->current_obs_u8},
          {"policy_rng", rng_to_json(snapshot->policy_rng)},
          {"policy_states", snapshot->policy_states},
          {"env_steps", snapshot->env_steps},
          {"episodes_dropped_nonfinite", stats_.episodes_dropped_nonfinite}};
}

void LocalSampler::restore(const nlohmann::json& state) {
  try {
    if (state.at("env_id").get<std::string>() != setup_.env_id || state.at("num_envs").get<int>() != setup_.num_envs) {
      throw std::invalid_argument("it holds " + state.at("num_envs").dump() + " envs of " + state.at("env_id").dump() +
                                  ", this run steps " + std::to_string(setup_.num_envs) + " of " + setup_.env_id);
    }
    FragmentCollector::Snapshot snapshot;
    for (const nlohmann::json& env : state.at("envs")) {
      snapshot.envs.envs.push_back({rng_from_json(env.at("rng")), env.at("seeded").get<bool>(),
                                    env.at("elapsed_steps").get<int>(), env.at("state").get<std::vector<double>>()});
    }
    snapshot.envs.running_returns = state.at("running_returns").get<std::vector<double>>();
    snapshot.envs.last_obs = state.at("last_obs").get<std::vector<float>>();
    snapshot.current_obs = state.at("current_obs").get<std::vector<float>>();
    // Byte parts: absent in the checkpoints of an rlx before byte observations (none had any).
    snapshot.envs.last_obs_bytes = state.value("last_obs_u8", std::vector<uint8_t>{});
    snapshot.current_obs_u8 = state.value("current_obs_u8", std::vector<uint8_t>{});
    snapshot.policy_rng = rng_from_json(state.at("policy_rng"));
    // A recurrent policy's states: absent in the checkpoints of an rlx before recurrent cores.
    snapshot.policy_states = state.value("policy_states", std::vector<float>{});
    snapshot.env_steps = state.at("env_steps").get<int64_t>();
    collector_->restore(snapshot);
    stats_.episodes_dropped_nonfinite = state.at("episodes_dropped_nonfinite").get<uint64_t>();
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(std::string("malformed sampler state: ") + error.what());
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(std::string("the sampler state does not fit this run: ") + error.what());
  }
}

}  // namespace rlx
