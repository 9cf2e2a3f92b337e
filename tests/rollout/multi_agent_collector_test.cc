#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <vector>

#include "core/config_error.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/multi_agent_collector.h"
#include "rollout/policy_map.h"

using rlx::MultiAgentCollector;
using rlx::MultiAgentSetup;
using rlx::PolicyMap;
using rlx::SampleBatch;

namespace {

// "first" and "second" take turns for 4 env steps. The mover earns its action (0 or 1); the other
// agent loses 0.5 at the same step, while it waits. Observations count the steps. The fourth
// step terminates both.
class TakeTurns final : public rlx::MultiAgentEnv {
 public:
  TakeTurns() : MultiAgentEnv(spec()) {}
  static rlx::MultiAgentEnvSpec spec() {
    rlx::MultiAgentEnvSpec spec;
    spec.id = "TakeTurns";
    for (const char* id : {"first", "second"}) spec.agents.push_back({id, rlx::Space::box({1}, 0, 100), rlx::Space::discrete(2), false});
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::MultiAgentOutput& out) override { out.observe(0)[0] = 0.0f; }
  void step_episode(const std::vector<rlx::AgentAction>& actions, rlx::MultiAgentOutput& out) override {
    const int mover = actions.front().agent;
    out.add_reward(mover, static_cast<double>(actions.front().action.index));
    out.add_reward(1 - mover, -0.5);
    if (elapsed_steps() + 1 == 4) {
      out.terminate(0);
      out.terminate(1);
      return;
    }
    out.observe(1 - mover)[0] = static_cast<float>(elapsed_steps() + 1);
  }
};

// The policies a map asks for, freshly initialised (seeded by index).
struct Policies {
  std::vector<std::unique_ptr<rlx::RolloutPolicy>> owned;
  std::vector<rlx::RolloutPolicy*> borrowed;
  explicit Policies(const PolicyMap& map) {
    for (int p = 0; p < map.num_policies(); ++p) {
      rlx::ModelSpec spec = rlx::ModelSpec::for_env(map.policy_env_spec(p));
      spec.hidden_sizes = {8};
      owned.push_back(std::make_unique<rlx::ActorCriticPolicy>(spec, 17 + static_cast<uint64_t>(p)));
      borrowed.push_back(owned.back().get());
    }
  }
};

std::vector<std::unique_ptr<rlx::MultiAgentEnv>> take_turns(int count) {
  std::vector<std::unique_ptr<rlx::MultiAgentEnv>> envs;
  for (int i = 0; i < count; ++i) envs.push_back(std::make_unique<TakeTurns>());
  return envs;
}

MultiAgentSetup setup_of(std::map<std::string, nlohmann::json> policies, std::vector<rlx::PolicyMappingRule> mapping,
                         std::vector<std::string> to_train = {}) {
  MultiAgentSetup setup;
  setup.policies = std::move(policies);
  setup.policy_mapping = std::move(mapping);
  setup.policies_to_train = std::move(to_train);
  return setup;
}

}  // namespace

