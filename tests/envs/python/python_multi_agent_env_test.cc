// Python multi-agent envs through the bridge (envs/python/python_multi_agent_env.h): PettingZoo's
// Parallel API and RLlib's MultiAgentEnv read by duck typing, per-agent spaces and masks, and the
// errors naming the env and the agent. The envs are in tests/envs/python/multi_agent_envs.py.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "envs/python_env.h"
#include "envs/registry.h"

namespace {

const std::string kModule = "python:multi_agent_envs:";

// The registered multi-agent env `name` of multi_agent_envs.py (registered on first use).
const rlx::MultiAgentEnvSpec& python_multi_agent_env(const std::string& name, const std::string& env_config = "{}") {
  static const bool path_added = [] {
    rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
    return true;
  }();
  (void)path_added;
  rlx::register_python_env(kModule + name, env_config);
  return rlx::global_env_registry().multi_agent_spec(kModule + name);
}

rlx::AgentAction discrete(int agent, int64_t index) { return {agent, rlx::Action{index, nullptr, nullptr}}; }

}  // namespace

TEST_CASE("A PettingZoo-style Parallel env plays turns with per-agent masks through the bridge", "[envs][python][multi_agent]") {
  const rlx::MultiAgentEnvSpec& spec = python_multi_agent_env("TurnGame");
  REQUIRE(spec.agents.size() == 2);
  CHECK(spec.agents[1].id == "p1");
  CHECK(spec.agents[1].action_mask);
  CHECK(spec.agents[1].action_space == rlx::Space::discrete(3));
  CHECK(spec.agents[1].observation_space.kind == rlx::SpaceKind::kDict);  // the mask taken out, "observation" left
  auto env = rlx::global_env_registry().make_multi_agent(spec.id);
  const rlx::ObservationLayout& layout = env->observation_layout(1);
  REQUIRE(layout.float_slots == 2);
  REQUIRE(layout.mask_size == 3);

  env->reset(3);
  REQUIRE(env->acting() == std::vector<int>{0});
  std::vector<double> returns(2, 0.0);
  int64_t action = 0;
  while (!env->episode_done()) {
    const int mover = env->acting().front();
    env->step({discrete(mover, action)});
    for (int agent = 0; agent < 2; ++agent) returns[agent] += env->outcome(agent).reward;
    if (!env->episode_done()) {
      const int next = env->acting().front();
      const rlx::ObsRow obs = env->observation(next);
      CHECK(obs.floats[1] == static_cast<float>(action));       // the last action played
      CHECK(obs.bytes[layout.mask_offset + action] == 0);      // which the next player may not repeat
      CHECK(obs.bytes[layout.mask_offset + (action + 1) % 3] == 1);
    }
    action = (action + 1) % 3;
  }
  CHECK(env->elapsed_steps() == 4);
  CHECK(returns == std::vector<double>{1.0, -1.0});
  CHECK(env->outcome(0).terminated);
  CHECK(env->outcome(1).terminated);
  CHECK(env->observation(0).floats[0] == 2.0f);  // each player's final observation: its 2 turns
}

TEST_CASE("An RLlib-style env with other spaces per agent, a non-string id and __all__ runs through the bridge",
          "[envs][python][multi_agent]") {
  const rlx::MultiAgentEnvSpec& spec = python_multi_agent_env("RllibPair");
  REQUIRE(spec.agents.size() == 2);
  CHECK(spec.agents[0].id == "arm");
  CHECK(spec.agents[1].id == "7");
  CHECK(spec.agents[0].action_space.is_float_box());
  CHECK(spec.agents[1].observation_space == rlx::Space::discrete(5));
  auto env = rlx::global_env_registry().make_multi_agent(spec.id);
  env->reset(11);
  CHECK(env->observation(0).floats[0] == 11.0f);  // the seed reached reset(seed=)
  REQUIRE(env->acting() == std::vector<int>{0, 1});
  const float push[2] = {0.25f, 0.5f};
  for (int t = 1; t <= 3; ++t) {
    env->step({{0, rlx::Action{0, push, nullptr}}, discrete(1, 1)});
    CHECK(env->outcome(0).reward == 0.75);
    CHECK(env->outcome(1).reward == 1.0);
    CHECK(env->observation(1).floats[0] == static_cast<float>(t));
  }
  CHECK(env->episode_done());  // "__all__" in truncations ended both
  CHECK(env->outcome(0).truncated);
  CHECK(env->outcome(1).truncated);
  CHECK_FALSE(env->outcome(1).terminated);
}

TEST_CASE("A Python multi-agent env's mistakes name the env, the agent and the field", "[envs][python][multi_agent]") {
  const auto first_step = [](const std::string& name) {
    const rlx::MultiAgentEnvSpec& spec = python_multi_agent_env(name);
    auto env = rlx::global_env_registry().make_multi_agent(spec.id);
    env->reset(1);
    const float push[2] = {0.0f, 0.0f};
    env->step({{0, rlx::Action{0, push, nullptr}}, discrete(1, 0)});
  };
  REQUIRE_THROWS_AS(first_step("GhostRewardPair"), rlx::EnvOutputError);
  REQUIRE_THROWS_WITH(first_step("GhostRewardPair"),
                      Catch::Contains("python:multi_agent_envs:GhostRewardPair: step (episode step 1): rewards['ghost'] is for an "
                                      "agent not among possible_agents ['arm', 7]"));
  REQUIRE_THROWS_WITH(first_step("BadShapePair"),
                      Catch::Contains("python:multi_agent_envs:BadShapePair: step (episode step 1): observations['arm'] observation") &&
                          Catch::Contains("shape (2,)"));
}
