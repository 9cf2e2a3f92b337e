#include "rollout/scripted_policy.h"

#include <functional>

#include "core/config_error.h"
#include "core/named_registry.h"
#include "envs/multi_agent/connect_four.h"
#include "rollout/simple_spread_oracle.h"

namespace rlx {

namespace {

// A rule: the action (from 0) for one observation's floats and mask (null: every action legal).
using Rule = std::function<int64_t(const float* floats, const uint8_t* mask, int64_t actions, Rng& rng)>;

int64_t random_legal(const uint8_t* mask, int64_t actions, Rng& rng) {
  std::vector<int64_t> legal;
  for (int64_t a = 0; a < actions; ++a) {
    if (!mask || mask[a]) legal.push_back(a);
  }
  if (legal.empty()) return 0;  // no legal action: the env's own check reports it
  return legal[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(legal.size())))];
}

int64_t connect_four_lookahead(const float* floats, const uint8_t* mask, int64_t actions, Rng& rng) {
  const ConnectFourBoard board = ConnectFourEnv::read_view(floats);  // the player is 1, its opponent 2
  for (int player : {1, 2}) {  // win, else block
    for (int c = 0; c < ConnectFourBoard::kColumns; ++c) {
      if (board.legal(c) && board.winning_move(c, player)) return c;
    }
  }
  return random_legal(mask, actions, rng);
}

int64_t simple_spread_oracle(const float* floats, const uint8_t*, int64_t, Rng&) { return simple_spread_oracle_plan(floats).move; }

class ScriptedPolicy : public RolloutPolicy {
 public:
  ScriptedPolicy(const EnvSpec& spec, Rule rule, uint64_t seed)
      : RolloutPolicy(ModelSpec::for_env(spec), ModelKind::kActorCritic, seed), rule_(std::move(rule)),
        actions_(spec.action_space.n) {}

  void act(const ObsBatch& obs, int num_envs, const ActOutput& out) override {
    const int64_t floats = observation_layout().float_slots;
    for (int k = 0; k < num_envs; ++k) out.action_indices[k] = rule_(obs.floats + k * floats, mask_of(obs, k), actions_, rng_);
  }
  void load_weights(const float*, size_t count, uint64_t version) override {
    if (count != 0) throw std::invalid_argument("a scripted policy has no weights, got " + std::to_string(count));
    set_version(version);
  }
  size_t num_parameters() const override { return 0; }
  std::vector<float> weights() const override { return {}; }
  bool has_policy_outputs() const override { return false; }

 private:
  Rule rule_;
  int64_t actions_;
};

}  // namespace

const std::vector<std::string>& scripted_policy_names() {
  static const std::vector<std::string> names = {"random", "connect_four_lookahead", "simple_spread_oracle"};
  return names;
}

std::unique_ptr<RolloutPolicy> make_scripted_policy(const std::string& name, const EnvSpec& spec, uint64_t seed) {
  if (!spec.action_space.is_discrete()) {
    throw ConfigError("scripted policy '" + name + "' chooses among Discrete actions, not " + spec.action_space.to_string() +
                      " (" + spec.id + ")");
  }
  if (name == "random") return std::make_unique<ScriptedPolicy>(spec, [](const float*, const uint8_t* mask, int64_t actions, Rng& rng) { return random_legal(mask, actions, rng); }, seed);
  if (name == "connect_four_lookahead") {
    const AgentSpec board = ConnectFourEnv::default_spec().agents[0];
    if (spec.observation_space != board.observation_space || spec.action_space != board.action_space || !spec.action_mask) {
      throw ConfigError("scripted policy 'connect_four_lookahead' plays ConnectFour-v0's agents, not " + spec.to_string());
    }
    return std::make_unique<ScriptedPolicy>(spec, connect_four_lookahead, seed);
  }
  if (name == "simple_spread_oracle") {
    if (!suits_simple_spread_oracle(spec)) {
      throw ConfigError("scripted policy 'simple_spread_oracle' plays SimpleSpread-v0's agents (18 observation floats, Discrete(5)), not " +
                        spec.to_string());
    }
    return std::make_unique<ScriptedPolicy>(spec, simple_spread_oracle, seed);
  }
  throw ConfigError("unknown scripted policy '" + name + "' (the scripted policies: " + joined_names(scripted_policy_names()) + ")");
}

}  // namespace rlx