TEST_CASE("A turn-taking agent's transition runs from its action to its next turn, with every reward in between",
          "[rollout][multi_agent]") {
  const PolicyMap map(TakeTurns::spec(), MultiAgentSetup{});
  Policies policies(map);
  MultiAgentCollector collector(take_turns(1), map, policies.borrowed, /*fragment_length=*/2, 5);
  for (int step = 0; step < 4; ++step) collector.step();
  CHECK(collector.env_steps() == 4);
  CHECK(collector.agent_steps() == 4);
  std::vector<SampleBatch> fragments = collector.take_fragments(0);
  REQUIRE(fragments.size() == 2);  // one lane each, full at the episode's end
  CHECK(collector.ready_transitions(0) == 0);
  const SampleBatch& first = fragments[0].obs[0] == 0.0f ? fragments[0] : fragments[1];
  const SampleBatch& second = fragments[0].obs[0] == 0.0f ? fragments[1] : fragments[0];
  for (const SampleBatch* lane : {&first, &second}) {
    lane->validate();
    CHECK(lane->num_steps == 2);
    CHECK(lane->num_envs == 1);
    CHECK(lane->terminated == std::vector<uint8_t>{0, 1});
    CHECK(lane->final_obs_index == std::vector<int32_t>{1});
  }
  CHECK(first.worker_id != second.worker_id);  // each lane its own stream
  CHECK(first.obs == std::vector<float>{0.0f, 2.0f});
  CHECK(second.obs == std::vector<float>{1.0f, 3.0f});
  // Its own earning plus the other's turn's -0.5, except the last: the episode ended on its own move.
  const auto earned = [](const SampleBatch& lane, int t) { return static_cast<float>(lane.action_indices[static_cast<size_t>(t)]); };
  CHECK(first.rewards[0] == Approx(earned(first, 0) - 0.5f));
  CHECK(first.rewards[1] == Approx(earned(first, 1) - 0.5f));
  CHECK(second.rewards[0] == Approx(earned(second, 0) - 0.5f));
  CHECK(second.rewards[1] == Approx(earned(second, 1)));

  const std::vector<rlx::MultiAgentEpisode> episodes = collector.take_finished_episodes();
  REQUIRE(episodes.size() == 1);
  CHECK(episodes[0].length == 4);
  const double first_return = first.rewards[0] + first.rewards[1];
  const double second_return = second.rewards[0] + second.rewards[1] - 0.5;  // its -0.5 before its first action
  CHECK(episodes[0].agent_returns[0] == Approx(first_return));
  CHECK(episodes[0].agent_returns[1] == Approx(second_return));
  CHECK(episodes[0].total_return == Approx(first_return + second_return));
}

TEST_CASE("A frozen policy acts but records nothing, and steps are counted per policy", "[rollout][multi_agent]") {
  const PolicyMap map(TakeTurns::spec(), setup_of({{"learner", {}}, {"frozen", {}}},
                                                  {{"first", {"learner"}}, {"second", {"frozen"}}}, {"learner"}));
  REQUIRE(map.policy_names() == std::vector<std::string>{"frozen", "learner"});
  CHECK_FALSE(map.trains(0));
  CHECK(map.trains(1));
  Policies policies(map);
  MultiAgentCollector collector(take_turns(3), map, policies.borrowed, 2, 9);
  for (int step = 0; step < 8; ++step) collector.step();
  CHECK(collector.take_fragments(0).empty());
  CHECK(collector.take_fragments(1).size() == 6);  // 3 envs x 2 episodes, 2 turns each
  CHECK(collector.agent_steps(0) == 12);
  CHECK(collector.agent_steps(1) == 12);
  CHECK(collector.take_finished_episodes().size() == 6);
}

TEST_CASE("A random mapping draws each agent's policy per episode from the seed", "[rollout][multi_agent]") {
  const MultiAgentSetup setup = setup_of({{"a", {}}, {"b", {}}}, {{"*", {"a", "b"}}});
  const PolicyMap map(TakeTurns::spec(), setup);
  auto draws = [&](uint64_t seed) {
    Policies policies(map);
    MultiAgentCollector collector(take_turns(2), map, policies.borrowed, 2, seed);
    for (int step = 0; step < 40; ++step) collector.step();
    std::vector<int> drawn;
    for (const auto& episode : collector.take_finished_episodes()) drawn.insert(drawn.end(), episode.agent_policies.begin(), episode.agent_policies.end());
    return drawn;
  };
  const std::vector<int> drawn = draws(3);
  REQUIRE(drawn.size() == 40);  // 20 episodes x 2 agents
  CHECK(std::set<int>(drawn.begin(), drawn.end()) == std::set<int>{0, 1});
  CHECK(draws(3) == drawn);
  CHECK(draws(4) != drawn);
}

