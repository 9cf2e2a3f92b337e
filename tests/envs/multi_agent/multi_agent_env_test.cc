// The multi-agent env API: MultiAgentCartPole is N CartPoles stepped side by side, and the
// contract's checks name the env and the agent for every way an env or its caller breaks it.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "envs/classic/cart_pole.h"
#include "envs/multi_agent/multi_agent_cart_pole.h"

namespace {

using rlx::AgentAction;
using rlx::MultiAgentOutput;

// Two players ("p0", "p1") with one float each, whose hooks each test writes; reset observes p0
// unless the test says otherwise.
class ScriptedEnv : public rlx::MultiAgentEnv {
 public:
  using Hook = std::function<void(MultiAgentOutput&, int step)>;

  explicit ScriptedEnv(Hook on_step, Hook on_reset = nullptr, int max_steps = 0)
      : MultiAgentEnv(spec(max_steps)), on_step_(std::move(on_step)), on_reset_(std::move(on_reset)) {}

  static rlx::MultiAgentEnvSpec spec(int max_steps) {
    rlx::MultiAgentEnvSpec spec;
    spec.id = "Scripted-v0";
    for (const char* id : {"p0", "p1"}) spec.agents.push_back({id, rlx::Space::box({1}, -10, 10), rlx::Space::discrete(2), false});
    spec.max_episode_steps = max_steps;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, MultiAgentOutput& out) override {
    if (on_reset_) return on_reset_(out, 0);
    out.observe(0)[0] = 0.0f;
  }
  void step_episode(const std::vector<AgentAction>&, MultiAgentOutput& out) override { on_step_(out, elapsed_steps() + 1); }

 private:
  Hook on_step_;
  Hook on_reset_;
};

// Turn taking: the player who did not act last is observed; a reward of 1 to the mover.
void take_turns(MultiAgentOutput& out, int step) {
  const int mover = (step + 1) % 2;
  out.add_reward(mover, 1.0);
  out.observe(1 - mover)[0] = static_cast<float>(step);
}

std::vector<AgentAction> act(const std::vector<int>& agents) {
  std::vector<AgentAction> actions;
  for (int agent : agents) actions.push_back({agent, rlx::Action{1, nullptr, nullptr}});
  return actions;
}

}  // namespace

TEST_CASE("MultiAgentCartPole steps each agent's CartPole as a CartPole-v1 seeded from the env", "[envs][multi_agent]") {
  const int n = 3;
  rlx::MultiAgentCartPoleEnv env(n);
  REQUIRE(env.spec().agents.size() == 3);
  REQUIRE(env.spec().agents[2].id == "agent_2");
  REQUIRE(env.spec().reward_threshold == Approx(475.0 * n));
  env.reset(7);
  REQUIRE(env.acting() == std::vector<int>{0, 1, 2});

  // The same episodes, one CartPole-v1 per agent, seeded as the env seeds them.
  rlx::Rng seeds(7);
  std::vector<std::unique_ptr<rlx::CartPoleEnv>> poles;
  std::vector<std::vector<float>> obs(n, std::vector<float>(4));
  for (int i = 0; i < n; ++i) {
    poles.push_back(std::make_unique<rlx::CartPoleEnv>());
    poles[i]->reset(seeds.next_u64(), obs[i].data());
    for (int k = 0; k < 4; ++k) REQUIRE(env.observation(i).floats[k] == obs[i][k]);
  }
  std::vector<double> returns(n, 0.0), expected(n, 0.0);
  int steps = 0;
  while (!env.episode_done()) {
    std::vector<AgentAction> actions;
    for (int agent : env.acting()) {
      // Agent i pushes the way its pole leans, badly for agent 0 (it falls soon) and well for the others.
      const bool right = (env.observation(agent).floats[2] > 0) != (agent == 0);
      actions.push_back({agent, rlx::Action{right ? 1 : 0, nullptr, nullptr}});
    }
    const std::vector<int> acted = env.acting();
    env.step(actions);
    ++steps;
    for (const AgentAction& a : actions) {
      const rlx::StepResult result = poles[a.agent]->step(a.action, obs[a.agent].data());
      expected[a.agent] += result.reward;
      REQUIRE(env.outcome(a.agent).terminated == result.terminated);
      REQUIRE(env.outcome(a.agent).truncated == result.truncated);
      REQUIRE(env.outcome(a.agent).observed);
      for (int k = 0; k < 4; ++k) REQUIRE(env.observation(a.agent).floats[k] == obs[a.agent][k]);
    }
    for (int i = 0; i < n; ++i) returns[i] += env.outcome(i).reward;
    // An agent whose pole fell earns nothing and is not asked to act again.
    for (int i = 0; i < n; ++i) {
      if (env.agent_done(i)) REQUIRE(std::find(env.acting().begin(), env.acting().end(), i) == env.acting().end());
    }
    REQUIRE(steps <= 500);
  }
  REQUIRE(returns == expected);
  REQUIRE(returns[0] < 50);    // the bad pusher fell early ...
  REQUIRE(returns[1] > returns[0]);  // ... and the others went on without it
  REQUIRE(steps == static_cast<int>(*std::max_element(returns.begin(), returns.end())));
  REQUIRE_THROWS_AS(rlx::MultiAgentCartPoleEnv(0), std::invalid_argument);
}

