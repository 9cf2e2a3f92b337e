// Multi-agent envs in the registry: built-in and from a plugin, ids shared with single-agent envs,
// and the error when a command asks for the other kind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "envs/multi_agent/multi_agent_cart_pole.h"
#include "envs/plugin_loader.h"
#include "envs/registry.h"

TEST_CASE("MultiAgentCartPole-v0 is a built-in multi-agent env of 4 agents", "[envs][multi_agent]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  REQUIRE(registry.contains("MultiAgentCartPole-v0"));
  REQUIRE(registry.multi_agent_spec("MultiAgentCartPole-v0").agents.size() == 4);
  std::unique_ptr<rlx::MultiAgentEnv> env = registry.make_multi_agent("MultiAgentCartPole-v0");
  env->reset(3);
  REQUIRE(env->acting().size() == 4);
  // Asked for as a single-agent env, it says what it is.
  REQUIRE_THROWS_AS(registry.spec("MultiAgentCartPole-v0"), rlx::UnknownEnvError);
  REQUIRE_THROWS_WITH(registry.spec("MultiAgentCartPole-v0"),
                      Catch::Contains("environment 'MultiAgentCartPole-v0' is multi-agent, not single-agent as this needs"));
  REQUIRE_THROWS_WITH(registry.make_multi_agent("CartPole-v1"), Catch::Contains("environment 'CartPole-v1' is single-agent, not multi-agent"));
  REQUIRE_THROWS_WITH(registry.multi_agent_spec("MultiAgentCartPole-v9"),
                      Catch::Contains("unknown multi-agent environment id") && Catch::Contains("did you mean 'MultiAgentCartPole-v0'"));
  const std::vector<std::string> single_agent_ids = registry.ids();
  REQUIRE(std::find(single_agent_ids.begin(), single_agent_ids.end(), "MultiAgentCartPole-v0") == single_agent_ids.end());
}

TEST_CASE("MultiAgentCartPole2-v0 is the same env with 2 agents, for RLlib's PPO example", "[envs][multi_agent]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  const rlx::MultiAgentEnvSpec spec = registry.multi_agent_spec("MultiAgentCartPole2-v0");
  REQUIRE(spec.id == "MultiAgentCartPole2-v0");
  REQUIRE(spec.agents.size() == 2);
  REQUIRE(spec.agents[0].id == "agent_0");
  REQUIRE(spec.agents[1].id == "agent_1");
  REQUIRE(spec.reward_threshold == 475.0 * 2);
  // Each agent is the 4-agent env's agent: same spaces.
  const rlx::MultiAgentEnvSpec four = registry.multi_agent_spec("MultiAgentCartPole-v0");
  REQUIRE(spec.agents[0] == four.agents[0]);
  REQUIRE(spec.agents[1] == four.agents[1]);

  std::unique_ptr<rlx::MultiAgentEnv> env = registry.make_multi_agent("MultiAgentCartPole2-v0");
  env->reset(7);
  REQUIRE(env->acting() == std::vector<int>{0, 1});
  double summed_return = 0.0;
  int steps = 0;
  while (!env->episode_done()) {  // push right always: both poles fall within a few dozen steps
    std::vector<rlx::AgentAction> actions;
    for (int agent : env->acting()) actions.push_back(rlx::AgentAction{agent, rlx::Action{1, nullptr, nullptr}});
    env->step(actions);
    for (int agent = 0; agent < 2; ++agent) summed_return += env->outcome(agent).reward;
    REQUIRE(++steps < 500);
  }
  REQUIRE(env->outcome(0).terminated);
  REQUIRE(env->outcome(1).terminated);
  REQUIRE(summed_return >= 2.0);
}

TEST_CASE("Multi-agent ids are unique across both kinds and instances must carry their spec", "[envs][multi_agent]") {
  rlx::EnvRegistry registry;
  registry.add_multi_agent(rlx::MultiAgentCartPoleEnv::default_spec(2), [] { return std::make_unique<rlx::MultiAgentCartPoleEnv>(2); });
  rlx::EnvSpec clash;
  clash.id = "MultiAgentCartPole-v0";
  clash.observation_space = rlx::Space::box({1}, 0, 1);
  clash.action_space = rlx::Space::discrete(2);
  REQUIRE_THROWS_WITH(registry.add(clash, [] { return std::unique_ptr<rlx::Env>(); }), Catch::Contains("already registered"));
  REQUIRE_THROWS_WITH(registry.add_multi_agent(rlx::MultiAgentCartPoleEnv::default_spec(2), [] { return std::make_unique<rlx::MultiAgentCartPoleEnv>(2); }),
                      Catch::Contains("already registered"));

  rlx::EnvRegistry lying;  // registers 2 agents, makes 3
  lying.add_multi_agent(rlx::MultiAgentCartPoleEnv::default_spec(2), [] { return std::make_unique<rlx::MultiAgentCartPoleEnv>(3); });
  REQUIRE_THROWS_AS(lying.make_multi_agent("MultiAgentCartPole-v0"), rlx::EnvContractError);
  REQUIRE_THROWS_WITH(lying.make_multi_agent("MultiAgentCartPole-v0"), Catch::Contains("an instance's spec differs from the registered one"));
}

TEST_CASE("A plugin registers a multi-agent env that then plays by the contract", "[envs][multi_agent][plugins]") {
  rlx::EnvRegistry registry;
  rlx::load_env_plugin(RLX_TEST_PLUGIN_MULTI_AGENT, registry);
  REQUIRE(registry.multi_agent_ids() == std::vector<std::string>{"PluginTurns-v0"});
  REQUIRE(registry.ids().empty());
  std::unique_ptr<rlx::MultiAgentEnv> env = registry.make_multi_agent("PluginTurns-v0");
  env->reset(0);
  std::vector<double> returns(2, 0.0);
  while (!env->episode_done()) {
    REQUIRE(env->acting().size() == 1);
    env->step({{env->acting().front(), rlx::Action{0, nullptr, nullptr}}});
    for (int agent = 0; agent < 2; ++agent) returns[agent] += env->outcome(agent).reward;
  }
  REQUIRE(env->elapsed_steps() == 6);  // the time limit ended it, truncating both players
  REQUIRE(env->outcome(0).truncated);
  REQUIRE(env->outcome(1).truncated);
  REQUIRE(returns == std::vector<double>{3.0, 3.0});
  REQUIRE(env->observation(1).floats[0] == 5.0f);  // second's last observation, from step 5

  // Loading it again into the same registry is refused as a taken id, leaving the registry as it was.
  REQUIRE_THROWS_WITH(rlx::load_env_plugin(RLX_TEST_PLUGIN_MULTI_AGENT, registry), Catch::Contains("'PluginTurns-v0' is already registered"));
  REQUIRE(registry.multi_agent_ids().size() == 1);
}