TEST_CASE("Every agent of MultiAgentCartPole gets a lane, and fragments are whole and valid", "[rollout][multi_agent]") {
  const rlx::MultiAgentEnvSpec spec = rlx::global_env_registry().multi_agent_spec("MultiAgentCartPole-v0");
  const PolicyMap map(spec, MultiAgentSetup{});
  Policies policies(map);
  std::vector<std::unique_ptr<rlx::MultiAgentEnv>> envs;
  for (int i = 0; i < 2; ++i) envs.push_back(rlx::global_env_registry().make_multi_agent("MultiAgentCartPole-v0"));
  MultiAgentCollector collector(std::move(envs), map, policies.borrowed, 8, 1);
  for (int step = 0; step < 8; ++step) collector.step();
  const std::vector<SampleBatch> fragments = collector.take_fragments(0);
  REQUIRE(fragments.size() == 8);  // 2 envs x 4 agents, none fallen within 8 steps
  std::set<uint64_t> lanes;
  for (const SampleBatch& fragment : fragments) {
    fragment.validate();
    CHECK(fragment.num_transitions() == 8);
    CHECK(fragment.log_probs.size() == 8);
    lanes.insert(fragment.worker_id);
  }
  CHECK(lanes.size() == 8);
}

TEST_CASE("A policy mapping that leaves an agent out, contradicts itself or mixes spaces is refused by name",
          "[rollout][multi_agent]") {
  const rlx::MultiAgentEnvSpec turns = TakeTurns::spec();
  // An exact id wins over patterns; two patterns that agree are fine.
  const PolicyMap agreeing(turns, setup_of({{"a", {}}, {"b", {}}}, {{"first", {"a"}}, {"sec*", {"b"}}, {"*", {"b"}}}));
  CHECK(agreeing.agents_of(0) == std::vector<int>{0});
  CHECK(agreeing.agents_of(1) == std::vector<int>{1});
  CHECK_THROWS_WITH(PolicyMap(turns, setup_of({{"a", {}}, {"b", {}}}, {{"first", {"a"}}})),
                    Catch::Contains("no entry covers agent 'second' of env 'TakeTurns' (its agents: first, second)"));
  CHECK_THROWS_WITH(PolicyMap(turns, setup_of({{"a", {}}, {"b", {}}}, {{"f*", {"a"}}, {"*t", {"b"}}, {"second", {"b"}}})),
                    Catch::Contains("agent 'first' of env 'TakeTurns' matches both 'f*' (a) and '*t' (b)"));
  CHECK_THROWS_WITH(PolicyMap(turns, setup_of({{"a", {}}, {"b", {}}}, {{"*", {"a"}}})),
                    Catch::Contains("policy 'b' drives no agent of env 'TakeTurns'"));
  rlx::MultiAgentEnvSpec mixed = turns;
  mixed.agents[1].action_space = rlx::Space::discrete(3);
  CHECK_THROWS_WITH(PolicyMap(mixed, MultiAgentSetup{}),
                    Catch::Contains("policy 'default_policy' drives agents 'first' and 'second'") &&
                        Catch::Contains("whose spaces differ") && Catch::Contains("Discrete(3)"));
  CHECK_THROWS_AS(PolicyMap(mixed, MultiAgentSetup{}), rlx::ConfigError);
}

TEST_CASE("A shuffle deals each agent one of its policies per episode, from the seed", "[rollout][multi_agent]") {
  const PolicyMap map(TakeTurns::spec(), setup_of({{"a", {}}, {"b", {}}}, {{"*", {"a", "b"}, true}}));
  Policies policies(map);
  MultiAgentCollector collector(take_turns(1), map, policies.borrowed, 2, 11);
  for (int step = 0; step < 80; ++step) collector.step();
  int first_a = 0;
  const auto episodes = collector.take_finished_episodes();
  REQUIRE(episodes.size() == 20);
  for (const auto& episode : episodes) {
    CHECK(episode.agent_policies[0] != episode.agent_policies[1]);  // one of each
    first_a += episode.agent_policies[0] == 0 ? 1 : 0;
  }
  CHECK(first_a > 3);
  CHECK(first_a < 17);
  CHECK_THROWS_WITH(PolicyMap(TakeTurns::spec(), setup_of({{"a", {}}, {"b", {}}, {"c", {}}}, {{"*", {"a", "b", "c"}, true}})),
                    Catch::Contains("'*' deals 3 policies to the 2 agents"));
}