TEST_CASE("Turn-taking agents act in turn and earn between their turns", "[envs][multi_agent]") {
  ScriptedEnv env(take_turns);
  env.reset(1);
  REQUIRE(env.acting() == std::vector<int>{0});
  env.step(act({0}));
  REQUIRE(env.acting() == std::vector<int>{1});  // p1 enters at step 1
  REQUIRE(env.agent_entered(1));
  REQUIRE(env.outcome(0).reward == 1.0);
  REQUIRE_FALSE(env.outcome(0).observed);
  REQUIRE(env.observation(1).floats[0] == 1.0f);
  env.step(act({1}));
  REQUIRE(env.acting() == std::vector<int>{0});
  REQUIRE(env.outcome(1).reward == 1.0);
  REQUIRE(env.observation(0).floats[0] == 2.0f);
  REQUIRE(env.elapsed_steps() == 2);
}

TEST_CASE("The time limit truncates the live agents that entered, and ends the episode", "[envs][multi_agent]") {
  // p1 never enters: only p0 acts, so only p0 is cut off at step 3.
  ScriptedEnv env([](MultiAgentOutput& out, int step) { out.observe(0)[0] = static_cast<float>(step); }, nullptr, 3);
  env.reset(1);
  env.step(act({0}));
  env.step(act({0}));
  REQUIRE_FALSE(env.episode_done());
  env.step(act({0}));
  REQUIRE(env.outcome(0).truncated);
  REQUIRE(env.observation(0).floats[0] == 3.0f);  // the final observation, to bootstrap from
  REQUIRE_FALSE(env.outcome(1).truncated);
  REQUIRE_FALSE(env.agent_entered(1));
  REQUIRE(env.episode_done());
  REQUIRE(env.acting().empty());
  env.reset(std::nullopt);
  REQUIRE(env.acting() == std::vector<int>{0});
  REQUIRE_FALSE(env.agent_done(0));
}

TEST_CASE("A caller's wrong actions are refused naming the env and the agent", "[envs][multi_agent]") {
  ScriptedEnv env(take_turns);
  env.reset(1);
  REQUIRE_THROWS_WITH(env.step(act({1})), Catch::Contains("Scripted-v0") && Catch::Contains("an action for agent 'p1', which is not acting"));
  REQUIRE_THROWS_WITH(env.step({}), Catch::Contains("no action for agent 'p0', which is acting"));
  REQUIRE_THROWS_WITH(env.step(act({0, 0})), Catch::Contains("two actions for agent 'p0'"));
  REQUIRE_THROWS_WITH(env.step(act({5})), Catch::Contains("agent index 5 is outside the 2 agents"));
  env.step(act({0}));  // nothing above changed the env
  REQUIRE(env.acting() == std::vector<int>{1});
}

TEST_CASE("An env breaking the multi-agent contract is named with the agent, the call and the step", "[envs][multi_agent]") {
  using rlx::EnvContractError;
  const auto step_once = [](ScriptedEnv::Hook hook, ScriptedEnv::Hook reset = nullptr) {
    ScriptedEnv env(std::move(hook), std::move(reset));
    env.reset(1);
    env.step(act(env.acting()));
    env.step(act(env.acting()));
  };
  // p0 terminates at step 1, then the env still pays it.
  const auto pays_the_ended = [](MultiAgentOutput& out, int step) {
    if (step == 1) {
      out.terminate(0);
      out.observe(1)[0] = 0.0f;
    } else {
      out.add_reward(0, 1.0);
    }
  };
  REQUIRE_THROWS_WITH(step_once(pays_the_ended), Catch::Contains("Scripted-v0: step (episode step 2): a reward for agent 'p0', whose episode already ended"));
  REQUIRE_THROWS_AS(step_once(pays_the_ended), EnvContractError);
  REQUIRE_THROWS_WITH(step_once([](MultiAgentOutput& out, int) {
                        out.observe(0);
                        out.observe(0);
                      }),
                      Catch::Contains("agent 'p0' was observed twice in one step"));
  REQUIRE_THROWS_WITH(step_once([](MultiAgentOutput& out, int) { out.add_reward(0, 1.0); }),
                      Catch::Contains("no agent acts next, but the episode goes on for agent 'p0'"));
  REQUIRE_THROWS_WITH(step_once(take_turns, [](MultiAgentOutput& out, int) { out.add_reward(1, 1.0); }),
                      Catch::Contains("reset (episode step 0): a reward for agent 'p1' at reset"));
  REQUIRE_THROWS_WITH(step_once(take_turns, [](MultiAgentOutput&, int) {}), Catch::Contains("no agent was observed, so none can act"));
  REQUIRE_THROWS_WITH(step_once([](MultiAgentOutput& out, int) { out.observe(3); }), Catch::Contains("agent index 3 is outside the 2 agents"));
}

TEST_CASE("A multi-agent env's bad observations and rewards are EnvOutputErrors naming the agent", "[envs][multi_agent]") {
  const auto step_once = [](ScriptedEnv::Hook hook) {
    ScriptedEnv env(std::move(hook));
    env.reset(1);
    env.step(act({0}));
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  REQUIRE_THROWS_AS(step_once([&](MultiAgentOutput& out, int) { out.observe(1)[0] = nan; }), rlx::NonFiniteEnvOutput);
  REQUIRE_THROWS_WITH(step_once([&](MultiAgentOutput& out, int) { out.observe(1)[0] = nan; }),
                      Catch::StartsWith("Scripted-v0, agent 'p1': step (episode step 1): observation[0]"));
  REQUIRE_THROWS_WITH(step_once([](MultiAgentOutput& out, int) { out.observe(1); }),  // nothing written
                      Catch::Contains("agent 'p1'") && Catch::Contains("observation[0]"));
  REQUIRE_THROWS_WITH(step_once([](MultiAgentOutput& out, int) { out.observe(1)[1] = 1.0f; }),
                      Catch::StartsWith("Scripted-v0, agent 'p1': step (episode step 1): observation[1]"));
  REQUIRE_THROWS_AS(step_once([](MultiAgentOutput& out, int) {
                      out.add_reward(0, std::numeric_limits<double>::infinity());
                      out.observe(0)[0] = 1.0f;
                    }),
                    rlx::NonFiniteEnvOutput);
}

TEST_CASE("A multi-agent spec is validated naming the env and the agent", "[envs][multi_agent]") {
  rlx::MultiAgentEnvSpec spec = ScriptedEnv::spec(0);
  REQUIRE_NOTHROW(spec.validate());
  REQUIRE(spec.agent_index("p1") == 1);
  REQUIRE_FALSE(spec.agent_index("p9"));
  REQUIRE(spec.agent_env_spec(1).id == "Scripted-v0, agent 'p1'");

  rlx::MultiAgentEnvSpec repeated = spec;
  repeated.agents[1].id = "p0";
  REQUIRE_THROWS_WITH(repeated.validate(), Catch::Contains("'Scripted-v0'") && Catch::Contains("agent id 'p0' is repeated"));
  rlx::MultiAgentEnvSpec none = spec;
  none.agents.clear();
  REQUIRE_THROWS_WITH(none.validate(), Catch::Contains("has no agents"));
  rlx::MultiAgentEnvSpec bad_action = spec;
  bad_action.agents[1].action_space = rlx::Space::box({2}, 0, 1, rlx::ScalarType::kUint8);
  REQUIRE_THROWS_WITH(bad_action.validate(), Catch::Contains("Scripted-v0, agent 'p1'") && Catch::Contains("action_space"));
  REQUIRE_THROWS_AS(ScriptedEnv([](MultiAgentOutput&, int) {}, nullptr, -1), std::invalid_argument);
}
